"""dl.linalg: norms (vector, matrix), inverse, linear solves and the Cholesky factorization.

Example:
    >>> dl.linalg.solve(dl.eye(2) * 2, dl.ones(2)).tolist()
    [0.5, 0.5]
"""
from __future__ import annotations

from .ops.reductions import reductions
from .ops.linalg.linalg import norm as _vector_norm
from .ops.linalg.cholesky_factor import OPS as CHOLESKY_OPS
from .ops.linalg.matrix_solve import OPS, LinAlgError
from .linalg_decompositions import *  # noqa: F401,F403  (svd, eigh, qr, det, slogdet, pinv ...)
from . import linalg_decompositions as _decompositions

__all__ = ["LinAlgError", "cholesky", "inv", "matrix_norm", "norm", "solve", "vector_norm"] + _decompositions.__all__

INF = float("inf")


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The ``ord``-norm of ``x`` over ``dim`` (all elements by default), ``x`` taken as a vector.

    Example:
        >>> dl.linalg.vector_norm(dl.tensor([3.0, 4.0])).item()
        5.0
    """
    return _vector_norm(x if dtype is None else x.to(dtype), ord, dim, keepdim)


#: Matrix norms read from absolute sums: of columns (1, -1) or of rows (inf, -inf); max for positive orders.
_SUM_NORMS = (1, -1, INF, -INF)
#: Matrix norms read from the singular values.
_SINGULAR_VALUE_NORMS = {"nuc": lambda s: s.sum(-1), 2: lambda s: s.amax(-1), -2: lambda s: s.amin(-1)}


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """The Frobenius norm (``"fro"``), the 1 / inf norms (max column / row sums; -1 / -inf the min), the
    nuclear norm (``"nuc"``: the sum of singular values) or the spectral norms (2 / -2: the largest / smallest).

    Example:
        >>> dl.linalg.matrix_norm(dl.tensor([[1.0, -2.0], [3.0, 4.0]]), 1).item()
        6.0
    """
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {dim}")
    A = A if dtype is None else A.to(dtype)
    if ord == "fro":
        return _vector_norm(A, 2, tuple(dim), keepdim)
    if ord not in _SUM_NORMS and ord not in _SINGULAR_VALUE_NORMS:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    rows, cols = (d % A.dim() for d in dim)
    if ord in _SINGULAR_VALUE_NORMS:
        values = _decompositions.svdvals(A.movedim((rows, cols), (-2, -1)))
        result = _SINGULAR_VALUE_NORMS[ord](values)
        return result.unsqueeze(min(rows, cols)).unsqueeze(max(rows, cols)) if keepdim else result
    summed_dim, reduced_dim = (rows, cols) if abs(ord) == 1 else (cols, rows)
    sums = A.abs().sum(summed_dim, keepdim=True)
    result = (reductions.amax if ord > 0 else reductions.amin)(sums, reduced_dim, True)
    return result if keepdim else result.squeeze((rows, cols))


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A vector norm, or a matrix norm when ``ord`` is a string or ``dim`` a pair (``ord`` with no
    ``dim`` on a 2-D input also means a matrix norm).

    Example:
        >>> dl.linalg.norm(dl.tensor([[3.0, 0.0], [0.0, 4.0]])).item()
        5.0
    """
    if dim is not None and not isinstance(dim, (tuple, list)):
        dim = (dim,)
    if ord is None:
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if dim is None and A.dim() not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                           f"Got {A.dim()}D.")
    matrix = isinstance(ord, str) or (dim is not None and len(dim) == 2) or (dim is None and A.dim() == 2)
    if matrix:
        return matrix_norm(A, ord, (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
    return vector_norm(A, ord, dim, keepdim, dtype=dtype)


def inv(A):
    """The inverse of each square matrix of ``A`` (..., n, n).

    Raises:
        LinAlgError: a singular matrix (naming its first zero pivot).

    Example:
        >>> dl.linalg.inv(dl.tensor([[2.0, 0.0], [0.0, 4.0]])).tolist()
        [[0.5, 0.0], [0.0, 0.25]]
    """
    return OPS["linalg_inv"](A)


def solve(A, B, *, left=True):
    """``X`` with ``A @ X = B`` (or ``X @ A = B`` when ``left=False``); ``B`` may be a vector (or a batch of them).

    Example:
        >>> dl.linalg.solve(dl.tensor([[2.0, 0.0], [0.0, 4.0]]), dl.tensor([1.0, 1.0])).tolist()
        [0.5, 0.25]
    """
    if not left:
        return solve(A.transpose(-2, -1), B.transpose(-2, -1)).transpose(-2, -1)
    vector = B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    if vector:
        return OPS["linalg_solve"](A, B.unsqueeze(-1)).squeeze(-1)
    return OPS["linalg_solve"](A, B)


def cholesky(A, *, upper=False):
    """The lower (or ``upper=True``: upper) triangular factor ``L`` of each symmetric positive-definite
    matrix of ``A`` (..., n, n), with ``A = L @ L.mT``. Only ``A``'s lower triangle is read.

    Raises:
        LinAlgError: a matrix that is not positive-definite (naming its first failing leading minor).

    Example:
        >>> dl.linalg.cholesky(dl.tensor([[4.0, 2.0], [2.0, 2.0]])).tolist()
        [[2.0, 0.0], [1.0, 1.0]]
    """
    return CHOLESKY_OPS["linalg_cholesky"](A, upper) if upper else CHOLESKY_OPS["linalg_cholesky"](A)
from .ops.linalg.products import linalg_cross as cross, matrix_exp  # noqa: E402  (dl.linalg.cross/matrix_exp)
