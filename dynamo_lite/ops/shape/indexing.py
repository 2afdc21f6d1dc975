"""``x[index]`` and ``x[index] = value``: basic indexing as one view op, advanced indexing as copies.

An index is split as torch splits it: every int, slice, ``None`` and ``...`` goes into one
``index_basic`` view (a single graph node whose argument is the spec as plain Python
values); integer tensors, lists and bool masks then index the dims they stand on with
the ``index`` op (a copy) or, for assignment, the in-place ``index_put_`` op. Boolean
masks become integer indices first, which needs their data (NOTE: [masks need data]).
"""
from __future__ import annotations

import operator

import numpy as np

from ...tensor import indexing as rules
from ...tensor.dtype import bool_, int16, int32, int64, int8, uint8
from ...tensor.layout import broadcast_shapes
from ...tensor.meta import TensorMeta
from ...tensor.tensor import from_array
from ..pointwise.comparison import masked_fill_
from ..creation.conversions import _is_tensor, copy_, fill_, to
from ..core.registry import register_op
from .views import view, view_meta

__all__ = ["index_put"]

_INDEX_DTYPES = (int64, int32, int16, int8)


# -- ops ------------------------------------------------------------------------------------
def _index_shapes(indices) -> list:
    shapes = []
    for idx in indices:
        if idx is None:
            shapes.append(None)
            continue
        if idx.dtype not in _INDEX_DTYPES:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        shapes.append(idx._sizes)
    return shapes


def _index_meta(x, indices):
    shape = rules.advanced_index_shape(x._sizes, _index_shapes(indices))
    return TensorMeta(shape, x._dtype, None, x._device)


def _key(indices) -> tuple:
    return tuple(slice(None) if idx is None else idx for idx in indices)


def _torch_index_error(exc: IndexError) -> IndexError:
    return IndexError(str(exc).replace(" for axis ", " for dimension "))


def _index_kernel(xp, x, indices, *, out):
    try:
        return x[_key(indices)]
    except IndexError as exc:
        raise _torch_index_error(exc) from None


def _index_put_meta(x, indices, values, accumulate=False):
    shape = rules.advanced_index_shape(x._sizes, _index_shapes(indices))
    if _is_tensor(values):
        try:
            ok = broadcast_shapes(values._sizes, shape) == tuple(shape)
        except RuntimeError:
            ok = False
        if not ok:
            raise RuntimeError(
                f"shape mismatch: value tensor of shape {list(values._sizes)} cannot be broadcast to "
                f"indexing result of shape {list(shape)}"
            )
    return TensorMeta.of(x)


def _index_put_kernel(xp, x, indices, values, *, out, accumulate=False):
    key = _key(indices)
    try:
        if not accumulate:
            out[key] = values
        elif isinstance(out, np.ndarray):
            np.add.at(out, key, values)
        else:
            import cupyx

            cupyx.scatter_add(out, key, values)
    except IndexError as exc:
        raise _torch_index_error(exc) from None
    return out


index_basic_op = register_op(
    "index_basic", meta=view_meta(rules.basic_index), view=rules.basic_index,
    doc="x[spec] for a spec of ints, slices, None and Ellipsis: one view.",
)
index_op = register_op("index", meta=_index_meta, kernel=_index_kernel, doc="Advanced (integer-tensor) indexing.")
index_put_op = register_op("index_put_", meta=_index_put_meta, kernel=_index_put_kernel, tags=("inplace",))


# -- parsing an index -------------------------------------------------------------------------
class _Advanced:
    """A placeholder for the dims an advanced index entry stands on."""

    __slots__ = ("tensor", "ndim", "is_mask")

    def __init__(self, tensor, ndim: int, is_mask: bool):
        self.tensor, self.ndim, self.is_mask = tensor, ndim, is_mask


def _index_tensor(value):
    from ..creation.factories import tensor

    if isinstance(value, list) and len(value) == 0:
        return tensor([], dtype=int64)
    return tensor(value)


def _entry(item):
    """Classify one index item: a basic entry, or an _Advanced placeholder."""
    if item is None or item is Ellipsis or isinstance(item, slice):
        return item
    if isinstance(item, (bool, np.bool_)):
        return _Advanced(bool(item), 0, True)
    if isinstance(item, (list, np.ndarray)):
        item = _index_tensor(item)
    elif not _is_tensor(item) and hasattr(type(item), "__index__"):
        return operator.index(item)
    if _is_tensor(item):
        if item.dtype in (bool_, uint8):
            return _Advanced(item, item.ndim, True)
        if item.dtype not in _INDEX_DTYPES:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return _Advanced(item, 1, False)
    raise IndexError(
        "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
        f"indices (got {type(item).__name__})"
    )


