"""Diagonals and triangles: diagonal (a registry view op), diag_embed, diagflat, tril/triu_indices, block_diag.

The functions other than ``diagonal`` are compositions of registry ops (views, ``where``,
``cat``), so graphs capture them and autograd differentiates them.
"""
from __future__ import annotations

import operator

import numpy as np

from ...tensor import layout
from ...tensor.device import as_device
from ...tensor.dtype import as_dtype, int64, promote_types
from ..pointwise import comparison
from ..creation import factories
from ..core import meta_rules as mr
from ..pointwise import pointwise
from . import shape_ops, views
from ..core.registry import register_op

__all__ = ["diagonal", "diag_embed", "diagflat", "tril_indices", "triu_indices", "block_diag"]


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


OPS = {
    "diagonal": register_op("diagonal", meta=views.view_meta(_diagonal), view=_diagonal),
    "triangle_indices": register_op("triangle_indices", meta=triangle_indices_meta, kernel=triangle_indices_kernel),
}


def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal ``offset`` above the main one of the planes (dim1, dim2), as a view in a new last dim.

    Example:
        >>> dl.diagonal(dl.tensor([[1, 2], [3, 4]])).tolist()
        [1, 4]
    """
    return OPS["diagonal"](input, operator.index(offset), operator.index(dim1), operator.index(dim2))


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


METHODS = {name: globals()[name] for name in ("diagonal", "diag_embed", "diagflat")}
