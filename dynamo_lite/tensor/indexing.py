"""Indexing rules on geometry: basic indexing as one view, advanced indexing's result shape.

Basic indexing (ints, slices with positive step, ``None``, ``...``) never copies: it is a
single view rule over ``(sizes, strides, offset)``. Advanced indexing (integer tensors)
copies; here only its result shape is computed, with the same placement rule as torch:
the broadcast index shape replaces the indexed dims when those are adjacent, and goes
first otherwise.

Example:
    >>> basic_index(((3, 4), (4, 1), 0), (1, slice(None, None, 2)))
    ((2,), (2,), 4)
"""
from __future__ import annotations

import operator

from . import layout
from .symint import SymInt


def _is_int(item) -> bool:
    return not isinstance(item, bool) and hasattr(type(item), "__index__")


def check_basic_spec(spec, ndim: int) -> tuple:
    """Validate a basic index tuple and expand its ``...``; returns a spec without Ellipsis."""
    spec = tuple(spec)
    ellipses = sum(1 for item in spec if item is Ellipsis)
    if ellipses > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(1 for item in spec if item is not None and item is not Ellipsis)
    if consumed > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    for item in spec:
        if not (item is None or item is Ellipsis or isinstance(item, slice) or _is_int(item)):
            raise TypeError(f"basic index entries are ints, slices, None or ..., got {type(item).__name__}")
    if ellipses:
        at = spec.index(Ellipsis)
        spec = spec[:at] + (slice(None),) * (ndim - consumed) + spec[at + 1 :]
    return spec


def _slice_bounds(item: slice, size: int):
    step = 1 if item.step is None else operator.index(item.step)
    if step <= 0:
        raise ValueError("step must be greater than zero")
    start = _clamped(item.start, size, 0)
    stop = _clamped(item.stop, size, size)
    return start, max(0, -(-(stop - start) // step)), step


def _clamped(bound, size, default):
    """A slice bound as ``slice.indices`` resolves it (positive step), symbolic sizes allowed."""
    if bound is None:
        return default
    bound = _index(bound)
    if bound < 0:
        bound += size
        return 0 if bound < 0 else bound
    return size if bound > size else bound


def _index(item):
    return item if type(item) is SymInt else operator.index(item)


def basic_index(geom, spec):
    """``x[spec]`` for a basic index tuple: one view of ``geom``."""
    sizes, strides, offset = geom
    spec = check_basic_spec(spec, len(sizes))
    out_sizes, out_strides = [], []
    dim = 0
    for item in spec:
        if item is None:
            out_sizes.append(1)
            out_strides.append(sizes[dim] * strides[dim] if dim < len(sizes) else 1)
        elif isinstance(item, slice):
            start, length, step = _slice_bounds(item, sizes[dim])
            offset += start * strides[dim]
            out_sizes.append(length)
            out_strides.append(strides[dim] * step)
            dim += 1
        else:
            index, size = _index(item), sizes[dim]
            if not -size <= index < size:
                raise IndexError(f"index {index} is out of bounds for dimension {dim} with size {size}")
            offset += (index % size) * strides[dim]
            dim += 1
    out_sizes.extend(sizes[dim:])
    out_strides.extend(strides[dim:])
    return tuple(out_sizes), tuple(out_strides), offset


def basic_output_dims(spec, ndim: int) -> list:
    """For each entry of an Ellipsis-free basic spec, the output dim it makes (None for ints)."""
    out, next_dim = [], 0
    for item in check_basic_spec(spec, ndim):
        if item is None or isinstance(item, slice):
            out.append(next_dim)
            next_dim += 1
        else:
            out.append(None)
    return out


def advanced_index_shape(sizes, index_shapes) -> tuple:
    """Result shape of ``aten.index``: ``index_shapes[i]`` indexes dim i (None keeps it)."""
    sizes = tuple(sizes)
    if len(index_shapes) > len(sizes):
        raise IndexError(
            f"too many indices for tensor of dimension {len(sizes)} (got {len(index_shapes)})"
        )
    used = [i for i, s in enumerate(index_shapes) if s is not None]
    if not used:
        return sizes
    shapes = [tuple(index_shapes[i]) for i in used]
    try:
        broadcast = layout.broadcast_shapes(*shapes)
    except RuntimeError:
        listed = ", ".join(str(list(s)) for s in shapes)
        raise IndexError(f"shape mismatch: indexing tensors could not be broadcast together with shapes {listed}") from None
    first, last = used[0], used[-1]
    if used == list(range(first, last + 1)):
        return sizes[:first] + broadcast + sizes[last + 1 :]
    return broadcast + tuple(s for i, s in enumerate(sizes) if i not in used)
