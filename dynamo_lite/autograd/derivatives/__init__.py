"""The derivative table, one module per family of ops (importing them fills DERIVATIVES)."""
from . import linalg, nn, pointwise, reductions, scatter, shapes, windows  # noqa: F401
from . import complex_numbers  # noqa: F401,E402
from .table import DECOMPOSITIONS, DERIVATIVES, NOT_DIFFERENTIABLE, Derivative, decomposition, derivative, lookup

__all__ = ["DECOMPOSITIONS", "DERIVATIVES", "decomposition", "NOT_DIFFERENTIABLE", "Derivative", "derivative", "lookup"]
from . import order_stats  # noqa: F401,E402  (kthvalue, median)
from . import linalg_solve  # noqa: F401,E402  (linalg.inv, linalg.solve)
from . import cholesky  # noqa: F401,E402  (linalg.cholesky)
from . import port_ops  # noqa: F401,E402  (logaddexp, copysign, fmax, gamma family, cummax, logcumsumexp)
from . import matrix_decompositions  # noqa: F401,E402  (linalg.svd, eigh, qr, det, slogdet)
from . import spectral  # noqa: F401,E402  (the fft ops)
