"""Matrix inverse and linear solves as registry ops (``linalg_inv``, ``linalg_solve``), with torch's checks."""
from __future__ import annotations

import numpy as np

from ...tensor.layout import broadcast_shapes
from ..core import meta_rules as mr
from ..core.registry import register_op

__all__: list = []  # the public functions live in dl.linalg


class LinAlgError(RuntimeError):
    """A linear-algebra failure on valid input (a singular matrix), like torch's ``linalg.LinAlgError``."""


def _check_square(name, a):
    if len(a._sizes) < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if a._sizes[-1] != a._sizes[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{a._sizes[-2]} by {a._sizes[-1]} matrices")
    if not a._dtype.is_floating_point:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {mr.TYPE_NAMES[a._dtype]}")


def inv_meta(a):
    _check_square("linalg.inv", a)
    return mr.make_meta(a._sizes, a._dtype, None, a._device)


def solve_meta(a, b):
    """``a`` (..., n, n) and ``b`` (..., n, k): the batch dims broadcast."""
    _check_square("linalg.solve", a)
    mr.common_device((a, b))
    if b._sizes[-2] != a._sizes[-1]:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({a._sizes[-2]}x{a._sizes[-1]} and {b._sizes[-2]}x{b._sizes[-1]})")
    if a._dtype != b._dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{mr.TYPE_NAMES[a._dtype]} and B of type {mr.TYPE_NAMES[b._dtype]} instead")
    batch = broadcast_shapes(tuple(a._sizes[:-2]), tuple(b._sizes[:-2]))
    return mr.make_meta(tuple(batch) + tuple(b._sizes[-2:]), a._dtype, None, a._device)


def _first_zero_pivot(matrix) -> int:
    """The 1-based position of the first zero pivot of LU with partial pivoting (what LAPACK reports)."""
    work = np.array(matrix, dtype=np.float64 if matrix.dtype.kind == "f" else np.complex128)
    n = work.shape[0]
    for column in range(n):
        pivot = column + int(np.argmax(np.abs(work[column:, column])))
        if work[pivot, column] == 0:
            return column + 1
        work[[column, pivot]] = work[[pivot, column]]
        below = work[column + 1:, column] / work[column, column]
        work[column + 1:, column:] -= np.outer(below, work[column, column:])
    return n


def _singular_error(xp, a, message) -> LinAlgError:
    """torch's message for the first singular matrix of a batch."""
    host = a.get() if hasattr(a, "get") else a
    flat = host.reshape((-1,) + host.shape[-2:])
    for i, matrix in enumerate(flat):
        try:
            np.linalg.inv(matrix)
        except np.linalg.LinAlgError:
            prefix = f"(Batch element {i}): " if host.ndim > 2 else ""
            return LinAlgError(message(prefix, _first_zero_pivot(matrix)))
    return LinAlgError(message("", 0))


def inv_kernel(xp, a, *, out):
    try:
        out[...] = xp.linalg.inv(a)
    except Exception as exc:  # numpy's (and CuPy's) LinAlgError: a singular matrix
        raise _singular_error(xp, a, lambda prefix, pivot: (
            f"linalg.inv: {prefix}The diagonal element {pivot} is zero, the inversion could not be completed "
            "because the input matrix is singular.")) from exc
    return out


def solve_kernel(xp, a, b, *, out):
    batch = out.shape[:-2]
    try:
        out[...] = xp.linalg.solve(xp.broadcast_to(a, batch + a.shape[-2:]), xp.broadcast_to(b, out.shape))
    except Exception as exc:  # a singular matrix
        raise _singular_error(xp, a, lambda prefix, pivot: (
            f"torch.linalg.solve: {prefix}The solver failed because the input matrix is singular.")) from exc
    return out


OPS = {
    "linalg_inv": register_op("linalg_inv", meta=inv_meta, kernel=inv_kernel),
    "linalg_solve": register_op("linalg_solve", meta=solve_meta, kernel=solve_kernel),
}

METHODS: dict = {}
