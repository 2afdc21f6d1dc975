"""Derivatives of sort/topk, scatter*, index_fill, masked_select, and random fills."""
from __future__ import annotations

from ...tensor.layout import broadcast_shapes
from .helpers import OPS, is_tensor, scatter_add, zeros_grad, zeros_of
from .table import derivative


def _unsort(grads, input, dim, indices):
    """Every output element came from the input position its index names."""
    return scatter_add(input._sizes, dim, indices, grads[0], grads[0]) if input.ndim else grads[0]


@derivative("sort", saves=("result",))
def sort_backward(grads, input, dim=-1, descending=False, stable=False, result=None):
    return _unsort(grads, input, dim, result[1])


@derivative("topk", saves=("result",))
def topk_backward(grads, input, k, dim=-1, largest=True, sorted=True, result=None):
    return _unsort(grads, input, dim, result[1])


@derivative("scatter", saves=("index",))
def scatter_backward(grad, input, dim, index, src, reduce=None):
    if reduce not in (None, "add"):
        raise NotImplementedError(f"the gradient of scatter(reduce={reduce!r}) is not supported")
    grad_input = grad if reduce == "add" else OPS["scatter"](grad, dim, index, 0.0)
    return grad_input, None, None, (OPS["gather"](grad, dim, index) if is_tensor(src) else None)


@derivative("scatter_add", saves=("index",))
def scatter_add_backward(grad, input, dim, index, src):
    return grad, None, None, OPS["gather"](grad, dim, index)


@derivative("scatter_reduce", saves=("input", "index", "src", "result"))
def scatter_reduce_backward(grad, input, dim, index, src, reduce, include_self=True, result=None):
    touched = OPS["scatter"](zeros_of(input), dim, index, 1.0)  # 1 where some src element landed
    if reduce == "sum":
        grad_input = grad if include_self else OPS["mul"](grad, OPS["add"](OPS["neg"](touched), 1))
        return grad_input, None, None, OPS["gather"](grad, dim, index)
    if reduce in ("mean", "amax", "amin"):
        if reduce == "mean":
            self_share = OPS["ones_like"](input, dtype=input._dtype, device=input._device)
            src_share = OPS["ones_like"](src, dtype=src._dtype, device=src._device)
        else:
            self_share = OPS["eq"](input, result).to(input._dtype)
            src_share = OPS["eq"](src, OPS["gather"](result, dim, index)).to(src._dtype)
        if not include_self:  # the input's value only survives where nothing was scattered
            self_share = OPS["mul"](self_share, OPS["add"](OPS["neg"](touched), 1))
        count = OPS["add"](self_share, OPS["scatter_add"](zeros_of(input), dim, index, src_share))
        per = OPS["div"](grad, OPS["clamp"](count, min=1))
        return OPS["mul"](per, self_share), None, None, OPS["mul"](OPS["gather"](per, dim, index), src_share)
    raise NotImplementedError(f"the gradient of scatter_reduce(reduce={reduce!r}) is not supported")


@derivative("index_fill", saves=("index",))
def index_fill_backward(grad, input, dim, index, value):
    grad_value = OPS["sum"](OPS["index_select"](grad, dim, index)) if is_tensor(value) else None
    return OPS["index_fill"](grad, dim, index, 0.0), None, None, grad_value


@derivative("masked_select", saves=("mask",))
def masked_select_backward(grad, input, mask, count=None):
    shape = broadcast_shapes(tuple(input._sizes), tuple(mask._sizes))
    positions = OPS["nonzero"](OPS["expand"](mask, shape), count=grad._sizes[0])
    keys = tuple(OPS["select"](positions, 1, d) for d in range(len(shape)))
    spread = OPS["zeros"](size=shape, dtype=grad._dtype, device=grad._device)
    return OPS["index_put_"](spread, keys, grad), None


# Random fills and draws: the output does not depend on the input's values.
derivative("uniform_", "normal_", "exponential_", "bernoulli_", "random_", "bernoulli")(zeros_grad)
