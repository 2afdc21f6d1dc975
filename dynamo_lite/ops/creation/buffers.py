"""Shape and indexing functions ported from torch: tensor_split, broadcast_tensors, take, index_add, diagonal ...

``diagonal`` is a registry view op; the rest are compositions of registry ops (views,
``index``/``index_put``, ``where``, ``cat``), so graphs capture them and autograd
differentiates them.
"""
from __future__ import annotations

import itertools
import math
import operator

import numpy as np

from ..tensor import layout
from ..tensor.device import as_device
from ..tensor.dtype import as_dtype, bool_, int64, promote_types
from ..tensor.interop import from_numpy
from . import comparison, conversions, factories, indexing, meta_rules as mr, pointwise, rearrange, reductions
from . import shape_ops, views
from .registry import register_op

__all__ = [
    "tensor_split", "hsplit", "vsplit", "dsplit", "row_stack", "broadcast_shapes", "broadcast_tensors", "take",
    "take_along_dim", "index_add", "index_copy", "masked_scatter", "diagonal", "diag_embed", "diagflat",
    "tril_indices", "triu_indices", "combinations", "cartesian_prod", "block_diag", "trapezoid", "trapz",
    "asarray", "frombuffer",
]


# -- diagonal: a view op --------------------------------------------------------------------
def _diagonal(geom, offset: int = 0, dim1: int = 0, dim2: int = 1):
    sizes, strides, start = geom
    ndim = len(sizes)
    d1, d2 = layout.normalize_dim(dim1, ndim), layout.normalize_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    if offset >= 0:
        length, start = max(min(sizes[d1], sizes[d2] - offset), 0), start + offset * strides[d2]
    else:
        length, start = max(min(sizes[d1] + offset, sizes[d2]), 0), start - offset * strides[d1]
    if length == 0:
        start = geom[2]
    keep = [d for d in range(ndim) if d not in (d1, d2)]
    return (tuple(sizes[d] for d in keep) + (length,), tuple(strides[d] for d in keep) + (strides[d1] + strides[d2],),
            start)


# -- index tables as factory ops (their arguments are ints, so graphs hold no large constant) --
def _triangle_count(row: int, col: int, offset: int, upper: bool) -> int:
    """How many (r, c) of a row x col grid have ``c <= r + offset`` (lower) or ``c >= r + offset`` (upper)."""
    if upper:
        return row * col - _triangle_count(row, col, offset - 1, upper=False)
    return sum(max(0, min(col, r + offset + 1)) for r in range(row))


def triangle_indices_meta(row, col, offset, upper, *, dtype=int64, device=None):
    return mr.make_meta((2, _triangle_count(row, col, offset, upper)), dtype, None, device)


def triangle_indices_kernel(xp, row, col, offset, upper, *, dtype=int64, device=None, out):
    rows, cols = (np.triu_indices if upper else np.tril_indices)(row, offset, col)
    out[0], out[1] = xp.asarray(rows), xp.asarray(cols)
    return out


def _combination_count(n: int, r: int, with_replacement: bool) -> int:
    return math.comb(n + r - 1, r) if with_replacement else math.comb(n, r)


def combination_indices_meta(n, r, with_replacement, *, device=None):
    return mr.make_meta((_combination_count(n, r, with_replacement), r), int64, None, device)


def combination_indices_kernel(xp, n, r, with_replacement, *, device=None, out):
    choose = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    picks = np.array(list(choose(range(n), r)), dtype=np.int64).reshape(-1, r)
    out[...] = xp.asarray(picks)
    return out


OPS = {
    "diagonal": register_op("diagonal", meta=views.view_meta(_diagonal), view=_diagonal),
    "triangle_indices": register_op("triangle_indices", meta=triangle_indices_meta, kernel=triangle_indices_kernel),
    "combination_indices": register_op("combination_indices", meta=combination_indices_meta,
                                       kernel=combination_indices_kernel),
}


