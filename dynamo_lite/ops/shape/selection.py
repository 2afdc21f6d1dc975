"""Ops whose output size depends on the data: nonzero, masked_select, unique(_consecutive), bincount.

NOTE: [data-dependent sizes] The meta rule of such an op cannot know its output size
from shapes alone, so each op takes the size as an argument (``count``/``length``) and
the public function reads it from the data first. Reading data is what a traced tensor
cannot do, so in compiled code these functions end the graph there (a graph break whose
reason names the function) and run eagerly; the graph before and after still compiles.
"""
from __future__ import annotations

import numpy as np

from ...tensor.dtype import bool_, float64, int64
from ...tensor.layout import broadcast_shapes, normalize_dim
from ..core import meta_rules as mr
from ..core.registry import register_op

__all__ = ["nonzero", "argwhere", "masked_select", "unique", "unique_consecutive", "bincount", "count_nonzero"]


# -- meta rules ---------------------------------------------------------------------------
def nonzero_meta(input, *, count):
    return mr.make_meta((count, len(input._sizes)), int64, None, input._device)


def masked_select_meta(input, mask, *, count):
    if mask._dtype is not bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    broadcast_shapes(input._sizes, mask._sizes)
    return mr.make_meta((count,), input._dtype, None, mr.common_device((input, mask)))


def unique_meta(input, *, count, dim=None, return_inverse=False, return_counts=False):
    if dim is None:
        values = mr.make_meta((count,), input._dtype, None, input._device)
        inverse_shape = input._sizes
    else:
        dim = normalize_dim(dim, len(input._sizes))
        shape = input._sizes[:dim] + (count,) + input._sizes[dim + 1:]
        values = mr.make_meta(shape, input._dtype, None, input._device)
        inverse_shape = (input._sizes[dim],)
    outputs = [values]
    if return_inverse:
        outputs.append(mr.make_meta(inverse_shape, int64, None, input._device))
    if return_counts:
        outputs.append(mr.make_meta((count,), int64, None, input._device))
    return tuple(outputs)


def bincount_meta(input, weights=None, *, length):
    if input._dtype.is_floating_point:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{mr.TYPE_NAMES[input._dtype]}'")
    if len(input._sizes) != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    dtype = int64
    if weights is not None:
        if len(weights._sizes) != 1 or weights._sizes[0] != input._sizes[0]:
            raise RuntimeError("weights should be 1-d and have the same length as input")
        dtype = weights._dtype if weights._dtype.is_floating_point else float64
    return mr.make_meta((length,), dtype, None, input._device)


# -- kernels ------------------------------------------------------------------------------
def nonzero_kernel(xp, x, *, out, count):
    if x.ndim == 0:
        out[...] = xp.zeros((count, 0), dtype=np.int64)
        return out
    out[...] = xp.stack(xp.nonzero(x), axis=1) if count else 0
    return out


def masked_select_kernel(xp, x, mask, *, out, count):
    shape = broadcast_shapes(x.shape, mask.shape)
    out[...] = xp.broadcast_to(x, shape)[xp.broadcast_to(mask, shape)]
    return out


def unique_kernel(xp, x, *, out, count, dim=None, return_inverse=False, return_counts=False):
    source = x.reshape(-1) if dim is None else x
    axis = None if dim is None else normalize_dim(dim, x.ndim)
    extra = {} if axis is not None else {"equal_nan": False}  # torch keeps every NaN
    values, inverse, counts = xp.unique(source, return_inverse=True, return_counts=True, axis=axis, **extra)
    results = [values]
    if return_inverse:
        results.append(inverse.reshape(out[1].shape))
    if return_counts:
        results.append(counts)
    for target, result in zip(out, results):
        target[...] = result
    return out


def _run_starts(xp, x, axis):
    """A bool mask over the (flattened, or along ``axis``) entries: True where a new run begins."""
    if axis is None:
        rows = x.reshape(-1, 1)
    else:
        rows = xp.moveaxis(x, axis, 0).reshape(x.shape[axis], -1)
    starts = xp.ones(rows.shape[0], dtype=bool)
    if rows.shape[0] > 1:
        starts[1:] = xp.any(rows[1:] != rows[:-1], axis=1)  # NaN != NaN: each NaN starts a run
    return starts


def unique_consecutive_kernel(xp, x, *, out, count, dim=None, return_inverse=False, return_counts=False):
    axis = None if dim is None else normalize_dim(dim, x.ndim)
    starts = _run_starts(xp, x, axis)
    first = xp.nonzero(starts)[0]
    results = [x.reshape(-1)[first] if axis is None else xp.take(x, first, axis=axis)]
    if return_inverse:
        results.append((xp.cumsum(starts) - 1).reshape(out[1].shape))
    if return_counts:
        results.append(xp.diff(xp.append(first, starts.shape[0])))
    for target, result in zip(out, results):
        target[...] = result
    return out


def bincount_kernel(xp, x, weights=None, *, out, length):
    if x.size and int(x.min()) < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    out[...] = xp.bincount(x, weights=weights, minlength=length)[:length] if x.size else 0
    return out


