"""Derivative of linalg_cholesky (real matrices)."""
from __future__ import annotations

from .helpers import OPS, transpose_last
from .table import derivative


@derivative("linalg_cholesky", saves=("result",))
def cholesky_backward(grad, a, upper=False, result=None):
    """With ``A = L L^T``: ``gA = sym(L^-T Phi(L^T gL) L^-1)``, Phi keeping the lower triangle with half its diagonal.

    Only ``A``'s lower triangle is read by the forward, but torch (and dynamo_lite) return the
    symmetric gradient, which is what a symmetric input perturbed symmetrically sees.
    """
    lower = transpose_last(result) if upper else result
    grad_lower = transpose_last(grad) if upper else grad
    n = lower._sizes[-1]
    half_diagonal = OPS["sub"](OPS["ones"](size=(n, n), dtype=lower._dtype, device=lower._device),
                               OPS["mul"](OPS["eye"](n=n, m=n, dtype=lower._dtype, device=lower._device), 0.5))
    phi = OPS["mul"](OPS["tril"](OPS["matmul"](transpose_last(lower), grad_lower)), half_diagonal)
    inverse = OPS["linalg_inv"](lower)
    middle = OPS["matmul"](OPS["matmul"](transpose_last(inverse), phi), inverse)
    return OPS["mul"](OPS["add"](middle, transpose_last(middle)), 0.5)