def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal ``offset`` above the main one of the planes (dim1, dim2), as a view in a new last dim.

    Example:
        >>> dl.diagonal(dl.tensor([[1, 2], [3, 4]])).tolist()
        [1, 4]
    """
    return OPS["diagonal"](input, operator.index(offset), operator.index(dim1), operator.index(dim2))


# -- splitting and stacking -----------------------------------------------------------------
def _index_list(value, name: str) -> list | int:
    """A tensor ``indices_or_sections`` as a Python int or list (reads its values: a graph break)."""
    if value.dtype != int64:
        raise RuntimeError(f"{name} expected tensor_indices_or_sections to have dtype of long, but got "
                           f"{mr.TYPE_NAMES[value.dtype]}")
    if value.ndim > 1:
        raise RuntimeError(f"{name} expected tensor_indices_or_sections to be a zero-dimensional or "
                           f"one-dimensional tensor, but got a tensor with {value.ndim} dims")
    return value.tolist()


def tensor_split(input, indices_or_sections, dim=0):
    """Split into ``sections`` views of near-equal size (the first ones one longer), or at ``indices``.

    Example:
        >>> [t.tolist() for t in dl.tensor_split(dl.arange(5), 2)]
        [[0, 1, 2], [3, 4]]
    """
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    if mr.is_tensor(indices_or_sections):
        indices_or_sections = _index_list(indices_or_sections, "tensor_split")
    dim = layout.normalize_dim(dim, input.ndim)
    size = input.shape[dim]
    if isinstance(indices_or_sections, int):
        sections = indices_or_sections
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        small, extra = divmod(size, sections)
        lengths = [small + 1] * extra + [small] * (sections - extra)
        bounds = list(itertools.accumulate(lengths))[:-1]
    else:
        bounds = [operator.index(i) for i in indices_or_sections]
    pieces, start = [], 0
    for stop in bounds + [size]:
        begin, end = min(max(start, 0), size), min(max(stop, start, 0), size)
        pieces.append(input.narrow(dim, begin, max(end - begin, 0)))
        start = stop
    return tuple(pieces)


def _directional_split(name: str, dim_of, min_dims: int):
    def fn(input, indices_or_sections):
        if input.ndim < min_dims:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} dimension, but got a tensor "
                               f"with {input.ndim} dimensions!")
        dim = dim_of(input.ndim)
        if isinstance(indices_or_sections, int):
            size = input.shape[dim]
            if indices_or_sections == 0 or size % indices_or_sections:
                raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                                   f"dimension {size} is not divisible by the split_size {indices_or_sections}!")
        return tensor_split(input, indices_or_sections, dim)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"""``tensor_split`` along dim {dim_of(3)} (sections must divide the size evenly).

    Example:
        >>> len(dl.{name}(dl.zeros(4, 4, 4), 2))
        2
    """
    return fn


hsplit = _directional_split("hsplit", lambda ndim: 1 if ndim > 1 else 0, 1)
vsplit = _directional_split("vsplit", lambda ndim: 0, 2)
dsplit = _directional_split("dsplit", lambda ndim: 2, 3)
row_stack = rearrange.vstack


def broadcast_shapes(*shapes):
    """The shape the given shapes (or sizes) broadcast to.

    Example:
        >>> dl.broadcast_shapes((2, 1), (3,))
        dl.Size([2, 3])
    """
    return layout.Size(layout.broadcast_shapes(*((s,) if isinstance(s, int) else tuple(s) for s in shapes)))


def broadcast_tensors(*tensors):
    """Views of the tensors expanded to their common broadcast shape.

    Example:
        >>> [tuple(t.shape) for t in dl.broadcast_tensors(dl.zeros(2, 1), dl.zeros(3))]
        [(2, 3), (2, 3)]
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = broadcast_shapes(*(tuple(t.shape) for t in tensors))
    return tuple(t.expand(shape) for t in tensors)


# -- indexing -------------------------------------------------------------------------------
def take(input, index):
    """The elements of ``input`` (read as 1-D) at ``index``, shaped like ``index``.

    Example:
        >>> dl.take(dl.tensor([[1, 2], [3, 4]]), dl.tensor([0, 3])).tolist()
        [1, 4]
    """
    return input.reshape(-1)[index]


