"""Derivatives of linear algebra: matmul/mm/bmm, addmm/baddbmm, linear, einsum, diag, matrix_exp,
inv/solve, cholesky and the decompositions svd/eigh/qr/slogdet/det (real matrices)."""
from __future__ import annotations

from ...ops.linalg.contractions import EinsumSpec
from .helpers import OPS, conj, is_value, transpose_last
from .table import derivative


@derivative("matmul", "mm", "bmm", saves=("a", "b"), only_for={"a": "b", "b": "a"})
def matmul_backward(grad, a, b):
    if a.ndim == 1 and b.ndim == 1:
        return (OPS["mul"](grad, conj(b)) if is_value(b) else None), (OPS["mul"](grad, conj(a)) if is_value(a) else None)
    a2 = OPS["unsqueeze"](a, 0) if a.ndim == 1 else a
    b2 = OPS["unsqueeze"](b, -1) if b.ndim == 1 else b
    g = OPS["unsqueeze"](grad, -2) if a.ndim == 1 else grad
    g = OPS["unsqueeze"](g, -1) if b.ndim == 1 else g
    # complex: the conjugate transposes (NOTE: [complex gradients])
    grad_a = OPS["matmul"](g, conj(transpose_last(b2))) if is_value(b) else None
    grad_b = OPS["matmul"](conj(transpose_last(a2)), g) if is_value(a) else None
    # drop the dims a 1-D operand was given, before the engine sums away broadcast batch dims
    return (OPS["squeeze"](grad_a, -2) if a.ndim == 1 and grad_a is not None else grad_a,
            OPS["squeeze"](grad_b, -1) if b.ndim == 1 and grad_b is not None else grad_b)


@derivative("addmm", saves=("mat1", "mat2"))
def addmm_backward(grad, input, mat1, mat2, beta=1, alpha=1):
    scaled = grad if alpha == 1 else OPS["mul"](grad, alpha)
    return (grad if beta == 1 else OPS["mul"](grad, beta),
            OPS["mm"](scaled, conj(transpose_last(mat2))), OPS["mm"](conj(transpose_last(mat1)), scaled))


@derivative("linear", saves=("input", "weight"), only_for={"input": "weight", "weight": "input"})
def linear_backward(grad, input, weight, bias=None):
    out_features, in_features = weight._sizes
    grad_weight = None
    if is_value(input):
        rows = grad.reshape(-1, out_features)
        grad_weight = OPS["mm"](transpose_last(rows), input.reshape(-1, in_features))
    return (OPS["matmul"](grad, weight) if is_value(weight) else None), grad_weight, grad


@derivative("baddbmm", saves=("batch1", "batch2"))
def baddbmm_backward(grad, input, batch1, batch2, beta=1, alpha=1):
    scaled = grad if alpha == 1 else OPS["mul"](grad, alpha)
    return (grad if beta == 1 else OPS["mul"](grad, beta),
            OPS["bmm"](scaled, conj(transpose_last(batch2))), OPS["bmm"](conj(transpose_last(batch1)), scaled))


def _term(labels) -> str:
    return "".join(labels)


@derivative("einsum", saves=("operands",))
def einsum_backward(grad, equation, operands):
    # d/d(operand i): the output gradient contracted with every other operand, onto operand
    # i's labels; labels only operand i has (summed in the forward) come back by broadcasting.
    spec = EinsumSpec(equation, [o.ndim for o in operands])
    grads = []
    for i, operand in enumerate(operands):
        labels = spec.inputs[i]
        if len(set(labels)) != len(labels):
            raise NotImplementedError(f"the gradient of einsum {equation!r} (a repeated subscript) is not supported")
        others = [spec.inputs[j] for j in range(len(operands)) if j != i]
        available = set(spec.output).union(*others) if others else set(spec.output)
        kept = [label for label in labels if label in available]
        if len(kept) != len(labels) and "..." in labels:
            raise NotImplementedError(f"the gradient of einsum {equation!r} is not supported")
        sub = ",".join([_term(spec.output)] + [_term(t) for t in others]) + "->" + _term(kept)
        g = OPS["einsum"](sub, [grad] + [operands[j] for j in range(len(operands)) if j != i])
        for position, label in enumerate(labels):
            if label not in available:
                g = OPS["unsqueeze"](g, position)
        grads.append(OPS["expand"](g, tuple(operand._sizes)) if g._sizes != operand._sizes else g)
    return None, grads


@derivative("diag")
def diag_backward(grad, input, diagonal=0):
    if input.ndim == 1:
        return OPS["diag"](grad, diagonal)
    rows, cols = input._sizes
    square = OPS["diag"](grad, diagonal)
    side = square._sizes[0]
    return OPS["constant_pad_nd"](square, (0, cols - side, 0, rows - side), 0)


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


@derivative("linalg_inv", saves=("result",))
def inv_backward(grad, a, result=None):
    inverse_t = transpose_last(result)
    return OPS["neg"](OPS["matmul"](OPS["matmul"](inverse_t, grad), inverse_t))


@derivative("linalg_solve", saves=("a", "result"))
def solve_backward(grad, a, b, result=None):
    grad_b = OPS["linalg_solve"](transpose_last(a), grad)
    return OPS["neg"](OPS["matmul"](grad_b, transpose_last(result))), grad_b


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


@derivative("matrix_exp", saves=("input",))
def matrix_exp_backward(grad, input):
    # NOTE: [matrix_exp]: the gradient is the upper-right block of exp([[A^H, G], [0, A^H]]).
    n = input._sizes[-1]
    adjoint = OPS["transpose"](input, -1, -2)
    if input._dtype.is_complex:
        raise NotImplementedError("the derivative of matrix_exp is implemented for real matrices only")
    zeros = OPS["zeros"](size=tuple(input._sizes), dtype=input._dtype, device=input._device)
    top = OPS["cat"]([adjoint, grad], -1)
    bottom = OPS["cat"]([zeros, adjoint], -1)
    block = OPS["matrix_exp"](OPS["cat"]([top, bottom], -2))
    return OPS["narrow"](OPS["narrow"](block, -2, 0, n), -1, n, n)
