"""Rearranging ops: roll, repeat_interleave, meshgrid, hstack/vstack/dstack and atleast_nd."""
from __future__ import annotations

from ...tensor import layout
from ...tensor.dtype import int32, int64
from ..core import meta_rules as mr
from ..core.registry import register_op
from .shape_ops import cat
from .views import expand, reshape

__all__ = [
    "roll", "repeat_interleave", "meshgrid", "hstack", "vstack", "dstack", "column_stack", "atleast_1d",
    "atleast_2d", "atleast_3d",
]

INDEX_DTYPES = (int32, int64)


# -- roll ---------------------------------------------------------------------------------
def _roll_args(ndim: int, shifts, dims) -> tuple:
    """(shifts, dims) as equal-length tuples; dims () means: roll the flattened tensor."""
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = () if dims is None else ((dims,) if isinstance(dims, int) else tuple(dims))
    if not shifts:
        raise RuntimeError("`shifts` required")
    if not dims and len(shifts) == 1:
        return shifts, ()
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    return shifts, tuple(layout.normalize_dim(d, ndim) for d in dims)


def roll_meta(input, shifts, dims=()):
    _roll_args(len(input._sizes), shifts, dims)
    return mr.make_meta(input._sizes, input._dtype, None, input._device)


def roll_kernel(xp, x, shifts, dims=(), *, out):
    if not dims:
        out[...] = xp.roll(x.reshape(-1), shifts[0]).reshape(x.shape)
    else:
        out[...] = xp.roll(x, shifts, dims)
    return out


# -- repeat_interleave --------------------------------------------------------------------
def repeat_interleave_meta(input, repeats, dim=None, *, output_size=None):
    rank = len(input._sizes)
    if dim is None:
        sizes, dim = (layout.prod(input._sizes),), 0
    else:
        dim = layout.normalize_dim(dim, rank)
        sizes = input._sizes if rank else (1,)
    if mr.is_tensor(repeats):
        if repeats._dtype not in INDEX_DTYPES:
            raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for '{mr.TYPE_NAMES[repeats._dtype]}'")
        if len(repeats._sizes) > 1:
            raise RuntimeError("repeats has to be 1D tensor")
        count = layout.prod(repeats._sizes)
        if count not in (1, sizes[dim]):
            raise RuntimeError(
                "repeats must have the same size as input along dim, but got "
                f"repeats.size(0) = {count} and input.size(0) = {sizes[dim]}"
            )
        if output_size is None:
            raise ValueError("repeat_interleave with tensor repeats needs output_size (it depends on the data)")
        if output_size < 0:
            raise RuntimeError(f"output_size must be non-negative, got {output_size}")
        length = output_size
    else:
        if repeats < 0:
            raise RuntimeError("Repeats must be non-negative")
        length = sizes[dim] * repeats
    shape = sizes[:dim] + (length,) + sizes[dim + 1:]
    return mr.make_meta(shape, input._dtype, None, input._device)


def repeat_interleave_kernel(xp, x, repeats, dim=None, *, out, output_size=None):
    if dim is None:
        x, dim = x.reshape(-1), 0
    elif x.ndim == 0:
        x = x.reshape(1)
    if hasattr(repeats, "shape"):
        if repeats.size and int(repeats.min()) < 0:
            raise RuntimeError("repeats can not be negative")
        if repeats.size == 1:
            repeats = xp.broadcast_to(repeats.reshape(1), (x.shape[dim],))
        if int(repeats.sum()) != out.shape[dim]:
            raise RuntimeError("allocated size does not match required size")
    out[...] = xp.repeat(x, repeats, axis=dim)
    return out


OPS = {
    "roll": register_op("roll", meta=roll_meta, kernel=roll_kernel),
    "repeat_interleave": register_op(
        "repeat_interleave", meta=repeat_interleave_meta, kernel=repeat_interleave_kernel
    ),
}


