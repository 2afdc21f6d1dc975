"""dl.nn.functional: the layers' computations as functions, one module per family (thin wrappers over registry ops).

NOTE: [functional wrappers] Every function here only adapts torch.nn.functional's
signature (argument order, defaults such as ``padding_idx=None``, an implicit softmax
dim) and calls the public ``dl.*`` functions, which normalise geometry and call the
registry ops; none touches array data. The compiler therefore
traces straight through them (see NOTE: [tracing through library code]), and the
layers' ``forward`` methods, which call these, inline into one graph.
"""
# The modules first: a star import then rebinds the names they share with a function (linear, dropout).
from . import activation as _activation, linear as _linear, conv as _conv, pooling as _pooling, padding as _padding
from . import dropout as _dropout, normalization as _normalization, distance as _distance, sparse as _sparse, loss as _loss
from . import margin_loss as _margin_loss, vision as _vision, attention as _attention, ctc as _ctc
from .activation import *  # noqa: F401,F403,E402
from .linear import *  # noqa: F401,F403,E402
from .conv import *  # noqa: F401,F403,E402
from .pooling import *  # noqa: F401,F403,E402
from .padding import *  # noqa: F401,F403,E402
from .dropout import *  # noqa: F401,F403,E402
from .normalization import *  # noqa: F401,F403,E402
from .distance import *  # noqa: F401,F403,E402
from .sparse import *  # noqa: F401,F403,E402
from .loss import *  # noqa: F401,F403,E402
from .margin_loss import *  # noqa: F401,F403,E402
from .vision import *  # noqa: F401,F403,E402
from .attention import *  # noqa: F401,F403,E402
from .ctc import *  # noqa: F401,F403,E402

__all__ = sorted({name for module in (
    _activation, _linear, _conv, _pooling, _padding, _dropout, _normalization,
    _distance, _sparse, _loss, _margin_loss, _vision, _attention, _ctc,
) for name in module.__all__})
