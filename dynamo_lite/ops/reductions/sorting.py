"""Sorting and searching: sort, argsort, msort, topk, searchsorted, bucketize."""
from __future__ import annotations

from collections import namedtuple

from ...tensor import layout
from ...tensor.dtype import int32, int64
from ..core import meta_rules as mr
from ..core.registry import register_op

__all__ = ["sort", "argsort", "msort", "topk", "searchsorted", "bucketize"]

SortResult = namedtuple("sort", ["values", "indices"])
TopkResult = namedtuple("topk", ["values", "indices"])


# -- meta rules ---------------------------------------------------------------------------
def sort_meta(input, dim=-1, descending=False, stable=False):
    layout.normalize_dim(dim, len(input._sizes))
    # Outputs keep the input's dense layout (torch allocates them like the input).
    strides = mr.pointwise_strides(input._sizes, [input])
    values = mr.make_meta(input._sizes, input._dtype, strides, input._device)
    return values, mr.make_meta(input._sizes, int64, strides, input._device)


def topk_meta(input, k, dim=-1, largest=True, sorted=True):
    rank = len(input._sizes)
    dim = layout.normalize_dim(dim, rank)
    size = input._sizes[dim] if rank else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    shape = input._sizes[:dim] + (k,) + input._sizes[dim + 1:] if rank else ()
    return mr.make_meta(shape, input._dtype, None, input._device), mr.make_meta(shape, int64, None, input._device)


def _searchsorted_message(boundaries, values) -> str:
    return (
        "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries "
        f"tensor and input value tensor must match, but we got boundaries tensor {list(boundaries._sizes)} and "
        f"input value tensor {list(values._sizes) if mr.is_tensor(values) else []}"
    )


def searchsorted_meta(sorted_sequence, values, *, out_int32=False, right=False):
    rank = len(sorted_sequence._sizes)
    if rank == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                           "dimensions of boundaries tensor and input value tensor must match, but we got "
                           "boundaries tensor [] and input value tensor []")
    if rank > 1:
        if not mr.is_tensor(values) or values._sizes[:-1] != sorted_sequence._sizes[:-1]:
            raise RuntimeError(_searchsorted_message(sorted_sequence, values))
    shape = values._sizes if mr.is_tensor(values) else ()
    if mr.is_tensor(values):
        mr.common_device((sorted_sequence, values))
    return mr.make_meta(shape, int32 if out_int32 else int64, None, sorted_sequence._device)


# -- kernels ------------------------------------------------------------------------------
def _stable_order(xp, x, axis: int, descending: bool):
    """Indices that sort ``x`` along ``axis``: stable; NaN counts as the largest value."""
    if not descending:
        return xp.argsort(x, axis=axis, kind="stable")
    # Sort the reversed array ascending, then reverse: descending, ties keep their order.
    n = x.shape[axis]
    flipped = xp.flip(x, axis)
    order = xp.argsort(flipped, axis=axis, kind="stable")
    return xp.flip(n - 1 - order, axis)


def sort_kernel(xp, x, dim=-1, descending=False, stable=False, *, out):
    values, indices = out
    if x.ndim == 0:
        values[...] = x
        indices[...] = 0
        return out
    order = _stable_order(xp, x, dim, descending)
    indices[...] = order
    values[...] = xp.take_along_axis(x, order, axis=dim)
    return out


def topk_kernel(xp, x, k, dim=-1, largest=True, sorted=True, *, out):
    values, indices = out
    if x.ndim == 0:
        values[...] = x
        indices[...] = 0
        return out
    # The reverse of the stable order the other way round: best first, and among ties the
    # latest index first, as torch's topk returns them.
    order = xp.flip(_stable_order(xp, x, dim, descending=not largest), dim)
    order = xp.take(order, xp.arange(k), axis=dim)
    indices[...] = order
    values[...] = xp.take_along_axis(x, order, axis=dim)
    return out


def searchsorted_kernel(xp, boundaries, values, *, out, out_int32=False, right=False):
    side = "right" if right else "left"
    if boundaries.ndim == 1:
        out[...] = xp.searchsorted(boundaries, values, side=side)
        return out
    rows = boundaries.reshape(-1, boundaries.shape[-1])
    queries = values.reshape(rows.shape[0], -1)
    result = out.reshape(rows.shape[0], -1)
    for i in range(rows.shape[0]):
        result[i] = xp.searchsorted(rows[i], queries[i], side=side)
    out[...] = result.reshape(out.shape)
    return out


OPS = {
    "sort": register_op("sort", meta=sort_meta, kernel=sort_kernel),
    "topk": register_op("topk", meta=topk_meta, kernel=topk_kernel),
    "searchsorted": register_op("searchsorted", meta=searchsorted_meta, kernel=searchsorted_kernel),
}


# -- public functions ---------------------------------------------------------------------
def sort(input, dim=-1, descending=False, stable=False):
    """``(values, indices)`` sorted along ``dim``; always stable; NaN sorts as the largest value.

    Example:
        >>> dl.sort(dl.tensor([3, 1, 2])).values.tolist()
        [1, 2, 3]
    """
    return SortResult(*OPS["sort"](input, dim, bool(descending)))


def argsort(input, dim=-1, descending=False, stable=False):
    """The indices that sort ``input`` along ``dim``.

    Example:
        >>> dl.argsort(dl.tensor([3, 1, 2])).tolist()
        [1, 2, 0]
    """
    return sort(input, dim, descending).indices


def msort(input):
    """``input`` sorted along its first dim."""
    return sort(input, 0).values


def topk(input, k, dim=-1, largest=True, sorted=True):
    """``(values, indices)`` of the ``k`` largest (or smallest) elements along ``dim``, best first.

    Example:
        >>> dl.topk(dl.tensor([1, 5, 3]), 2).values.tolist()
        [5, 3]
    """
    return TopkResult(*OPS["topk"](input, int(k), dim, bool(largest)))


def _check_side(side, right) -> bool:
    if side is None:
        return bool(right)
    if side not in ("left", "right"):
        raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
    if right and side == "left":
        raise RuntimeError(
            "torch.searchsorted(): side and right can't be set to opposites, got side of left while right was True"
        )
    return side == "right"


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """For each value, the index where it would be inserted to keep the (innermost) rows sorted.

    Example:
        >>> dl.searchsorted(dl.tensor([1, 3, 5]), dl.tensor([3, 6])).tolist()
        [1, 3]
    """
    right = _check_side(side, right)
    if sorter is not None:
        from ..shape.shape_ops import gather

        sorted_sequence = gather(sorted_sequence, -1, sorter)
    kwargs = {}
    if out_int32:
        kwargs["out_int32"] = True
    if right:
        kwargs["right"] = True
    return OPS["searchsorted"](sorted_sequence, input, **kwargs)


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each element given sorted 1-D ``boundaries`` (``searchsorted`` with the roles swapped).

    Example:
        >>> dl.bucketize(dl.tensor([0, 4, 9]), dl.tensor([1, 5])).tolist()
        [0, 1, 2]
    """
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


METHODS = {"sort": sort, "argsort": argsort, "msort": msort, "topk": topk}