def _split_index(x, index):
    """Basic spec (placeholders become full slices) and [(output dim, _Advanced)]."""
    items = index if isinstance(index, tuple) else (index,)
    entries = [_entry(item) for item in items]
    ndim = x.ndim
    consumed = sum(
        e.ndim if isinstance(e, _Advanced) else 1 for e in entries if e is not None and e is not Ellipsis
    )
    if sum(1 for e in entries if e is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    spec, advanced, out_dim = [], [], 0
    for e in entries:
        if e is Ellipsis:
            spec.extend([slice(None)] * (ndim - consumed))
            out_dim += ndim - consumed
        elif isinstance(e, _Advanced):
            advanced.append((out_dim, e))
            if e.ndim == 0:  # a Python/0-d bool adds a size-1 dim that it then masks
                spec.append(None)
                out_dim += 1
            else:
                spec.extend([slice(None)] * e.ndim)
                out_dim += e.ndim
        elif isinstance(e, int):
            spec.append(e)
        else:
            spec.append(e)
            out_dim += 1
    return tuple(spec), advanced


def _is_identity(spec, ndim: int) -> bool:
    return len(spec) <= ndim and all(isinstance(s, slice) and s == slice(None) for s in spec)


def _mask_indices(mask, target_sizes, first_dim: int) -> list:
    """NOTE: [masks need data] A mask selects a data-dependent number of items, so it is
    turned into integer indices by reading it; on proxy tensors (tracing) reading raises.
    """
    if isinstance(mask.tensor, bool):
        from ..creation.factories import tensor

        return [tensor([0] if mask.tensor else [], dtype=int64)]
    m = mask.tensor
    if m.ndim == 0:
        return _mask_indices(_Advanced(bool(m.item()), 0, True), target_sizes, first_dim)
    for j, size in enumerate(m._sizes):
        if target_sizes[first_dim + j] != size:
            raise IndexError(
                f"The shape of the mask {list(m._sizes)} at index {j} does not match the shape of the "
                f"indexed tensor {list(target_sizes)} at index {first_dim + j}"
            )
    arr = m._array()
    return [from_array(nz.astype(np.int64), device=m.device) for nz in arr.nonzero()]


def _parse(x, index):
    """(basic view of x, indices tuple for ``index``/``index_put_`` or None)."""
    spec, advanced = _split_index(x, index)
    target = x if advanced and _is_identity(spec, x.ndim) else index_basic_op(x, spec)
    if not advanced:
        return target, None
    indices = {}
    for out_dim, entry in advanced:
        if entry.is_mask:
            tensors = _mask_indices(entry, target._sizes, out_dim)
            first = out_dim
        else:
            tensors, first = [entry.tensor], out_dim
        for j, t in enumerate(tensors):
            indices[first + j] = t
    return target, tuple(indices.get(d) for d in range(max(indices) + 1))


def getitem(self, index):
    """``self[index]``: a view for ints/slices/None/..., a copy when tensors or lists index.

    Example:
        >>> x = dl.arange(12).view(3, 4)
        >>> x[1, ::2].tolist(), x[[0, 2]].shape
        ([4, 6], dl.Size([2, 4]))
    """
    target, indices = _parse(self, index)
    return target if indices is None else index_op(target, indices)


def _as_value(self, value):
    if _is_tensor(value) or isinstance(value, (bool, int, float, np.number, np.bool_)):
        return value
    from ..creation.factories import tensor

    return tensor(value, dtype=self.dtype, device=self.device)


def _strip_leading_ones(value, ndim: int):
    """Drop leading size-1 dims of a value wider than its target (as assignment allows)."""
    sizes = value._sizes
    extra = len(sizes) - ndim
    if extra > 0 and all(s == 1 for s in sizes[:extra]):
        return view(value, sizes[extra:])
    return value


def _is_full_mask(self, index) -> bool:
    return _is_tensor(index) and index.dtype is bool_ and index.shape == self.shape


def setitem(self, index, value) -> None:
    """``self[index] = value`` in place (value: a number or a tensor broadcast to the target)."""
    value = _as_value(self, value)
    if _is_full_mask(self, index) and (not _is_tensor(value) or value.ndim == 0):
        # x[mask] = v with a mask shaped like x is masked_fill_: no need to read the mask
        # (so it stays traceable), see NOTE: [masks need data].
        masked_fill_(self, index, value)
        return
    target, indices = _parse(self, index)
    if indices is None:
        if _is_tensor(value):
            copy_(target, _strip_leading_ones(value, target.ndim))
        else:
            fill_(target, value)
        return
    if _is_tensor(value) and value.device != self.device:
        value = to(value, self.device)
    index_put_op(target, indices, value)


def index_put_(self, indices, values, accumulate: bool = False):
    """Write ``values`` at integer-tensor ``indices`` (one per leading dim; None keeps a dim)."""
    return index_put_op(self, tuple(indices), _as_value(self, values), accumulate=accumulate)


def index_put(input, indices, values, accumulate: bool = False):
    """Out-of-place ``index_put_``: a copy of ``input`` with ``values`` written at ``indices``."""
    from ..creation.conversions import clone

    return index_put_(clone(input), indices, values, accumulate)


METHODS = {
    "__getitem__": getitem,
    "__setitem__": setitem,
    "index_put_": index_put_,
    "index_put": index_put,
}
