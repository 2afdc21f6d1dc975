"""The Cholesky factorization as a registry op (``linalg_cholesky``), with torch's checks and messages."""
from __future__ import annotations

import numpy as np

from ..core import meta_rules as mr
from .matrix_solve import LinAlgError, _check_square as check_square
from ..core.registry import register_op


def cholesky_meta(a, upper=False):
    check_square("linalg.cholesky", a)
    return mr.make_meta(a._sizes, a._dtype, None, a._device)


def _first_failing_minor(matrix) -> int:
    """The order of the first leading minor that is not positive-definite (what LAPACK reports)."""
    for order in range(1, matrix.shape[0] + 1):
        try:
            np.linalg.cholesky(matrix[:order, :order])
        except np.linalg.LinAlgError:
            return order
    return matrix.shape[0]


def _not_positive_definite(a) -> LinAlgError:
    """torch's message for the first matrix of a batch that has no Cholesky factor."""
    host = a.get() if hasattr(a, "get") else a
    flat = host.reshape((-1,) + host.shape[-2:])
    for i, matrix in enumerate(flat):
        try:
            np.linalg.cholesky(matrix)
        except np.linalg.LinAlgError:
            prefix = f"(Batch element {i}): " if host.ndim > 2 else ""
            return LinAlgError(f"linalg.cholesky: {prefix}The factorization could not be completed because the "
                               f"input is not positive-definite (the leading minor of order "
                               f"{_first_failing_minor(matrix)} is not positive-definite).")
    return LinAlgError("linalg.cholesky: the input is not positive-definite.")


def cholesky_kernel(xp, a, upper=False, *, out):
    """Only the lower triangle of ``a`` is read, as LAPACK (and torch) do."""
    lower = xp.tril(a)
    symmetric = lower + xp.swapaxes(xp.tril(a, -1), -1, -2)
    try:
        factor = xp.linalg.cholesky(symmetric)
    except Exception as exc:  # numpy's (and CuPy's) LinAlgError
        raise _not_positive_definite(symmetric) from exc
    if not bool(xp.all(xp.isfinite(factor))):  # CuPy fills NaN instead of raising
        raise _not_positive_definite(symmetric)
    out[...] = xp.swapaxes(factor, -1, -2) if upper else factor
    return out


OPS = {"linalg_cholesky": register_op("linalg_cholesky", meta=cholesky_meta, kernel=cholesky_kernel)}

METHODS: dict = {}
