"""Iteration spaces of generated kernels: broadcasting, dim order, coalescing, offset code.

A kernel walks a logical shape with one linear index per work item. Every operand
(input, output) has strides over that shape (0 where it broadcasts); the linear index
is unravelled into coordinates and each operand's element offset is the dot product
of coordinates and its strides. Sizes and strides are kernel arguments (NOTE: [sizes
as kernel arguments] in pointwise.py): the source holds only the loop's structure.
"""
from __future__ import annotations

from dataclasses import dataclass

from dynamo_lite.tensor.layout import prod

# Indices stay 32-bit below this: the headroom keeps ``i += blockDim.x * gridDim.x`` of a
# grid-stride loop from overflowing (grids are capped far below 2**27 threads).
INT32_LIMIT = 2**31 - 2**27


def broadcast_strides(shape: tuple, sizes: tuple, strides: tuple) -> tuple:
    """An operand's strides over ``shape`` (right-aligned; 0 where it is broadcast)."""
    offset = len(shape) - len(sizes)
    if offset < 0:
        raise ValueError(f"operand of shape {sizes} does not broadcast to {shape}")
    result = [0] * len(shape)
    for i, (size, stride) in enumerate(zip(sizes, strides)):
        target = shape[offset + i]
        if size == target:
            result[offset + i] = stride if size != 1 else 0
        elif size != 1:
            raise ValueError(f"operand of shape {sizes} does not broadcast to {shape}")
    return tuple(result)


@dataclass(frozen=True)
class Space:
    """A coalesced iteration space: ``sizes`` outer to inner, one stride tuple per operand."""

    sizes: tuple
    strides: tuple  # strides[k] = operand k's strides, aligned with ``sizes``

    @property
    def numel(self) -> int:
        return prod(self.sizes)

    def index_type(self) -> str:
        """``int`` when every index and offset fits in 32 bits (cheaper division), else ``long long``."""
        extent = self.numel
        for strides in self.strides:
            extent = max(extent, sum((n - 1) * abs(s) for n, s in zip(self.sizes, strides)) + 1)
        return "int" if extent <= INT32_LIMIT else "long long"


def make_space(shape: tuple, operand_strides: list, order_by: int = 0) -> Space:
    """The loop nest over ``shape`` for operands with the given (broadcast) strides.

    Size-1 dims are dropped; dims are ordered outer to inner by operand ``order_by``'s
    strides (its memory order, so that operand is written with unit steps), then
    neighbours that every operand steps through contiguously are merged.

    Example:
        >>> make_space((4, 8), [(8, 1), (8, 1)]).sizes   # both contiguous: one flat dim
        (32,)
    """
    dims = [d for d in range(len(shape)) if shape[d] != 1]
    key = operand_strides[order_by] if operand_strides else None
    if key is not None:
        # Stable sort: larger stride = further out; broadcast (0) dims keep their place
        # relative to each other but go outermost, where they cost nothing.
        dims.sort(key=lambda d: -key[d] if key[d] else -float("inf"))
    sizes: list = []
    strides: list = [[] for _ in operand_strides]
    for d in dims:
        if sizes and all(s[-1] == op[d] * shape[d] for s, op in zip(strides, operand_strides)):
            sizes[-1] *= shape[d]
            for s, op in zip(strides, operand_strides):
                s[-1] = op[d]
            continue
        sizes.append(shape[d])
        for s, op in zip(strides, operand_strides):
            s.append(op[d])
    return Space(tuple(sizes), tuple(tuple(s) for s in strides))


def split_space(shape: tuple, reduced: tuple, operand_strides: list, outer_order: int, inner_order: int) -> tuple:
    """``(outer, inner)`` Spaces: the kept dims and the ``reduced`` dims of ``shape``.

    Work item ``o`` of the outer space and step ``r`` of the inner space address
    element ``outer_offset(o) + inner_offset(r)`` of every operand. The outer space is
    ordered by operand ``outer_order`` (the output), the inner by ``inner_order``.
    """
    kept = [d for d in range(len(shape)) if d not in reduced]

    def sub(dims, order):
        return make_space(tuple(shape[d] for d in dims), [tuple(op[d] for d in dims) for op in operand_strides], order)

    return sub(kept, outer_order), sub(sorted(reduced), inner_order)


def offset_code(space: Space, index: str, names: list, index_type: str, prefix: str, value,
                arg_prefix: str | None = None) -> tuple:
    """C statements unravelling ``index`` over ``space``; returns ``(lines, offsets)``.

    ``offsets[k]`` is a C expression for operand k's element offset (``names`` name the
    operands in comments only). Coordinates are ``<prefix>c<dim>``. ``value(name, n)``
    writes a size or stride ``n`` (a ``SizeArguments``: a kernel argument, NOTE: [sizes
    as kernel arguments]) named ``<arg_prefix>size<dim>`` or
    ``<arg_prefix>stride<operand>_<dim>``; ``arg_prefix`` defaults to ``prefix`` (loops
    over one space with other coordinate prefixes share its arguments).
    """
    arg_prefix = prefix if arg_prefix is None else arg_prefix
    sizes = space.sizes
    if not sizes:
        return [], ["0"] * len(space.strides)
    lines = []
    coords = []
    if len(sizes) == 1:
        coords = [index]
    else:
        rest = f"{prefix}rest"
        lines.append(f"{index_type} {rest} = {index};")
        coords = [None] * len(sizes)
        for d in range(len(sizes) - 1, 0, -1):
            name = f"{prefix}c{d}"
            size = value(f"{arg_prefix}size{d}", sizes[d])
            lines.append(f"const {index_type} {name} = {rest} % {size}; {rest} /= {size};")
            coords[d] = name
        coords[0] = rest
    offsets = []
    for k, (strides, name) in enumerate(zip(space.strides, names)):
        terms = [c if s == 1 else f"{c} * {value(f'{arg_prefix}stride{k}_{d}', s)}"
                 for d, (c, s) in enumerate(zip(coords, strides)) if s != 0]
        offsets.append("(" + " + ".join(terms) + ")" if terms else "0")
    return lines, offsets
