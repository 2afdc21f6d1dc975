"""The op registry: each op declared once (meta rule + kernel), plus the Tensor methods built on it.

Importing this package registers every op and installs the Tensor methods and operators.
Registry ops are attributes of the package: ``dynamo_lite.ops.add`` is the ``Op`` named
"add" (call it like a function; it dispatches eagerly or records while tracing), whereas
``dl.add`` is the public function that normalizes arguments before calling it.
"""
from .core import registry
from .core.registry import REGISTRY, Op, get_op, register_op
# Importing a module registers its ops; the order is the one the ops were first written in.
from .creation import conversions  # noqa: F401
from .shape import views, indexing  # noqa: F401
from .creation import factories  # noqa: F401
from .pointwise import pointwise, unary, comparison  # noqa: F401
from .reductions import reductions, normalization  # noqa: F401
from .linalg import linalg  # noqa: F401
from .shape import shape_ops  # noqa: F401
from .nn import conv, nn_ops  # noqa: F401
from .pointwise import math_ops  # noqa: F401
from .linalg import contractions  # noqa: F401
from .shape import rearrange  # noqa: F401
from .reductions import sorting  # noqa: F401
from .shape import scattering, selection  # noqa: F401
from .random import sampling  # noqa: F401
from .nn import adaptive_pool, conv_transpose, embedding_bags, resample  # noqa: F401  (nn layers' ops)
from .nn import window_grads  # noqa: F401  (the adjoint ops derivative formulas call)
from .core import inplace_twins  # noqa: F401  (Tensor.triu_, eq_, t_ ...: NOTE: [in-place twins])
from .nn import class_targets  # noqa: F401  (a loss's class targets checked: NOTE: [loss target bounds])
from .pointwise import complex_ops  # noqa: F401
from .creation import tensor_functions  # noqa: F401  (type queries)
from .reductions import order_stats  # noqa: F401  (median, quantile)
from .shape import differences  # noqa: F401  (diff, rot90, cdist)
from .linalg import matrix_solve  # noqa: F401
from .pointwise import special_ops  # noqa: F401  (erfc)
from .linalg import cholesky_factor  # noqa: F401  (linalg.cholesky)
from .pointwise import float_functions, gamma_functions  # noqa: F401  (logaddexp, copysign ...; lgamma, digamma ...)
from .reductions import scans_and_stats  # noqa: F401  (nansum, cummax, logcumsumexp, histc, trapezoid ...)
from .linalg import matrix_decompositions  # noqa: F401  (linalg.svd, eigh, qr, det, slogdet)
from .autocast import policy as _autocast_policy  # noqa: F401  (plugs dl.autocast's casts into dispatch)
from . import spectral  # noqa: F401  (the fft ops behind dl.fft)
from .shape import diagonals, splits, index_functions  # noqa: F401  (diagonal, tensor_split, take, index_add ...)
from .creation import buffers  # noqa: F401  (asarray, frombuffer)
from .linalg import products  # noqa: F401  (inner, cross, mv, trace, matrix_exp, cov ...)
from .core.methods import TENSOR_METHODS, install_tensor_methods

install_tensor_methods()


def __getattr__(name: str):
    """``dynamo_lite.ops.<name>`` is the registry op of that name."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute or op {name!r}") from None


def __dir__():
    return sorted(set(globals()) | set(REGISTRY))
