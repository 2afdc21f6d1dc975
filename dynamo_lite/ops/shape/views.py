"""View ops (view, transpose, permute, expand, squeeze, narrow, select ...) and their wrappers.

Each view is one registry op whose ``view`` rule (from ``tensor/views.py``) maps the
input geometry to the output's; its meta rule applies the same rule to a TensorMeta.
Wrappers normalize arguments (varargs shapes, negative dims, ``-1`` sizes) so that ops
receive plain ints. Composite views (reshape, flatten, chunk, split, unbind, movedim,
``.T``) are spelled with these ops. ``apply_view_to_array`` lets backends apply any
view op to a NumPy/CuPy array without copying.
"""
from __future__ import annotations

import operator

import numpy as np

from ...tensor import layout
from ...tensor import views as rules
from ...tensor.layout import as_size, contiguous_format, preserve_format
from ...tensor.meta import TensorMeta
from ..creation.conversions import clone_op
from ..core.registry import register_op

__all__ = [
    "as_strided", "broadcast_to", "chunk", "detach", "flatten", "movedim", "moveaxis", "narrow", "permute",
    "reshape", "select", "split", "squeeze", "swapaxes", "swapdims", "t", "transpose", "unbind", "unflatten",
    "unsqueeze",
]


def view_meta(rule):
    """The meta rule of a view op: the view rule applied to a TensorMeta's geometry."""

    def meta(x, *args, **kwargs):
        sizes, strides, offset = rule((x._sizes, x._strides, x._offset), *args, **kwargs)
        return TensorMeta(sizes, x._dtype, strides, x._device, offset)

    meta.__name__ = f"{rule.__name__}_meta"
    return meta


