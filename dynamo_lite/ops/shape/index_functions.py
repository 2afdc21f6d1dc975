"""Indexing functions: take, take_along_dim, index_add, index_copy, masked_scatter (and their in-place forms).

All are compositions of registry ops (``gather``, ``index``/``index_put``, ``where``), so
graphs capture them and autograd differentiates them.
"""
from __future__ import annotations

from ...tensor import layout
from ...tensor.dtype import bool_, int64
from ..pointwise import comparison
from ..creation import conversions
from . import indexing
from ..core import meta_rules as mr
from ..pointwise import pointwise

__all__ = ["take", "take_along_dim", "index_add", "index_copy", "masked_scatter"]


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


def _inplace_index(fn):
    def method(self, dim, index, source, **kwargs):
        return fn(self, dim, index, source, inplace=True, **kwargs)

    return method


def masked_scatter_(self, mask, source):
    """In-place ``masked_scatter``: writes into ``self`` and returns it."""
    return self.copy_(masked_scatter(self, mask, source))


METHODS = {name: globals()[name] for name in (
    "take", "take_along_dim", "index_add", "index_copy", "masked_scatter")}
METHODS.update({"index_add_": _inplace_index(_index_add), "index_copy_": _inplace_index(_index_copy),
                "masked_scatter_": masked_scatter_})
