"""Derivatives of the ops ported from torch (logaddexp, copysign, fmax, frexp, the gamma family, cummax, logcumsumexp)."""
from __future__ import annotations

import math

from .helpers import OPS, embed, is_tensor, scatter_add, zeros_of
from .table import NOT_DIFFERENTIABLE, derivative

NOT_DIFFERENTIABLE.update({
    name: "integer or boolean outputs, or piecewise constant with no derivative in torch"
    for name in ("heaviside", "heaviside_", "nextafter", "nextafter_", "signbit", "histc", "isin")
})


def _where_grad(condition, grad):
    return OPS["where"](condition, grad, 0.0)


@derivative("logaddexp", saves=("input", "other"))
def logaddexp_backward(grad, input, other):
    return (OPS["mul"](grad, OPS["sigmoid"](OPS["sub"](input, other))),
            OPS["mul"](grad, OPS["sigmoid"](OPS["sub"](other, input))))


@derivative("logaddexp2", saves=("input", "other"))
def logaddexp2_backward(grad, input, other):
    difference = OPS["mul"](OPS["sub"](input, other), math.log(2))
    return (OPS["mul"](grad, OPS["sigmoid"](difference)), OPS["mul"](grad, OPS["sigmoid"](OPS["neg"](difference))))


@derivative("copysign", saves=("input", "result"))
def copysign_backward(grad, input, other, result):
    # d|x| sign(y) / dx = result / x away from 0 (0 there, as torch); no gradient flows to the sign.
    zero = OPS["eq"](input, 0)
    ratio = OPS["div"](result, OPS["where"](zero, 1.0, input))
    grad_input = _where_grad(OPS["logical_not"](zero), OPS["mul"](grad, ratio))
    return grad_input, (zeros_of(other) if is_tensor(other) else None)


def _extremum_masks(input, other, keeps_input):
    chosen = OPS["logical_or"](keeps_input(input, other), OPS["isnan"](other))
    return chosen, OPS["logical_not"](chosen)


@derivative("fmax", saves=("input", "other"))
def fmax_backward(grad, input, other):
    first, second = _extremum_masks(input, other, OPS["ge"])
    return _where_grad(first, grad), _where_grad(second, grad)


@derivative("fmin", saves=("input", "other"))
def fmin_backward(grad, input, other):
    first, second = _extremum_masks(input, other, OPS["le"])
    return _where_grad(first, grad), _where_grad(second, grad)


@derivative("frexp", saves=("result",))
def frexp_backward(grads, input, result):
    return OPS["div"](grads[0], OPS["pow"](2.0, result[1]))


@derivative("lgamma", saves=("input",))
def lgamma_backward(grad, input):
    return OPS["mul"](grad, OPS["digamma"](input))


@derivative("digamma", saves=("input",))
def digamma_backward(grad, input):
    return OPS["mul"](grad, OPS["polygamma"](1, input))


@derivative("polygamma", saves=("input",))
def polygamma_backward(grad, n, input):
    return None, OPS["mul"](grad, OPS["polygamma"](n + 1, input))


@derivative("i0", saves=("input",))
def i0_backward(grad, input):
    return OPS["mul"](grad, OPS["i1"](input))


@derivative("i1", saves=("input", "result"))
def i1_backward(grad, input, result):
    # I1' = I0 - I1 / x, which tends to 1/2 at 0.
    zero = OPS["eq"](input, 0)
    slope = OPS["sub"](OPS["i0"](input), OPS["div"](result, OPS["where"](zero, 1.0, input)))
    return OPS["mul"](grad, OPS["where"](zero, 0.5, slope))


@derivative("cummax", "cummin", saves=("result",))
def cumulative_extremum_backward(grads, input, dim, result):
    grad, indices = grads[0], result[1]
    if not input._sizes:
        return grad
    return scatter_add(input._sizes, dim, indices, grad, grad)


@derivative("logcumsumexp", saves=("input", "result"))
def logcumsumexp_backward(grad, input, dim, result):
    # d out_i / d x_j = exp(x_j - out_i) for j <= i: a reversed cumulative sum of grad * exp(-out),
    # scaled by exp(x); the largest output along dim is factored out so the exponentials stay finite.
    if not input._sizes:
        return grad
    peak = OPS["amax"](result, dim=(dim,), keepdim=True)
    weighted = OPS["mul"](grad, OPS["exp"](OPS["sub"](peak, result)))
    reversed_sums = OPS["flip"](OPS["cumsum"](OPS["flip"](weighted, (dim,)), dim), (dim,))
    return OPS["mul"](reversed_sums, OPS["exp"](OPS["sub"](input, peak)))


@derivative("diagonal")
def diagonal_backward(grad, input, offset=0, dim1=0, dim2=1):
    return embed(grad, input, lambda zeros: OPS["diagonal"](zeros, offset, dim1, dim2))


NOT_DIFFERENTIABLE.update({
    name: "factories: the output does not depend on any input's values"
    for name in ("triangle_indices", "combination_indices")
})


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