def _unfold(geom, dimension: int, size: int, step: int):
    sizes, strides, offset = geom
    ndim = len(sizes)
    dim = layout.normalize_dim(dimension, ndim)
    dim_size = sizes[dim] if ndim else 1
    if size > dim_size:
        raise RuntimeError(f"maximum size for tensor at dimension {dim} is {dim_size} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if ndim == 0:
        return (size,), (1,), offset
    new_sizes, new_strides = list(sizes), list(strides)
    new_sizes[dim] = (dim_size - size) // step + 1
    new_strides[dim] = strides[dim] * step
    return tuple(new_sizes) + (size,), tuple(new_strides) + (strides[dim],), offset


# name -> view rule; the op name is torch's.
VIEW_RULES = {
    "view": rules.view,
    "transpose": rules.transpose,
    "permute": rules.permute,
    "expand": rules.expand,
    "squeeze": rules.squeeze,
    "unsqueeze": rules.unsqueeze,
    "slice": rules.slice_dim,
    "narrow": rules.narrow,
    "select": rules.select,
    "as_strided": rules.as_strided,
    "unfold": _unfold,
    "alias": rules.alias,
    "detach": rules.alias,
}

# ``detach`` shares storage but is no view to autograd: writing through it leaves the
# source's history alone (torch's non-differentiable view).
UNTRACKED_VIEWS = {"detach"}
OPS = {
    name: register_op(name, meta=view_meta(rule), view=rule, tags=("untracked_view",) if name in UNTRACKED_VIEWS else ())
    for name, rule in VIEW_RULES.items()
}


# -- applying a view op to an array (for backends) --------------------------------------
def apply_view_to_array(xp, op, array, args=(), kwargs=None, offset: int = 0):
    """Apply view op ``op`` to ``array``: a strided array over the same memory, no copy.

    Args:
        xp: the array module (numpy or cupy) that owns ``array``.
        op: a registry op with a view rule (``REGISTRY["transpose"]`` ...).
        array: the input array.
        args, kwargs: the op's arguments after the input tensor, as the wrapper passed them.
        offset: the input's storage offset in elements; only matters for ``as_strided``
            with an explicit ``storage_offset`` (which is relative to the storage start).

    Returns:
        An array sharing ``array``'s memory, with the geometry the view rule gives.

    Example:
        >>> a = np.arange(6.0).reshape(2, 3)
        >>> apply_view_to_array(np, REGISTRY["transpose"], a, (0, 1)).strides
        (8, 24)
    """
    itemsize = array.itemsize
    if any(s % itemsize for s in array.strides):
        raise ValueError(f"array strides {array.strides} are not multiples of the itemsize {itemsize}")
    geom = (tuple(array.shape), tuple(s // itemsize for s in array.strides), offset)
    sizes, strides, new_offset = op.view(geom, *args, **(kwargs or {}))
    return strided_window(xp, array, sizes, strides, (new_offset - offset) * itemsize)


def strided_window(xp, array, sizes, strides, byte_shift: int = 0):
    """An array of ``sizes``/``strides`` (elements) starting ``byte_shift`` bytes past ``array``'s first element."""
    sizes = tuple(sizes)
    byte_strides = tuple(s * array.itemsize for s in strides)
    if layout.prod(sizes) == 0:
        return xp.empty(sizes, dtype=array.dtype)
    if isinstance(array, np.ndarray):
        interface = dict(array.__array_interface__)
        ptr, readonly = interface["data"]
        interface.update(data=(ptr + byte_shift, readonly), shape=sizes, strides=byte_strides)
        interface.pop("mask", None)
        return np.asarray(_ArrayInterface(interface, array))
    return xp.ndarray(sizes, dtype=array.dtype, memptr=array.data + byte_shift, strides=byte_strides)


class _ArrayInterface:
    """Exposes a raw array interface while keeping the array that owns the memory alive."""

    def __init__(self, interface, owner):
        self.__array_interface__ = interface
        self.owner = owner


# -- argument normalization --------------------------------------------------------------
def _varargs(values) -> tuple:
    """``f(2, 3)`` and ``f((2, 3))`` alike."""
    if len(values) == 1 and not isinstance(values[0], int) and hasattr(values[0], "__iter__"):
        values = values[0]
    try:
        return tuple(as_size(v) for v in values)
    except TypeError:
        raise TypeError(f"expected a sequence of ints, got {list(values)!r}") from None


def _ndim(x) -> int:
    return len(x._sizes)


# -- wrappers ---------------------------------------------------------------------------
def view(self, *shape):
    """A view with a new shape (one ``-1`` inferred); strides must allow it.

    Example:
        >>> dl.arange(12).view(3, -1).shape
        dl.Size([3, 4])
    """
    if len(shape) == 1 and type(shape[0]).__name__ == "dtype":
        raise TypeError("view(dtype) is not supported; use .to(dtype) for a converted copy")
    return OPS["view"](self, rules.infer_size(_varargs(shape), self.numel()))


def view_as(self, other):
    return view(self, other.shape)


def reshape(input, *shape):
    """``view`` when the strides allow it, else a contiguous copy viewed to ``shape``.

    Example:
        >>> dl.arange(6).view(2, 3).t().reshape(6).is_contiguous()
        True
    """
    shape = rules.infer_size(_varargs(shape), input.numel())
    if rules.view_strides(input._sizes, input._strides, shape) is None:
        input = clone_op(input, memory_format=contiguous_format)
    return OPS["view"](input, shape)


def reshape_as(self, other):
    return reshape(self, other.shape)


def transpose(input, dim0: int, dim1: int):
    """Swap two dims (a view).

    Example:
        >>> dl.arange(12).view(3, 4).transpose(0, 1).stride()
        (1, 4)
    """
    n = _ndim(input)
    return OPS["transpose"](input, layout.normalize_dim(dim0, n), layout.normalize_dim(dim1, n))


swapaxes = swapdims = transpose


def t(input):
    """Transpose a tensor of at most 2 dims (0-D and 1-D come back as views of themselves)."""
    n = _ndim(input)
    if n > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {n}D")
    return OPS["transpose"](input, 0, 1) if n == 2 else OPS["alias"](input)


def _T(self):
    n = _ndim(self)
    return OPS["permute"](self, tuple(range(n - 1, -1, -1))) if n >= 2 else OPS["alias"](self)


def _mT(self):
    n = _ndim(self)
    if n < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got {n}-D tensor.")
    return OPS["transpose"](self, n - 2, n - 1)


def permute(input, *dims):
    """Reorder dims (a view).

    Example:
        >>> dl.zeros(2, 3, 4).permute(2, 0, 1).shape
        dl.Size([4, 2, 3])
    """
    return OPS["permute"](input, rules.check_permutation(_varargs(dims), _ndim(input)))


def expand(self, *sizes):
    """Broadcast size-1 dims (and new leading dims) to ``sizes`` with stride 0; -1 keeps a size."""
    sizes = _varargs(sizes)
    target, _, _ = rules.expand((self._sizes, self._strides, 0), sizes)
    return OPS["expand"](self, target)


def expand_as(self, other):
    return expand(self, other.shape)


def broadcast_to(input, shape):
    return expand(input, shape)


def squeeze(input, dim=None):
    """Remove size-1 dims: all of them, or only among ``dim`` (an int or a tuple)."""
    dims = None if dim is None else layout.normalize_dims(dim, _ndim(input))
    return OPS["squeeze"](input, dims)


def unsqueeze(input, dim: int):
    """Insert a size-1 dim at ``dim`` (in ``[-ndim-1, ndim]``)."""
    return OPS["unsqueeze"](input, layout.normalize_dim(dim, _ndim(input) + 1))


def flatten(input, start_dim: int = 0, end_dim: int = -1):
    """Merge dims ``start_dim..end_dim`` into one (a view when possible, like reshape)."""
    n = _ndim(input)
    shape = rules.flatten_shape(input._sizes, start_dim, end_dim)
    if n and layout.normalize_dim(start_dim, n) == layout.normalize_dim(end_dim, n):
        return input
    return reshape(input, shape)


def unflatten(input, dim: int, sizes):
    """Split dim ``dim`` into ``sizes`` (one -1 inferred)."""
    return reshape(input, rules.unflatten_shape(input._sizes, dim, sizes))


def narrow(input, dim: int, start: int, length: int):
    """``length`` items of ``dim`` from ``start`` (a view)."""
    rules.narrow((input._sizes, input._strides, 0), dim, start, length)  # torch's errors
    dim = layout.normalize_dim(dim, _ndim(input))
    start = as_size(start)
    start = start + input._sizes[dim] if start < 0 else start
    return OPS["narrow"](input, dim, start, as_size(length))


def select(input, dim: int, index: int):
    """Index ``dim`` at ``index``, removing the dim (a view)."""
    rules.select((input._sizes, input._strides, 0), dim, index)  # validates
    dim = layout.normalize_dim(dim, _ndim(input))
    index = operator.index(index)
    return OPS["select"](input, dim, index % input._sizes[dim])


def slice_dim(input, dim: int = 0, start=None, end=None, step: int = 1):
    """``input[..., start:end:step]`` along ``dim`` (bounds clamped, step > 0)."""
    dim = layout.normalize_dim(dim, _ndim(input))
    step = 1 if step is None else operator.index(step)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    start, end, _ = slice(start, end, step).indices(input._sizes[dim])
    return OPS["slice"](input, dim, start, end, step)


def as_strided(input, size, stride, storage_offset=None):
    """A view with explicit sizes, strides and storage offset (in elements).

    Raises RuntimeError when the view would reach outside the tensor's storage.
    """
    size, stride, offset = rules.as_strided((input._sizes, input._strides, input._offset), size, stride, storage_offset)
    storage = getattr(input, "_storage", None)
    if storage is not None and hasattr(storage, "nbytes"):
        itemsize = input.dtype.itemsize
        need = rules.storage_extent(size, stride, offset) * itemsize
        if need > storage.nbytes():
            raise RuntimeError(
                f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
                f"itemsize {itemsize} requiring a storage size of {need} are out of bounds for "
                f"storage of size {storage.nbytes()}"
            )
    return OPS["as_strided"](input, size, stride, offset)


def unfold(self, dimension: int, size: int, step: int):
    """All windows of ``size`` along ``dimension`` every ``step`` items, as a new last dim."""
    dim = layout.normalize_dim(dimension, _ndim(self))
    return OPS["unfold"](self, dim, operator.index(size), operator.index(step))


def _pieces(input, lengths, dim: int) -> tuple:
    out, start = [], 0
    for length in lengths:
        out.append(OPS["narrow"](input, dim, start, length))
        start += length
    return tuple(out)


def chunk(input, chunks: int, dim: int = 0) -> tuple:
    """Split into ``chunks`` views of equal size (the last may be smaller; fewer if too small)."""
    if _ndim(input) == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    dim = layout.normalize_dim(dim, _ndim(input))
    return _pieces(input, rules.chunk_sizes(input._sizes[dim], chunks), dim)


def split(tensor, split_size_or_sections, dim: int = 0) -> tuple:
    """Split into views of ``split_size`` items (an int) or of the listed sizes.

    Example:
        >>> [p.shape[0] for p in dl.arange(5).split(2)]
        [2, 2, 1]
    """
    if _ndim(tensor) == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    dim = layout.normalize_dim(dim, _ndim(tensor))
    size = tensor._sizes[dim]
    if isinstance(split_size_or_sections, (list, tuple)):
        lengths = rules.check_split_with_sizes(size, dim, split_size_or_sections)
    else:
        lengths = rules.split_sizes(size, split_size_or_sections)
    return _pieces(tensor, lengths, dim)


def unbind(input, dim: int = 0) -> tuple:
    """All slices along ``dim`` (views without that dim)."""
    if _ndim(input) == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    dim = layout.normalize_dim(dim, _ndim(input))
    return tuple(OPS["select"](input, dim, i) for i in range(input._sizes[dim]))


def _iter(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(unbind(self, 0))


def movedim(input, source, destination):
    """Move dims ``source`` to positions ``destination`` (ints or sequences), as a permute."""
    return OPS["permute"](input, rules.movedim_order(_ndim(input), source, destination))


moveaxis = movedim


def detach(input):
    """A new tensor sharing storage (and version counter) with ``input``."""
    return OPS["detach"](input)


def contiguous(self, memory_format=contiguous_format):
    """``self`` if already contiguous in ``memory_format``, else a copy that is."""
    if memory_format is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    if self.is_contiguous(memory_format):
        return self
    return clone_op(self, memory_format=memory_format)


METHODS = {
    "view": view,
    "view_as": view_as,
    "reshape": reshape,
    "reshape_as": reshape_as,
    "transpose": transpose,
    "swapaxes": swapaxes,
    "swapdims": swapdims,
    "t": t,
    "T": property(_T),
    "mT": property(_mT),
    "permute": permute,
    "expand": expand,
    "expand_as": expand_as,
    "squeeze": squeeze,
    "unsqueeze": unsqueeze,
    "flatten": flatten,
    "unflatten": unflatten,
    "narrow": narrow,
    "select": select,
    "as_strided": as_strided,
    "unfold": unfold,
    "chunk": chunk,
    "split": split,
    "unbind": unbind,
    "__iter__": _iter,
    "movedim": movedim,
    "moveaxis": moveaxis,
    "detach": detach,
    "contiguous": contiguous,
}
