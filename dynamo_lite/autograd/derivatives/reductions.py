"""Derivatives of reductions, scans and softmax-like normalizations."""
from __future__ import annotations

from .helpers import OPS, expand_reduced, normalize_dims, reduced_count, scatter_add
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
    # sum_{k >= i} grad_k * result_k / input_i; inputs must be non-zero (as in torch's fast path)
    if input.ndim == 0:
        return grad
    return OPS["div"](_reverse_cumsum(OPS["mul"](grad, result), dim % input.ndim), input)


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