def take_along_dim(input, indices, dim=None):
    """``gather`` along ``dim`` after broadcasting input and indices in the other dims (flat when dim is None).

    Example:
        >>> dl.take_along_dim(dl.tensor([[10, 30, 20]]), dl.tensor([[1]]), dim=1).tolist()
        [[30]]
    """
    if dim is None:
        return input.reshape(-1).gather(0, indices.reshape(-1))
    dim = layout.normalize_dim(dim, input.ndim)
    if input.ndim != indices.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {input.ndim} dimensions for input, and {indices.ndim} dimensions for indices")
    input_shape, index_shape = list(input.shape), list(indices.shape)
    input_shape[dim] = index_shape[dim] = 1
    common = list(layout.broadcast_shapes(tuple(input_shape), tuple(index_shape)))
    input_target, index_target = list(common), list(common)
    input_target[dim], index_target[dim] = input.shape[dim], indices.shape[dim]
    return input.expand(input_target).gather(dim, indices.expand(index_target))


def _index_write(name: str, accumulate: bool):
    """index_add / index_copy: ``index_put`` at ``index`` after ``dim`` full slices (the slices keep their place)."""
    def fn(input, dim, index, source, *, alpha=1, inplace=False):
        dim = layout.normalize_dim(dim, max(input.ndim, 1))
        if source.dtype != input.dtype:
            raise RuntimeError(f"{name}_(): self ({mr.TYPE_NAMES[input.dtype]}) and source "
                               f"({mr.TYPE_NAMES[source.dtype]}) must have the same scalar type")
        if index.ndim > 1:
            raise IndexError(f"{name}_(): Index should have dimension 1 or 0 (got {index.ndim})")
        values = source if alpha == 1 else pointwise.mul(source, alpha)
        target = input if inplace else conversions.clone(input)
        return indexing.index_put_(target, (None,) * dim + (index,), values, accumulate)

    return fn


_index_add = _index_write("index_add", accumulate=True)
_index_copy = _index_write("index_copy", accumulate=False)


def index_add(input, dim, index, source, *, alpha=1):
    """A copy of ``input`` with ``alpha * source`` added at ``index`` along ``dim`` (repeats accumulate).

    Example:
        >>> dl.index_add(dl.zeros(3), 0, dl.tensor([0, 0, 2]), dl.tensor([1.0, 2.0, 3.0])).tolist()
        [3.0, 0.0, 3.0]
    """
    return _index_add(input, dim, index, source, alpha=alpha)


def index_copy(input, dim, index, source):
    """A copy of ``input`` with the slices of ``source`` written at ``index`` along ``dim``.

    Example:
        >>> dl.index_copy(dl.zeros(3), 0, dl.tensor([2]), dl.tensor([5.0])).tolist()
        [0.0, 0.0, 5.0]
    """
    return _index_copy(input, dim, index, source)


