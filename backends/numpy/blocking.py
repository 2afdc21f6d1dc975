"""Cache-sized blocking of a fused pointwise group: one iteration space, sliced into blocks.

NOTE: [blocked evaluation] A fused group computes every member over the group's shape.
Evaluated op by op over whole arrays, each intermediate streams through main memory;
evaluated block by block, a block's intermediates stay in cache. Blocks are slices of
one *iteration space* shared by every operand (inputs, outputs): the group shape with
its dims ordered like the primary output's memory (outermost first), size-1 dims
dropped, and adjacent dims merged wherever every operand steps through them as one
(``stride[i] == stride[i+1] * size[i+1]``; broadcast operands have stride 0). A
contiguous group becomes one flat dim; a bias broadcast over rows stays two dims. Each
operand is then one strided window of that shape over its own memory, and a block is
the same index tuple on all of them: fixed indices on the outer dims, a slice on the
block dim, everything of the inner dims. Which memory an operand lives in, its layout
and broadcasting only change its window's strides, never the loop.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

# Bytes of one operand per block: large enough that NumPy's per-call overhead (and, with
# two threads, the hand-over of the GIL) is small against the work, small enough that a
# block's few live operands stay in the core's L2/L3 caches. Measured in docs/performance.md.
DEFAULT_BLOCK_BYTES = 256 * 1024


@dataclass(frozen=True)
class Blocking:
    """The iteration space of a fused group and its blocks.

    Attributes:
        dims: for each iteration dim, the group dims it merges (outermost first).
        shape: the iteration space's sizes.
        block_shape: the shape of a full block (the block dim's chunk, then inner dims).
        indices: one index tuple per block, applied to every operand's window.
        rows: for each block, its length along the block dim (the last may be shorter).
    """

    dims: tuple
    shape: tuple
    block_shape: tuple
    indices: tuple
    rows: tuple

    def strides_of(self, strides: tuple) -> tuple:
        """An operand's element strides in the iteration space, from its strides in the
        group shape (broadcast dims already 0): a merged dim steps like its innermost part."""
        return tuple(strides[dims[-1]] for dims in self.dims)

    @property
    def block_count(self) -> int:
        return len(self.indices)


def broadcast_strides(shape: tuple, sizes: tuple, strides: tuple) -> tuple:
    """Strides of an operand of ``sizes``/``strides`` broadcast to ``shape`` (0 where it repeats)."""
    lead = len(shape) - len(sizes)
    out = [0] * len(shape)
    for i, (size, stride) in enumerate(zip(sizes, strides)):
        out[lead + i] = stride if size == shape[lead + i] and size != 1 else 0
    return tuple(out)


def iteration_dims(shape: tuple, primary: tuple, operands: list) -> list:
    """Group dims merged into iteration dims, outermost first (see NOTE: [blocked evaluation]).

    Args:
        shape: the group shape.
        primary: the primary output's strides, which decide the dim order.
        operands: every operand's strides broadcast to ``shape``.
    """
    order = sorted((d for d in range(len(shape)) if shape[d] != 1), key=lambda d: -primary[d])
    merged: list = []
    for d in order:
        if merged:
            inner = merged[-1][-1]
            if all(s[inner] == s[d] * shape[d] for s in operands):
                merged[-1].append(d)
                continue
        merged.append([d])
    return [tuple(m) for m in merged]


def plan_blocking(shape: tuple, primary: tuple, operands: list, itemsize: int,
                  block_bytes: int = DEFAULT_BLOCK_BYTES) -> Blocking | None:
    """Blocks for a group of ``shape``, or None when one block would hold it all.

    Args:
        shape: the group shape.
        primary: strides (in ``shape``) of the output whose memory order the loop follows.
        operands: every operand's strides broadcast to ``shape``.
        itemsize: the widest element size among the operands.
        block_bytes: target bytes of one operand per block.

    Example:
        >>> b = plan_blocking((2048, 2048), (2048, 1), [(2048, 1), (0, 1)], 4)
        >>> b.shape, b.block_shape, b.block_count
        ((2048, 2048), (32, 2048), 64)
    """
    dims = iteration_dims(shape, primary, operands)
    sizes = tuple(_prod(shape[d] for d in group) for group in dims)
    limit = max(1, block_bytes // itemsize)
    inner, axis = 1, len(sizes)
    while axis > 0 and inner * sizes[axis - 1] <= limit:
        inner *= sizes[axis - 1]
        axis -= 1
    if axis == 0:
        return None
    axis -= 1  # the dim that is sliced; dims after it are whole in every block
    chunk = max(1, limit // inner)
    indices, rows = [], []
    for outer in itertools.product(*(range(n) for n in sizes[:axis])):
        for start in range(0, sizes[axis], chunk):
            stop = min(start + chunk, sizes[axis])
            index = outer + (slice(start, stop),)
            indices.append(index if len(index) > 1 else index[0])
            rows.append(stop - start)
    block_shape = (min(chunk, sizes[axis]),) + sizes[axis + 1:]
    return Blocking(tuple(dims), sizes, block_shape, tuple(indices), tuple(rows))


def _prod(values) -> int:
    result = 1
    for v in values:
        result *= v
    return result
