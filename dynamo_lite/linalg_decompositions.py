"""dl.linalg decompositions and what is built on them: svd, svdvals, eigh, eigvalsh, qr, det, slogdet,
pinv, matrix_rank, lstsq; and the top-level forms torch keeps (dl.svd, dl.qr, dl.det, dl.slogdet, dl.logdet,
dl.pinverse).

Example:
    >>> dl.linalg.svdvals(dl.tensor([[3.0, 0.0], [0.0, -4.0]])).tolist()
    [4.0, 3.0]
"""
from __future__ import annotations

from collections import namedtuple

from .ops.core import api as ops
from .tensor.type_info import finfo
from .ops.linalg.matrix_decompositions import OPS

__all__ = ["det", "eigh", "eigvalsh", "lstsq", "matrix_rank", "pinv", "qr", "slogdet", "svd", "svdvals"]

SVDResult = namedtuple("linalg_svd", ["U", "S", "Vh"])
LegacySVDResult = namedtuple("svd", ["U", "S", "V"])
EighResult = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
QRResult = namedtuple("linalg_qr", ["Q", "R"])
SlogdetResult = namedtuple("linalg_slogdet", ["sign", "logabsdet"])
LstsqResult = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])


def svd(A, full_matrices: bool = True, *, driver=None):
    """``A = U @ diag(S) @ Vh``, singular values descending (signs of the vectors as LAPACK gives them).

    Example:
        >>> U, S, Vh = dl.linalg.svd(dl.tensor([[2.0, 0.0], [0.0, 1.0]]))
        >>> S.tolist()
        [2.0, 1.0]
    """
    return SVDResult(*OPS["linalg_svd"](A, bool(full_matrices)))


def svdvals(A, *, driver=None):
    """The singular values of ``A``, descending.

    Example:
        >>> dl.linalg.svdvals(dl.eye(2) * 3).tolist()
        [3.0, 3.0]
    """
    return svd(A, full_matrices=False).S


def eigh(A, UPLO: str = "L"):
    """Eigenvalues (ascending) and eigenvectors of symmetric matrices, read from the ``UPLO`` triangle.

    Example:
        >>> dl.linalg.eigh(dl.tensor([[2.0, 0.0], [0.0, 1.0]])).eigenvalues.tolist()
        [1.0, 2.0]
    """
    return EighResult(*OPS["linalg_eigh"](A, UPLO))


def eigvalsh(A, UPLO: str = "L"):
    """The eigenvalues of symmetric matrices, ascending.

    Example:
        >>> dl.linalg.eigvalsh(dl.tensor([[0.0, 1.0], [1.0, 0.0]])).tolist()
        [-1.0, 1.0]
    """
    return eigh(A, UPLO).eigenvalues


def qr(A, mode: str = "reduced"):
    """``A = Q @ R`` (Householder, LAPACK's signs); ``mode`` "reduced", "complete" or "r" (Q empty).

    Example:
        >>> Q, R = dl.linalg.qr(dl.tensor([[3.0], [4.0]]))
        >>> R.abs().tolist()
        [[5.0]]
    """
    return QRResult(*OPS["linalg_qr"](A, mode))


def det(A):
    """The determinant of each square matrix.

    Example:
        >>> dl.linalg.det(dl.tensor([[2.0, 1.0], [1.0, 3.0]])).item()
        5.0
    """
    return OPS["linalg_det"](A)


def slogdet(A):
    """``(sign, log|det|)`` of each square matrix (differentiable in ``logabsdet``).

    Example:
        >>> dl.linalg.slogdet(dl.tensor([[-2.0, 0.0], [0.0, 1.0]])).sign.item()
        -1.0
    """
    return SlogdetResult(*OPS["linalg_slogdet"](A))