def masked_scatter(input, mask, source):
    """``input`` with the positions where ``mask`` is True filled by ``source``'s elements in order.

    Example:
        >>> dl.masked_scatter(dl.zeros(4), dl.tensor([True, False, True, False]), dl.tensor([1.0, 2.0])).tolist()
        [1.0, 0.0, 2.0, 0.0]
    """
    if source.dtype != input.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{mr.TYPE_NAMES[input.dtype]} and {mr.TYPE_NAMES[source.dtype]}")
    if mask.dtype != bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{mr.TYPE_NAMES[mask.dtype]}")
    shape = layout.broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    mask = mask.expand(shape)
    # The k-th True position takes source's k-th element: its rank among the Trues, from a running count.
    # Other positions read element 0 and are discarded; a source shorter than the Trues is an IndexError.
    rank = pointwise.sub(mask.reshape(-1).to(int64).cumsum(0), 1).reshape(shape)
    gathered = source.reshape(-1)[comparison.where(mask, rank, 0)]
    return comparison.where(mask, gathered, input.expand(shape))


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Tensors whose (dim1, dim2) planes hold the last dim of ``input`` on diagonal ``offset``, zeros elsewhere.

    Example:
        >>> dl.diag_embed(dl.tensor([1, 2])).tolist()
        [[1, 0], [0, 2]]
    """
    n = input.shape[-1] if input.ndim else 1
    side = n + abs(offset)
    ndim = input.ndim + 1
    d1, d2 = layout.normalize_dim(dim1, ndim), layout.normalize_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    padding = factories.zeros(*input.shape[:-1], abs(offset), dtype=input.dtype, device=input.device)
    padded = shape_ops.cat([input, padding], -1)  # length ``side``: row r (offset >= 0) or column c holds it
    rows = factories.arange(side, device=input.device)
    on_diagonal = comparison.eq(rows.unsqueeze(0), pointwise.add(rows.unsqueeze(1), offset))  # [r, c]: c == r + offset
    values = padded.unsqueeze(-1) if offset >= 0 else padded.unsqueeze(-2)
    planes = comparison.where(on_diagonal, values, factories.zeros((), dtype=input.dtype, device=input.device))
    order = [d for d in range(ndim) if d not in (d1, d2)]
    return planes.permute(*_inverse_permutation(order + [d1, d2]))


def _inverse_permutation(perm: list) -> list:
    inverse = [0] * len(perm)
    for position, d in enumerate(perm):
        inverse[d] = position
    return inverse


def diagflat(input, offset=0):
    """A matrix with the flattened ``input`` on diagonal ``offset``.

    Example:
        >>> dl.diagflat(dl.tensor([[1, 2]])).tolist()
        [[1, 0], [0, 2]]
    """
    return diag_embed(input.reshape(-1), offset)


def _triangle_indices(name: str, upper: bool):
    def fn(row, col, offset=0, *, dtype=int64, device=None, layout=None):
        if row < 0:
            raise RuntimeError(f"row must be non-negative, got{row}")
        if col < 0:
            raise RuntimeError(f"col must be non-negative, got{col}")
        return OPS["triangle_indices"](row, col, offset, upper, dtype=as_dtype(dtype), device=as_device(device))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"""The (row, column) indices of the {'upper' if upper else 'lower'} triangle of a row x col matrix, as 2 x N.

    Example:
        >>> dl.{name}(2, 2).tolist()
        {[[0, 0, 1], [0, 1, 1]] if upper else [[0, 1, 1], [0, 0, 1]]}
    """
    return fn


tril_indices = _triangle_indices("tril_indices", upper=False)
triu_indices = _triangle_indices("triu_indices", upper=True)


def combinations(input, r=2, with_replacement=False):
    """The length-``r`` combinations of a 1-D tensor's elements, one per row (itertools' order).

    Example:
        >>> dl.combinations(dl.tensor([1, 2, 3])).tolist()
        [[1, 2], [1, 3], [2, 3]]
    """
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return factories.empty(0, dtype=input.dtype, device=input.device)
    return input[OPS["combination_indices"](input.shape[0], r, with_replacement, device=input.device)]


def cartesian_prod(*tensors):
    """Every tuple of one element from each 1-D tensor, one per row (the first varies slowest).

    Example:
        >>> dl.cartesian_prod(dl.tensor([1, 2]), dl.tensor([3, 4])).tolist()
        [[1, 3], [1, 4], [2, 3], [2, 4]]
    """
    if len(tensors) == 1:
        return tensors[0]
    grids = rearrange.meshgrid(*tensors, indexing="ij")
    return shape_ops.stack([g.reshape(-1) for g in grids], 1)


def block_diag(*tensors):
    """A block-diagonal matrix of the given 0-, 1- or 2-D tensors (promoted to a common dtype).

    Example:
        >>> dl.block_diag(dl.tensor([[1]]), dl.tensor([[2, 3]])).tolist()
        [[1, 0, 0], [0, 2, 3]]
    """
    blocks = []
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.ndim} dimensions")
        blocks.append(t.reshape(1, -1) if t.ndim < 2 else t)
    if not blocks:
        return factories.empty(1, 0)
    dtype = blocks[0].dtype
    for b in blocks[1:]:
        dtype = promote_types(dtype, b.dtype)
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        pieces = [factories.zeros(b.shape[0], left, dtype=dtype, device=b.device), b.to(dtype),
                  factories.zeros(b.shape[0], width - left - b.shape[1], dtype=dtype, device=b.device)]
        rows.append(shape_ops.cat(pieces, 1))
        left += b.shape[1]
    return shape_ops.cat(rows, 0)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The integral of ``y`` along ``dim`` by the trapezoidal rule, at spacing ``dx`` (default 1) or points ``x``.

    Example:
        >>> dl.trapezoid(dl.tensor([1.0, 2.0, 3.0])).item()
        4.0
    """
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments: x and dx both given")
    dim = layout.normalize_dim(dim, max(y.ndim, 1))
    length = y.shape[dim] if y.ndim else 0
    if length == 0:
        return reductions.sum(y * 0, dim)
    pair_sums = pointwise.add(y.narrow(dim, 1, length - 1), y.narrow(dim, 0, length - 1))
    if x is None:
        return pointwise.mul(reductions.sum(pair_sums, dim), (1.0 if dx is None else dx) / 2)
    if isinstance(x, (int, float)):
        return pointwise.mul(reductions.sum(pair_sums, dim), x / 2)
    if x.ndim == 1:
        steps = pointwise.sub(x[1:], x[:-1])
        view = [1] * y.ndim
        view[dim] = length - 1
        steps = steps.reshape(view)
    else:
        xd = layout.normalize_dim(dim - y.ndim, x.ndim) if x.ndim != y.ndim else dim
        steps = pointwise.sub(x.narrow(xd, 1, length - 1), x.narrow(xd, 0, length - 1))
    return pointwise.div(reductions.sum(pointwise.mul(pair_sums, steps), dim), 2)


