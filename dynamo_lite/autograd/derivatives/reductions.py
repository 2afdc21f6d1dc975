"""Derivatives of reductions, scans (cumsum, cummax/cummin, logcumsumexp), softmax-like normalizations
and kthvalue."""
from __future__ import annotations

from ..grad_mode import GRAD_MODE
from .helpers import OPS, arange, conj, expand_reduced, normalize_dims, reduced_count, scatter_add
from .table import derivative


@derivative("sum")
def sum_backward(grad, input, dim=None, keepdim=False, dtype=None):
    return expand_reduced(grad, input, dim, keepdim)


@derivative("mean")
def mean_backward(grad, input, dim=None, keepdim=False, dtype=None):
    return OPS["div"](expand_reduced(grad, input, dim, keepdim), reduced_count(input, dim))


def _evenly(grad, input, result, dim, keepdim):
    """Gradient of amax/amin/max/min: shared equally by the elements equal to the extreme."""
    mask = OPS["eq"](input, expand_reduced(result, input, dim, keepdim))
    count = OPS["sum"](mask, dim=normalize_dims(dim, input.ndim), keepdim=True)
    share = OPS["div"](expand_reduced(grad, input, dim, keepdim), count)
    return OPS["where"](mask, share, 0.0)


@derivative("amax", "amin", saves=("input", "result"))
def amax_backward(grad, input, dim=None, keepdim=False, result=None):
    return _evenly(grad, input, result, dim, keepdim)


@derivative("max", "min", saves=("input", "result"))
def max_backward(grad, input, result):
    return _evenly(grad, input, result, None, False)


@derivative("max_dim", "min_dim", saves=("result",))
def max_dim_backward(grads, input, dim, keepdim=False, result=None):
    grad, indices = grads[0], result[1]
    if not keepdim and input.ndim:
        grad, indices = OPS["unsqueeze"](grad, dim), OPS["unsqueeze"](indices, dim)
    return scatter_add(input._sizes, dim, indices, grad, grad) if input.ndim else grad


@derivative("var", saves=("input",))
def var_backward(grad, input, dim=None, correction=1, keepdim=False):
    dims = normalize_dims(dim, input.ndim)
    centered = OPS["sub"](input, OPS["mean"](input, dim=dims, keepdim=True))
    scale = 2.0 / (reduced_count(input, dim) - correction)
    return OPS["mul"](OPS["mul"](expand_reduced(grad, input, dim, keepdim), centered), scale)


@derivative("std", saves=("input", "result"))
def std_backward(grad, input, dim=None, correction=1, keepdim=False, result=None):
    dims = normalize_dims(dim, input.ndim)
    centered = OPS["sub"](input, OPS["mean"](input, dim=dims, keepdim=True))
    per_std = OPS["div"](expand_reduced(grad, input, dim, keepdim), expand_reduced(result, input, dim, keepdim))
    return OPS["div"](OPS["mul"](per_std, centered), reduced_count(input, dim) - correction)


@derivative("var_mean", saves=("input",))
def var_mean_backward(grads, input, dim=None, correction=1, keepdim=False):
    grad_var, grad_mean = grads
    return OPS["add"](var_backward(grad_var, input, dim=dim, correction=correction, keepdim=keepdim),
                      mean_backward(grad_mean, input, dim=dim, keepdim=keepdim))


@derivative("logsumexp", saves=("input", "result"))
def logsumexp_backward(grad, input, dim, keepdim=False, result=None):
    weights = OPS["exp"](OPS["sub"](input, expand_reduced(result, input, dim, keepdim)))
    return OPS["mul"](expand_reduced(grad, input, dim, keepdim), weights)


@derivative("softmax", saves=("result",))
def softmax_backward(grad, input, dim, dtype=None, result=None):
    dot = OPS["sum"](OPS["mul"](grad, result), dim=(dim,), keepdim=True)
    return OPS["mul"](OPS["sub"](grad, dot), result)


@derivative("log_softmax", saves=("result",))
def log_softmax_backward(grad, input, dim, dtype=None, result=None):
    total = OPS["sum"](grad, dim=(dim,), keepdim=True)
    return OPS["sub"](grad, OPS["mul"](OPS["exp"](result), total))


def _reverse_cumsum(t, dim):
    return OPS["flip"](OPS["cumsum"](OPS["flip"](t, (dim,)), dim), (dim,))


@derivative("cumsum")
def cumsum_backward(grad, input, dim, dtype=None):
    return _reverse_cumsum(grad, dim % max(input.ndim, 1))


