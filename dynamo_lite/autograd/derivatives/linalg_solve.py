"""Derivatives of linalg_inv and linalg_solve (real matrices)."""
from __future__ import annotations

from .helpers import OPS, transpose_last
from .table import derivative


@derivative("linalg_inv", saves=("result",))
def inv_backward(grad, a, result=None):
    inverse_t = transpose_last(result)
    return OPS["neg"](OPS["matmul"](OPS["matmul"](inverse_t, grad), inverse_t))


@derivative("linalg_solve", saves=("a", "result"))
def solve_backward(grad, a, b, result=None):
    grad_b = OPS["linalg_solve"](transpose_last(a), grad)
    return OPS["neg"](OPS["matmul"](grad_b, transpose_last(result))), grad_b
