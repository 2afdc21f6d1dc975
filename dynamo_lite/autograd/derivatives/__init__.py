"""The derivative table, one module per family of ops (importing them fills DERIVATIVES)."""
from . import linalg, nn, pointwise, reductions, scatter, shapes, windows  # noqa: F401
from . import complex_numbers, spectral  # noqa: F401
from .table import (
    DECOMPOSITIONS, DERIVATIVES, NOT_DIFFERENTIABLE, Derivative, decomposition, derivative, lookup,
)

__all__ = ["DECOMPOSITIONS", "DERIVATIVES", "decomposition", "NOT_DIFFERENTIABLE", "Derivative", "derivative", "lookup"]
