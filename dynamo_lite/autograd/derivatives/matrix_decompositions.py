"""Derivatives of the matrix decompositions (real matrices): svd, eigh, qr, slogdet, det.

The singular/eigen-vector terms divide by differences of (squared) singular values or of
eigenvalues: they are defined for distinct values only, as in torch.
"""
from __future__ import annotations

from .helpers import OPS, transpose_last
from .table import derivative


def _mm(*matrices):
    result = matrices[0]
    for matrix in matrices[1:]:
        result = OPS["matmul"](result, matrix)
    return result


def _rows(vector):
    """``(..., k) -> (..., 1, k)``: multiplying by it scales columns (``X @ diag(v)``)."""
    return OPS["unsqueeze"](vector, -2)


def _cols(vector):
    """``(..., k) -> (..., k, 1)``: multiplying by it scales rows (``diag(v) @ X``)."""
    return OPS["unsqueeze"](vector, -1)


def _eye_like(vector):
    """The identity matrix of ``vector``'s length, dtype and device."""
    n = vector._sizes[-1]
    return OPS["eye"](n=n, m=n, dtype=vector._dtype, device=vector._device)


def _pairwise_differences(values):
    """``E[i, j] = values[j] - values[i]``, with 1 on the diagonal (where the numerators vanish)."""
    return OPS["add"](OPS["sub"](_rows(values), _cols(values)), _eye_like(values))


def _skew(matrix):
    return OPS["sub"](matrix, transpose_last(matrix))


@derivative("linalg_svd", saves=("result",))
def svd_backward(grads, a, full_matrices=True, result=None):
    """``gA = U [skew(UᵀgU)/E S + S skew(VᵀgV)/E + diag(gS)] Vᵀ + (I - UUᵀ) gU S⁻¹ Vᵀ + U S⁻¹ gVᵀ (I - VVᵀ)``
    with ``E[i, j] = s_j² - s_i²`` (the extra columns of full matrices carry no gradient)."""
    grad_u, grad_s, grad_vh = grads
    u, s, vh = result
    k = s._sizes[-1]
    if full_matrices:
        u, grad_u = OPS["narrow"](u, -1, 0, k), OPS["narrow"](grad_u, -1, 0, k)
        vh, grad_vh = OPS["narrow"](vh, -2, 0, k), OPS["narrow"](grad_vh, -2, 0, k)
    v, grad_v = transpose_last(vh), transpose_last(grad_vh)
    squares = OPS["mul"](s, s)
    differences = _pairwise_differences(squares)
    ut_gu, vt_gv = _mm(transpose_last(u), grad_u), _mm(transpose_last(v), grad_v)
    inner = OPS["add"](OPS["mul"](OPS["div"](_skew(ut_gu), differences), _rows(s)),
                       OPS["mul"](_cols(s), OPS["div"](_skew(vt_gv), differences)))
    grad_a = _mm(OPS["mul"](u, _rows(grad_s)), vh)
    grad_a = OPS["add"](grad_a, _mm(u, inner, vh))
    inverse = OPS["reciprocal"](s)
    left = OPS["mul"](OPS["sub"](grad_u, _mm(u, ut_gu)), _rows(inverse))  # (I - UUᵀ) gU S⁻¹
    right = OPS["mul"](_cols(inverse), OPS["sub"](transpose_last(grad_v), _mm(transpose_last(vt_gv), vh)))
    return OPS["add"](grad_a, OPS["add"](_mm(left, vh), _mm(u, right)))


@derivative("linalg_eigh", saves=("result",))
def eigh_backward(grads, a, UPLO="L", result=None):
    """``gA = Q (diag(gL) + (QᵀgQ) / E) Qᵀ`` with ``E[i, j] = λ_j - λ_i``."""
    grad_values, grad_vectors = grads
    values, vectors = result
    inner = OPS["div"](_mm(transpose_last(vectors), grad_vectors), _pairwise_differences(values))
    eye = _eye_like(values)
    inner = OPS["add"](OPS["mul"](inner, OPS["sub"](1.0, eye)), OPS["mul"](_rows(grad_values), eye))
    return _mm(vectors, inner, transpose_last(vectors))


@derivative("linalg_qr", saves=("result",))
def qr_backward(grads, a, mode="reduced", result=None):
    """Reduced QR of a tall or square matrix: ``gA = (gQ + Q copyltu(M)) R⁻ᵀ`` with ``M = R gRᵀ - gQᵀ Q``."""
    grad_q, grad_r = grads
    q, r = result
    m, n = a._sizes[-2:]
    if mode != "reduced" or m < n:
        raise NotImplementedError("The derivative of linalg.qr is implemented for mode='reduced' and matrices "
                                  "with at least as many rows as columns")
    m_matrix = OPS["sub"](_mm(r, transpose_last(grad_r)), _mm(transpose_last(grad_q), q))
    lower = OPS["tril"](m_matrix, -1)
    copyltu = OPS["add"](OPS["add"](lower, transpose_last(lower)),
                         OPS["mul"](m_matrix, _eye_like(OPS["select"](r, -2, 0))))
    rhs = OPS["add"](grad_q, _mm(q, copyltu))
    # rhs R⁻ᵀ, as the solve Rᵀ-system transposed: (R⁻¹ rhsᵀ)ᵀ
    return transpose_last(OPS["linalg_solve"](r, transpose_last(rhs)))


@derivative("linalg_slogdet", saves=("a",))
def slogdet_backward(grads, a, result=None):
    """Only ``logabsdet`` is differentiable: ``g A⁻ᵀ``."""
    return OPS["mul"](_cols(_cols(grads[1])), transpose_last(OPS["linalg_inv"](a)))


@derivative("linalg_det", saves=("a", "result"))
def det_backward(grad, a, result=None):
    """``g det(A) A⁻ᵀ`` (an invertible A)."""
    scale = _cols(_cols(OPS["mul"](grad, result)))
    return OPS["mul"](scale, transpose_last(OPS["linalg_inv"](a)))