def _tolerance(S, shape, atol, rtol):
    """torch's cutoff ``max(atol, rtol * largest singular value)`` (kept with a trailing size-1 dim); rtol
    defaults to eps * max(m, n) when atol is not given (or 0), else to 0. Tolerances are numbers."""
    if rtol is None:
        rtol = finfo(S.dtype).eps * max(shape[-2:]) if not atol else 0.0
    return (S.amax(-1, keepdim=True) * float(rtol)).clamp(min=float(atol or 0.0))


def pinv(A, *, atol=None, rtol=None, hermitian: bool = False):
    """The Moore-Penrose pseudo-inverse, from the SVD: singular values at or under the tolerance count as zero.

    Example:
        >>> dl.linalg.pinv(dl.tensor([[2.0, 0.0], [0.0, 0.0]])).tolist()
        [[0.5, 0.0], [0.0, 0.0]]
    """
    U, S, Vh = svd(A, full_matrices=False)
    kept = S > _tolerance(S, A.shape, atol, rtol)
    inverse = ops.where(kept, 1 / ops.where(kept, S, ops.ones_like(S)), ops.zeros_like(S))
    return (Vh.transpose(-2, -1) * inverse.unsqueeze(-2)) @ U.transpose(-2, -1)


def matrix_rank(A, *, atol=None, rtol=None, hermitian: bool = False):
    """The number of singular values above the tolerance (as ``pinv`` counts them), int64.

    Example:
        >>> dl.linalg.matrix_rank(dl.tensor([[1.0, 2.0], [2.0, 4.0]])).item()
        1
    """
    S = svdvals(A)
    return (S > _tolerance(S, A.shape, atol, rtol)).sum(-1)


def lstsq(A, B, rcond=None, *, driver=None):
    """The least-squares solution of ``A X = B`` (through the pseudo-inverse), and the rank; as with the
    default CPU driver, ``residuals`` and ``singular_values`` are empty.

    Example:
        >>> dl.linalg.lstsq(dl.tensor([[1.0], [1.0]]), dl.tensor([[1.0], [3.0]])).solution.tolist()
        [[2.0]]
    """
    if driver not in (None, "gelsy"):
        raise NotImplementedError(f"linalg.lstsq: driver={driver!r} is not supported (only 'gelsy')")
    rtol = rcond if rcond is not None else finfo(A.dtype).eps * max(A.shape[-2:])
    solution = pinv(A, rtol=rtol) @ B
    empty = ops.empty(0, dtype=A.dtype)
    return LstsqResult(solution, empty, matrix_rank(A, rtol=rtol), empty)


def legacy_svd(input, some: bool = True, compute_uv: bool = True):
    """``dl.svd``: ``(U, S, V)`` with ``V`` (not ``Vh``); reduced unless ``some=False``; without ``compute_uv``
    U and V are zeros of the full shapes.

    Example:
        >>> dl.svd(dl.eye(2)).V.shape
        dl.Size([2, 2])
    """
    if not compute_uv:
        S = svdvals(input)
        m, n = input.shape[-2:]
        batch = tuple(input.shape[:-2])
        return LegacySVDResult(ops.zeros(batch + (m, m), dtype=input.dtype), S,
                               ops.zeros(batch + (n, n), dtype=input.dtype))
    U, S, Vh = svd(input, full_matrices=not some)
    return LegacySVDResult(U, S, Vh.transpose(-2, -1))


def legacy_qr(input, some: bool = True):
    """``dl.qr``: ``linalg.qr`` in mode "reduced" (``some=True``) or "complete"."""
    return qr(input, "reduced" if some else "complete")


def logdet(input):
    """``log(det)``: NaN for a negative determinant, -inf for a singular matrix."""
    sign, logabsdet = slogdet(input)
    return ops.where(sign < 0, ops.full_like(logabsdet, float("nan")), logabsdet)


def pinverse(input, rcond: float = 1e-15):
    """``dl.pinverse``: ``linalg.pinv`` with relative tolerance ``rcond``."""
    return pinv(input, rtol=rcond)
