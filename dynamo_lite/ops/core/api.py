"""The public ``dl.*`` functions: the ``__all__`` of every ops module (and of tensor interop)."""
from ..tensor.interop import *  # noqa: F401,F403
from ..tensor import interop as _interop
from .conversions import *  # noqa: F401,F403
from .views import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from .factories import *  # noqa: F401,F403
from .pointwise import *  # noqa: F401,F403
from .unary import *  # noqa: F401,F403
from .comparison import *  # noqa: F401,F403
from .reductions import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .linalg import *  # noqa: F401,F403
from .shape_ops import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .nn_ops import *  # noqa: F401,F403
from . import (
    comparison as _comparison, conv as _conv, conversions as _conversions, factories as _factories,
    indexing as _indexing, linalg as _linalg, nn_ops as _nn_ops, normalization as _normalization,
    pointwise as _pointwise, reductions as _reductions, shape_ops as _shape_ops, unary as _unary,
    views as _views,
)

API_MODULES = (
    _interop, _conversions, _views, _indexing, _factories, _pointwise, _unary, _comparison,
    _reductions, _normalization, _linalg, _shape_ops, _conv, _nn_ops,
)
# Tensor functions ported from torch's API, one module per family.
from .math_ops import *  # noqa: F401,F403,E402
from .contractions import *  # noqa: F401,F403,E402
from .rearrange import *  # noqa: F401,F403,E402
from .sorting import *  # noqa: F401,F403,E402
from .scattering import *  # noqa: F401,F403,E402
from .selection import *  # noqa: F401,F403,E402
from .random_ops import *  # noqa: F401,F403,E402
from . import contractions as _contractions, math_ops as _math_ops, rearrange as _rearrange  # noqa: E402
from . import random_ops as _random_ops, scattering as _scattering, selection as _selection, sorting as _sorting  # noqa: E402

API_MODULES += (_math_ops, _contractions, _rearrange, _sorting, _scattering, _selection, _random_ops)
from .adaptive_pool import *  # noqa: F401,F403,E402
from .conv_transpose import *  # noqa: F401,F403,E402
from .embedding_bags import *  # noqa: F401,F403,E402
from .resample import *  # noqa: F401,F403,E402
from . import adaptive_pool as _adaptive_pool, conv_transpose as _conv_transpose  # noqa: E402
from . import embedding_bags as _embedding_bags, resample as _resample  # noqa: E402

API_MODULES += (_adaptive_pool, _conv_transpose, _embedding_bags, _resample)
from .complex_ops import *  # noqa: F401,F403,E402
from .tensor_functions import *  # noqa: F401,F403,E402
from . import complex_ops as _complex_ops, tensor_functions as _tensor_functions  # noqa: E402

API_MODULES += (_complex_ops, _tensor_functions)
__all__ = sorted({name for module in API_MODULES for name in module.__all__})
from .order_stats import *  # noqa: F401,F403,E402
from .differences import *  # noqa: F401,F403,E402
from .special_ops import *  # noqa: F401,F403,E402
from . import differences as _differences, matrix_solve as _matrix_solve, order_stats as _order_stats  # noqa: E402
from . import special_ops as _special_ops  # noqa: E402

API_MODULES += (_order_stats, _differences, _matrix_solve, _special_ops)
__all__ = sorted({name for module in API_MODULES for name in module.__all__})
from .port_pointwise import *  # noqa: F401,F403,E402
from .gamma_functions import *  # noqa: F401,F403,E402
from .port_reductions import *  # noqa: F401,F403,E402
from . import gamma_functions as _gamma_functions, port_pointwise as _port_pointwise  # noqa: E402
from . import port_reductions as _port_reductions  # noqa: E402

API_MODULES += (_port_pointwise, _gamma_functions, _port_reductions)
__all__ = sorted({name for module in API_MODULES for name in module.__all__})
from .port_shapes import *  # noqa: F401,F403,E402
from . import port_shapes as _port_shapes  # noqa: E402

API_MODULES += (_port_shapes,)
__all__ = sorted({name for module in API_MODULES for name in module.__all__})
from .port_linalg import *  # noqa: F401,F403,E402
from . import port_linalg as _port_linalg  # noqa: E402

API_MODULES += (_port_linalg,)
__all__ = sorted({name for module in API_MODULES for name in module.__all__})
