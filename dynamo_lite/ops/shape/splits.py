"""Splitting, broadcasting and combining: tensor_split/hsplit/vsplit/dsplit, broadcast_tensors, combinations.

All are compositions of registry ops (views, ``index``, ``cat``, ``stack``), so graphs
capture them and autograd differentiates them.
"""
from __future__ import annotations

import itertools
import math
import operator

import numpy as np

from ...tensor import layout
from ...tensor.dtype import int64
from ..creation import factories
from ..core import meta_rules as mr
from . import rearrange
from . import shape_ops
from ..core.registry import register_op

__all__ = [
    "tensor_split", "hsplit", "vsplit", "dsplit", "row_stack", "broadcast_shapes", "broadcast_tensors",
    "combinations", "cartesian_prod",
]


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
    "combination_indices": register_op("combination_indices", meta=combination_indices_meta,
                                       kernel=combination_indices_kernel),
}


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


METHODS = {name: globals()[name] for name in ("tensor_split", "hsplit", "vsplit", "dsplit")}