trapz = trapezoid


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """``obj`` as a tensor, sharing memory with a tensor or NumPy array when no conversion (or ``copy=True``) asks otherwise.

    Example:
        >>> t = dl.ones(2); dl.asarray(t) is t
        True
    """
    if mr.is_tensor(obj):
        result = obj
        if (dtype is not None and dtype != obj.dtype) or (device is not None and str(device) != str(obj.device)):
            if copy is False:
                raise ValueError(f"can't alias tensor with dtype '{mr.TYPE_NAMES[obj.dtype]}' into dtype "
                                 f"'{mr.TYPE_NAMES[dtype or obj.dtype]}'.")
            result = obj.to(dtype=dtype or obj.dtype, device=device or obj.device)
        elif copy:
            result = conversions.clone(obj)
    elif isinstance(obj, np.ndarray) and copy is not True and (dtype is None or np.dtype(dtype.numpy) == obj.dtype):
        result = from_numpy(obj)
    else:
        result = factories.tensor(obj, dtype=dtype, device=device)
    return result.requires_grad_() if requires_grad else result


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor over the memory of an object with the buffer protocol (no copy).

    Example:
        >>> dl.frombuffer(bytearray(b"\\x01\\x02"), dtype=dl.uint8).tolist()
        [1, 2]
    """
    length = len(memoryview(buffer).cast("B"))
    itemsize = np.dtype(dtype.numpy).itemsize
    if length <= 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
                         f"({length} bytes) minus 1")
    if count <= 0 and (length - offset) % itemsize:
        raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a multiple "
                         f"of element size ({itemsize})")
    array = np.frombuffer(buffer, dtype=dtype.numpy, count=count, offset=offset)
    result = from_numpy(array)
    return result.requires_grad_() if requires_grad else result


def _inplace_index(fn):
    def method(self, dim, index, source, **kwargs):
        return fn(self, dim, index, source, inplace=True, **kwargs)

    return method


def masked_scatter_(self, mask, source):
    """In-place ``masked_scatter``: writes into ``self`` and returns it."""
    return self.copy_(masked_scatter(self, mask, source))


METHODS = {name: globals()[name] for name in (
    "tensor_split", "hsplit", "vsplit", "dsplit", "take", "take_along_dim", "index_add", "index_copy",
    "masked_scatter", "diagonal", "diag_embed", "diagflat")}
METHODS.update({"index_add_": _inplace_index(_index_add), "index_copy_": _inplace_index(_index_copy),
                "masked_scatter_": masked_scatter_})