OPS = {
    "nonzero": register_op("nonzero", meta=nonzero_meta, kernel=nonzero_kernel),
    "masked_select": register_op("masked_select", meta=masked_select_meta, kernel=masked_select_kernel),
    "unique": register_op("unique", meta=unique_meta, kernel=unique_kernel),
    "unique_consecutive": register_op("unique_consecutive", meta=unique_meta, kernel=unique_consecutive_kernel),
    "bincount": register_op("bincount", meta=bincount_meta, kernel=bincount_kernel),
}


# -- public functions ---------------------------------------------------------------------
def _read_int(tensor) -> int:
    """A number held by a 0-dim tensor (reads the data: see NOTE: [data-dependent sizes])."""
    return int(tensor.item())


def count_nonzero(input, dim=None):
    """The number of nonzero elements (over ``dim`` or all).

    Example:
        >>> dl.count_nonzero(dl.tensor([0, 3, 5])).item()
        2
    """
    from ..reductions.reductions import sum

    return sum(input != 0, dim)


def nonzero(input, *, as_tuple=False):
    """Indices of the nonzero elements: an ``(n, ndim)`` tensor, or a tuple of index vectors.

    Example:
        >>> dl.nonzero(dl.tensor([[0, 1], [2, 0]])).tolist()
        [[0, 1], [1, 0]]
    """
    count = _read_int(count_nonzero(input))
    result = OPS["nonzero"](input, count=count)
    if not as_tuple:
        return result
    if input.ndim == 0:
        return (OPS["nonzero"](input.reshape(1), count=count)[:, 0],)
    return tuple(result[:, i] for i in range(input.ndim))


def argwhere(input):
    """``nonzero(input)``."""
    return nonzero(input)


def masked_select(input, mask):
    """The elements of ``input`` where the (broadcast) bool ``mask`` is True, as a 1-D tensor.

    Example:
        >>> dl.masked_select(dl.tensor([1, 2, 3]), dl.tensor([True, False, True])).tolist()
        [1, 3]
    """
    if mask.dtype is not bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    from .views import expand

    shape = broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    count = _read_int(count_nonzero(expand(mask, shape)))
    return OPS["masked_select"](input, mask, count=count)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct values, sorted (or slices along ``dim``); optionally the inverse map and the counts.

    Example:
        >>> dl.unique(dl.tensor([3, 1, 3])).tolist()
        [1, 3]
    """
    from ..reductions.sorting import sort

    if dim is None:
        flat = input.reshape(-1)
        if flat.numel() == 0:
            count = 0
        else:
            ordered = sort(flat).values
            # Distinct neighbours in sorted order, NaN never equal to itself (every NaN counts).
            count = _read_int(count_nonzero(ordered[1:] != ordered[:-1])) + 1
    else:
        count = _unique_slices(input, dim)
    kwargs = {"count": count}
    if dim is not None:
        kwargs["dim"] = dim
    if return_inverse:
        kwargs["return_inverse"] = True
    if return_counts:
        kwargs["return_counts"] = True
    outputs = OPS["unique"](input, **kwargs)
    return outputs if return_inverse or return_counts else outputs[0]


def _unique_slices(input, dim) -> int:
    arr = input._array()  # reads the data: see NOTE: [data-dependent sizes]
    host = arr if isinstance(arr, np.ndarray) else arr.get()
    return int(np.unique(host, axis=normalize_dim(dim, input.ndim)).shape[normalize_dim(dim, input.ndim)])


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapse each run of equal consecutive values (or slices along ``dim``) to one.

    Returns the values, plus the run index of every input entry (``return_inverse``) and the
    run lengths (``return_counts``) when asked, as torch does.

    Example:
        >>> dl.unique_consecutive(dl.tensor([1, 1, 2, 2, 3, 1])).tolist()
        [1, 2, 3, 1]
    """
    if dim is None:
        arr = input.reshape(-1)
    else:
        dim = normalize_dim(dim, input.ndim)
        arr = input.movedim(dim, 0).reshape(input.shape[dim], -1)
    if arr.shape[0] == 0:
        count = 0
    elif arr.shape[0] == 1:
        count = 1
    else:
        change = arr[1:] != arr[:-1]
        if dim is not None:
            change = change.any(1)
        count = _read_int(count_nonzero(change)) + 1  # reads the data: see NOTE: [data-dependent sizes]
    kwargs = {"count": count}
    if dim is not None:
        kwargs["dim"] = dim
    if return_inverse:
        kwargs["return_inverse"] = True
    if return_counts:
        kwargs["return_counts"] = True
    outputs = OPS["unique_consecutive"](input, **kwargs)
    return outputs if return_inverse or return_counts else outputs[0]


def bincount(input, weights=None, minlength=0):
    """How often each value ``0..max(input)`` occurs (or the sum of its ``weights``).

    Example:
        >>> dl.bincount(dl.tensor([1, 1, 3])).tolist()
        [0, 2, 0, 1]
    """
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if input.dtype.is_floating_point:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{mr.TYPE_NAMES[input.dtype]}'")
    if input.ndim != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    largest = _read_int(input.max()) if input.numel() else -1
    length = max(largest + 1, minlength)
    return OPS["bincount"](input, length=length) if weights is None else OPS["bincount"](input, weights, length=length)


METHODS = {
    "nonzero": nonzero, "argwhere": argwhere, "masked_select": masked_select, "unique": unique,
    "unique_consecutive": unique_consecutive,
    "bincount": bincount, "count_nonzero": count_nonzero,
}