# -- public functions ---------------------------------------------------------------------
def roll(input, shifts, dims=None):
    """Rotate elements along ``dims`` by ``shifts`` (the flattened tensor when dims is None).

    Example:
        >>> dl.roll(dl.tensor([1, 2, 3]), 1).tolist()
        [3, 1, 2]
    """
    shifts, dims = _roll_args(input.ndim, shifts, dims)
    return OPS["roll"](input, shifts, dims) if dims else OPS["roll"](input, shifts)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element ``repeats`` times along ``dim`` (the flattened tensor when dim is None).

    With a tensor of ``repeats`` the output length depends on their values: it is read from
    the data (a graph break in compiled code) unless ``output_size`` gives it.
    ``repeat_interleave(repeats)`` alone repeats ``0..n-1``.

    Example:
        >>> dl.repeat_interleave(dl.tensor([1, 2]), 2).tolist()
        [1, 1, 2, 2]
    """
    if repeats is None:  # repeat_interleave(repeats): indices 0..n-1, each repeated
        from ..creation.factories import arange

        repeats = input
        input = arange(layout.prod(repeats.shape), device=repeats.device)
    if mr.is_tensor(repeats):
        if output_size is None and repeats.dtype in INDEX_DTYPES and repeats.ndim <= 1:
            if repeats.numel() and repeats.min().item() < 0:
                raise RuntimeError("repeats can not be negative")
            total = repeats.sum().item()
            n = input.numel() if dim is None else (input.shape[dim] if input.ndim else 1)
            output_size = total * n if repeats.numel() == 1 else total
        kwargs = {} if output_size is None else {"output_size": output_size}
        return OPS["repeat_interleave"](input, repeats, dim, **kwargs)
    return OPS["repeat_interleave"](input, int(repeats), dim)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 1-D tensors: ``indexing="ij"`` (the default) or ``"xy"``.

    Each output is an expanded view of its input.

    Example:
        >>> [t.shape for t in dl.meshgrid(dl.arange(2), dl.arange(3), indexing="ij")]
        [dl.Size([2, 3]), dl.Size([2, 3])]
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    indexing = "ij" if indexing is None else indexing
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t.ndim}D")
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if t.device != tensors[0].device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    sizes = [t.numel() for t in tensors]
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    grids = []
    for i, t in enumerate(tensors):
        axis = (1 - i if i < 2 else i) if swap else i
        shape = [1] * len(tensors)
        shape[axis] = sizes[axis]
        grids.append(expand(reshape(t, shape), sizes))
    return tuple(grids)


def atleast_1d(*tensors):
    """Each tensor viewed with at least one dim (0-dim becomes shape ``(1,)``)."""
    return _atleast(tensors, 1)


def atleast_2d(*tensors):
    """Each tensor viewed with at least two dims (a vector becomes one row)."""
    return _atleast(tensors, 2)


def atleast_3d(*tensors):
    """Each tensor viewed with at least three dims (``(n,)`` -> ``(1, n, 1)``, ``(m, n)`` -> ``(m, n, 1)``)."""
    return _atleast(tensors, 3)


_ATLEAST_SHAPES = {
    1: lambda s: s or (1,),
    2: lambda s: s if len(s) >= 2 else (1,) + (s or (1,)),
    3: lambda s: s if len(s) >= 3 else ((1,) + (s or (1,)) + (1,) if len(s) < 2 else s + (1,)),
}


def _atleast(tensors, rank: int):
    single = len(tensors) == 1 and not isinstance(tensors[0], (list, tuple))
    items = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    shaped = tuple(
        t if t.ndim >= rank else reshape(t, _ATLEAST_SHAPES[rank](tuple(t.shape))) for t in items
    )
    return shaped[0] if single else shaped


def _check_nonempty(name: str, tensors) -> None:
    if len(tensors) == 0:
        raise RuntimeError(f"{name} expects a non-empty TensorList")


def hstack(tensors):
    """Join along dim 1 (dim 0 for 1-D tensors).

    Example:
        >>> dl.hstack([dl.ones(2), dl.zeros(3)]).shape
        dl.Size([5])
    """
    _check_nonempty("hstack", tensors)
    tensors = atleast_1d(list(tensors))
    return cat(list(tensors), 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    """Join along dim 0 after making every tensor at least 2-D.

    Example:
        >>> dl.vstack([dl.ones(2), dl.zeros(2)]).shape
        dl.Size([2, 2])
    """
    _check_nonempty("vstack", tensors)
    return cat(list(atleast_2d(list(tensors))), 0)


def dstack(tensors):
    """Join along dim 2 after making every tensor at least 3-D."""
    _check_nonempty("dstack", tensors)
    return cat(list(atleast_3d(list(tensors))), 2)


def column_stack(tensors):
    """Join along dim 1; 0-D and 1-D tensors become columns."""
    _check_nonempty("column_stack", tensors)
    columns = [reshape(t, (t.numel(), 1)) if t.ndim <= 1 else t for t in tensors]
    return cat(columns, 1)


METHODS = {"roll": roll, "repeat_interleave": repeat_interleave}
