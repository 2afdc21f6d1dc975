"""Derivatives of matrix products: matmul/mm/bmm, addmm/baddbmm, linear, einsum, diag."""
from __future__ import annotations

from ...ops.contractions import EinsumSpec
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