@derivative("cumprod", saves=("input", "result"))
def cumprod_backward(grad, input, dim, dtype=None, result=None):
    # d/dx_i = sum_{k >= i} g_k prod_{j <= k, j != i} x_j, exact with zero inputs.
    if input.ndim == 0:
        return grad
    d = dim % input.ndim
    grad, input, result = conj(grad), conj(input), conj(result)  # NOTE: [complex gradients]
    if GRAD_MODE.enabled:  # a graph of this backward is recorded: the formula must differentiate again
        return conj(_cumprod_backward_quadratic(grad, input, d))
    return conj(_cumprod_backward_linear(grad, input, result, d))


def _exclusive_cumprod(input, d):
    """prod_{j < i} x_j along ``d`` (1 at i = 0)."""
    ones = OPS["ones"](size=(*input._sizes[:d], 1, *input._sizes[d + 1:]), dtype=input._dtype, device=input._device)
    return OPS["cumprod"](OPS["cat"]([ones, OPS["narrow"](input, d, 0, input._sizes[d] - 1)], d), d)


def _cumprod_backward_linear(grad, input, result, d):
    """O(n), but its own derivative is not cumprod's second derivative. With z the first zero:
    before z the gradient is sum_{k >= i} g_k result_k / x_i (x_i != 0 there); past z every term
    holds x_z = 0; at z it is prod_{j < z} x_j * sum_{k >= z} g_k prod_{z < j <= k} x_j."""
    is_zero = OPS["eq"](input, 0)
    zeros_so_far = OPS["cumsum"](is_zero, d)
    before = OPS["eq"](zeros_so_far, 0)
    at_first = OPS["logical_and"](is_zero, OPS["eq"](zeros_so_far, 1))
    fast = OPS["div"](_reverse_cumsum(OPS["mul"](grad, result), d), OPS["masked_fill"](input, is_zero, 1.0))
    after_first = OPS["cumprod"](OPS["masked_fill"](input, OPS["logical_or"](before, at_first), 1.0), d)
    at_zero = OPS["mul"](_exclusive_cumprod(input, d), _reverse_cumsum(OPS["mul"](grad, after_first), d))
    return OPS["where"](before, fast, OPS["where"](at_first, at_zero, 0.0))


def _cumprod_backward_quadratic(grad, input, d):
    """O(n^2) memory, polynomial in the input (so differentiable again):
    prod_{j < i} x_j * sum_{k >= i} g_k Q[i, k] with Q[i, k] = prod_{i < j <= k} x_j."""
    n = input._sizes[d]
    x, g = OPS["transpose"](input, d, -1), OPS["transpose"](grad, d, -1)
    positions = arange(n, input)
    rows, cols = OPS["view"](positions, (n, 1)), OPS["view"](positions, (1, n))
    square = (*x._sizes[:-1], n, n)
    strictly_after = OPS["where"](OPS["gt"](cols, rows), OPS["expand"](OPS["unsqueeze"](x, -2), square), 1.0)
    partial = OPS["cumprod"](strictly_after, -1)
    weighted = OPS["where"](OPS["ge"](cols, rows), OPS["mul"](OPS["unsqueeze"](g, -2), partial), 0.0)
    summed = OPS["transpose"](OPS["sum"](weighted, dim=(weighted.ndim - 1,)), d, -1)
    return OPS["mul"](_exclusive_cumprod(input, d), summed)


@derivative("prod", saves=("input",))
def prod_backward(grad, input, dim=None, keepdim=False, dtype=None):
    # the product of every other element: exclusive cumprods from both sides (exact with zeros)
    if input.ndim == 0:
        return grad
    dims = normalize_dims(dim, input.ndim)
    if len(dims) == 1:
        d, flat = dims[0], input
    else:
        d, flat = 0, input.reshape(-1)
    ones = OPS["ones"](size=(*flat._sizes[:d], 1, *flat._sizes[d + 1:]), dtype=flat._dtype, device=flat._device)
    n = flat._sizes[d]
    flipped = OPS["flip"](flat, (d,))
    before = OPS["cumprod"](OPS["cat"]([ones, OPS["narrow"](flat, d, 0, n - 1)], d), d)
    after = OPS["flip"](OPS["cumprod"](OPS["cat"]([ones, OPS["narrow"](flipped, d, 0, n - 1)], d), d), (d,))
    others = OPS["mul"](before, after)
    if len(dims) != 1:
        others = others.reshape(input._sizes)
    return OPS["mul"](expand_reduced(grad, input, dim, keepdim), others)


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


@derivative("kthvalue", saves=("result",))
def kthvalue_backward(grads, input, k, dim=-1, keepdim=False, nan_rule=None, result=None):
    grad, indices = grads[0], result[1]
    if not input.ndim:
        return grad
    if not keepdim:
        grad, indices = OPS["unsqueeze"](grad, dim), OPS["unsqueeze"](indices, dim)
    return scatter_add(input._sizes, dim, indices, grad, grad)
