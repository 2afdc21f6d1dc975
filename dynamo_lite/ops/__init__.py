"""The op registry: each op declared once (meta rule + kernel), plus the Tensor methods built on it.

Importing this package registers every op and installs the Tensor methods and operators.
Registry ops are attributes of the package: ``dynamo_lite.ops.add`` is the ``Op`` named
"add" (call it like a function; it dispatches eagerly or records while tracing), whereas
``dl.add`` is the public function that normalizes arguments before calling it.
"""
from . import registry
from .registry import REGISTRY, Op, get_op, register_op
from . import (  # noqa: F401  (importing a module registers its ops)
    conversions, views, indexing, factories,
    pointwise, unary, comparison, reductions, normalization, linalg, shape_ops, conv, nn_ops,
)
from . import math_ops, contractions, rearrange, sorting, scattering, selection, random_ops  # noqa: F401,E402  (tensor functions ported from torch's API)
from . import adaptive_pool, conv_transpose, embedding_bags, resample  # noqa: F401,E402  (nn layers' ops)
from . import window_grads  # noqa: F401,E402  (the adjoint ops derivative formulas call)
from . import complex_ops, tensor_functions  # noqa: F401,E402  (complex numbers; type queries)
from . import order_stats, differences, matrix_solve, special_ops  # noqa: F401,E402  (median, quantile, diff, rot90, cdist, linalg)
from .methods import TENSOR_METHODS, install_tensor_methods

install_tensor_methods()


def __getattr__(name: str):
    """``dynamo_lite.ops.<name>`` is the registry op of that name."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute or op {name!r}") from None


def __dir__():
    return sorted(set(globals()) | set(REGISTRY))
from . import cholesky_factor  # noqa: F401,E402  (linalg.cholesky)
from . import port_pointwise, gamma_functions, port_reductions  # noqa: F401,E402  (torch ops for porting, group 1)
from . import matrix_decompositions  # noqa: F401,E402  (linalg.svd, eigh, qr, det, slogdet)
from . import autocast_policy  # noqa: F401,E402  (plugs dl.autocast's casts into dispatch)
from . import spectral  # noqa: F401,E402  (the fft ops behind dl.fft)
from . import port_shapes  # noqa: F401,E402  (torch ops for porting, group 2: splits, take, index_add, diagonal ...)
from . import port_linalg  # noqa: F401,E402  (torch ops for porting, group 3: inner, cross, mv, trace, matrix_exp, cov ...)
