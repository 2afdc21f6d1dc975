"""View rules: pure functions mapping a geometry ``(sizes, strides, offset)`` to a new one.

Every view op (``view``, ``transpose``, ``expand``, slicing ...) is one of these rules; the
eager dispatcher applies it to a tensor, meta rules apply it to a TensorMeta and backends
apply it to an array (``ops.views.apply_view_to_array``). No data is involved, and the
rules never delegate view semantics to NumPy. Errors are raised as torch raises them.

Example:
    >>> transpose(((3, 4), (4, 1), 0), 0, 1)
    ((4, 3), (1, 4), 0)
"""
from __future__ import annotations

import operator

from . import layout
from .layout import normalize_dim, prod


def _ints(values, what: str = "size") -> tuple:
    try:
        return tuple(layout.as_size(v) for v in values)
    except TypeError:
        raise TypeError(f"{what} must be a sequence of ints, got {list(values)!r}") from None


# -- view / reshape ---------------------------------------------------------------------
def infer_size(shape, numel: int) -> tuple:
    """Resolve one ``-1`` in ``shape`` so that it holds ``numel`` elements."""
    shape = _ints(shape)
    infer_at = None
    known = 1
    for i, s in enumerate(shape):
        if s == -1:
            if infer_at is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer_at = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s}")
        else:
            known *= s
    if infer_at is None:
        if known != numel:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        return shape
    if known == 0 or numel % known:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape[:infer_at] + (numel // known,) + shape[infer_at + 1 :]


def view_strides(sizes, strides, new_sizes):
    """Strides that let ``new_sizes`` view memory laid out as ``(sizes, strides)``, or None.

    Dims of the old shape are grouped into chunks that are contiguous with each other;
    a new dim may split or merge dims only within one chunk.
    """
    sizes, strides, new_sizes = tuple(sizes), tuple(strides), tuple(new_sizes)
    if not sizes:
        return (1,) * len(new_sizes)
    numel = prod(sizes)
    if numel == 0:
        return strides if sizes == new_sizes else layout.contiguous_strides(new_sizes)
    new_strides = [0] * len(new_sizes)
    view_d = len(new_sizes) - 1
    chunk_base = strides[-1]
    tensor_numel = 1
    view_numel = 1
    for d in range(len(sizes) - 1, -1, -1):
        tensor_numel *= sizes[d]
        chunk_ends = d == 0 or (sizes[d - 1] != 1 and strides[d - 1] != tensor_numel * chunk_base)
        if not chunk_ends:
            continue
        while view_d >= 0 and (view_numel < tensor_numel or new_sizes[view_d] == 1):
            new_strides[view_d] = view_numel * chunk_base
            view_numel *= new_sizes[view_d]
            view_d -= 1
        if view_numel != tensor_numel:
            return None
        if d > 0:
            chunk_base = strides[d - 1]
            tensor_numel = view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_strides)


def view(geom, shape):
    sizes, strides, offset = geom
    new_sizes = infer_size(shape, prod(sizes))
    new_strides = view_strides(sizes, strides, new_sizes)
    if new_strides is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        )
    return new_sizes, new_strides, offset


def flatten_shape(sizes, start_dim: int = 0, end_dim: int = -1) -> tuple:
    """The shape ``flatten(start_dim, end_dim)`` produces."""
    ndim = len(sizes)
    if ndim == 0:
        return (1,)
    start, end = normalize_dim(start_dim, ndim), normalize_dim(end_dim, ndim)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    return tuple(sizes[:start]) + (prod(sizes[start : end + 1]),) + tuple(sizes[end + 1 :])


def unflatten_shape(sizes, dim: int, new_sizes) -> tuple:
    """The shape ``unflatten(dim, new_sizes)`` produces (``-1`` inferred)."""
    dim = normalize_dim(dim, len(sizes))
    new_sizes = _ints(new_sizes)
    if not new_sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    try:
        new_sizes = infer_size(new_sizes, sizes[dim])
    except RuntimeError:
        if new_sizes.count(-1) > 1:
            raise
        raise RuntimeError(
            f"unflatten: Provided sizes {list(new_sizes)} don't multiply up to the size of dim "
            f"{dim} ({sizes[dim]}) in the input tensor"
        ) from None
    return tuple(sizes[:dim]) + new_sizes + tuple(sizes[dim + 1 :])


# -- dim reordering ---------------------------------------------------------------------
def transpose(geom, dim0: int, dim1: int):
    sizes, strides, offset = geom
    ndim = len(sizes)
    d0, d1 = normalize_dim(dim0, ndim), normalize_dim(dim1, ndim)
    if ndim == 0 or d0 == d1:
        return tuple(sizes), tuple(strides), offset
    sizes, strides = list(sizes), list(strides)
    sizes[d0], sizes[d1] = sizes[d1], sizes[d0]
    strides[d0], strides[d1] = strides[d1], strides[d0]
    return tuple(sizes), tuple(strides), offset


def t(geom):
    ndim = len(geom[0])
    if ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {ndim}D")
    return transpose(geom, 0, ndim - 1) if ndim == 2 else (tuple(geom[0]), tuple(geom[1]), geom[2])


def check_permutation(dims, ndim: int) -> tuple:
    dims = _ints(dims, "dims")
    if len(dims) != ndim:
        raise RuntimeError(
            "permute(): number of dimensions in the tensor input does not match the length of "
            f"the desired ordering of dimensions i.e. input.dim() = {ndim} is not equal to "
            f"len(dims) = {len(dims)}"
        )
    dims = tuple(normalize_dim(d, ndim) for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return dims


def permute(geom, dims):
    sizes, strides, offset = geom
    dims = check_permutation(dims, len(sizes))
    return tuple(sizes[d] for d in dims), tuple(strides[d] for d in dims), offset


def movedim_order(ndim: int, source, destination) -> tuple:
    """The permutation ``movedim(source, destination)`` applies."""
    source = (source,) if isinstance(source, int) else tuple(source)
    destination = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(source) != len(destination):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(source)} dims) should "
            f"contain the same number of dims as destination ({list(destination)} dims)"
        )
    src = tuple(normalize_dim(d, ndim) for d in source)
    dst = tuple(normalize_dim(d, ndim) for d in destination)
    for name, dims in (("source", src), ("destination", dst)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(dims)})")
    order = [None] * ndim
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(ndim) if d not in src)
    return tuple(o if o is not None else next(rest) for o in order)


# -- broadcasting views -----------------------------------------------------------------
def expand(geom, shape):
    sizes, strides, offset = geom
    shape = _ints(shape)
    ndim, new_ndim = len(sizes), len(shape)
    if new_ndim < ndim:
        raise RuntimeError(
            f"expand(size={list(shape)}): the number of sizes provided ({new_ndim}) must be "
            f"greater or equal to the number of dimensions in the tensor ({ndim})"
        )
    out_sizes, out_strides = [0] * new_ndim, [0] * new_ndim
    for i in range(new_ndim - 1, -1, -1):
        dim = ndim - new_ndim + i
        size = sizes[dim] if dim >= 0 else 1
        stride = strides[dim] if dim >= 0 else (out_sizes[i + 1] * out_strides[i + 1] if i + 1 < new_ndim else 1)
        target = shape[i]
        if target == -1:
            if dim < 0:
                raise RuntimeError(
                    f"The expanded size of the tensor (-1) isn't allowed in a leading, "
                    f"non-existing dimension {i}"
                )
            target = size
        elif target < 0:
            raise RuntimeError(f"The expanded size of the tensor ({target}) must be non-negative")
        if size != target:
            if size != 1:
                raise RuntimeError(
                    f"The expanded size of the tensor ({target}) must match the existing size "
                    f"({size}) at non-singleton dimension {i}.  Target sizes: {list(shape)}.  "
                    f"Tensor sizes: {list(sizes)}"
                )
            size, stride = target, 0
        out_sizes[i], out_strides[i] = size, stride
    return tuple(out_sizes), tuple(out_strides), offset


def squeeze(geom, dims=None):
    """Drop size-1 dims: all of them (``dims=None``) or those listed (others are kept)."""
    sizes, strides, offset = geom
    ndim = len(sizes)
    chosen = set(range(ndim)) if dims is None else set(layout.normalize_dims(dims, ndim))
    keep = [d for d in range(ndim) if not (d in chosen and sizes[d] == 1)]
    return tuple(sizes[d] for d in keep), tuple(strides[d] for d in keep), offset


def unsqueeze(geom, dim: int):
    sizes, strides, offset = geom
    ndim = len(sizes)
    dim = normalize_dim(dim, ndim + 1)
    new_stride = sizes[dim] * strides[dim] if dim < ndim else 1
    return (
        tuple(sizes[:dim]) + (1,) + tuple(sizes[dim:]),
        tuple(strides[:dim]) + (new_stride,) + tuple(strides[dim:]),
        offset,
    )


# -- sub-ranges -------------------------------------------------------------------------
def slice_dim(geom, dim: int, start=None, end=None, step: int = 1):
    """``x[..., start:end:step, ...]`` along ``dim``; out-of-range bounds are clamped."""
    sizes, strides, offset = geom
    if len(sizes) == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    dim = normalize_dim(dim, len(sizes))
    step = 1 if step is None else operator.index(step)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    start, stop, _ = slice(start, end, step).indices(sizes[dim])
    length = max(0, -(-(stop - start) // step))
    new_sizes, new_strides = list(sizes), list(strides)
    new_sizes[dim] = length
    new_strides[dim] = strides[dim] * step
    return tuple(new_sizes), tuple(new_strides), offset + start * strides[dim]


def narrow(geom, dim: int, start: int, length: int):
    sizes = geom[0]
    if len(sizes) == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    dim = normalize_dim(dim, len(sizes))
    start, length = layout.as_size(start), layout.as_size(length)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    size = sizes[dim]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if start < 0:
        start += size
    if start > size - length:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    # In range now: the window itself (slice_dim would clamp, reading a symbolic start's value).
    sizes, strides, offset = geom
    new_sizes = list(sizes)
    new_sizes[dim] = length
    return tuple(new_sizes), tuple(strides), offset + start * strides[dim]


def select(geom, dim: int, index: int):
    sizes, strides, offset = geom
    if len(sizes) == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = normalize_dim(dim, len(sizes))
    index = layout.as_size(index)  # a scan's step stays symbolic
    size = sizes[dim]
    if not -size <= index < size:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {list(sizes)} at dimension {dim}"
        )
    if index < 0:
        index += size
    return (
        tuple(sizes[:dim]) + tuple(sizes[dim + 1 :]),
        tuple(strides[:dim]) + tuple(strides[dim + 1 :]),
        offset + index * strides[dim],
    )


def as_strided(geom, size, stride, storage_offset=None):
    size, stride = _ints(size), _ints(stride, "stride")
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {list(size)} vs {list(stride)}")
    if any(s < 0 for s in size):
        raise RuntimeError(f"as_strided: Negative sizes are not allowed, got sizes: {list(size)}")
    if any(s < 0 for s in stride):
        raise RuntimeError(
            f"as_strided: Negative strides are not supported at the moment, got strides: {list(stride)}"
        )
    offset = geom[2] if storage_offset is None else operator.index(storage_offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    return size, stride, offset


def alias(geom):
    return tuple(geom[0]), tuple(geom[1]), geom[2]


def storage_extent(sizes, strides, offset: int) -> int:
    """Elements of storage a geometry needs (0 for an empty tensor)."""
    if prod(sizes) == 0:
        return 0
    return offset + 1 + sum((n - 1) * s for n, s in zip(sizes, strides))


# -- multi-output splits (lists of geometries) ------------------------------------------
def split_sizes(size: int, split_size: int) -> list:
    """Lengths of the pieces ``split(split_size)`` makes of a dim of ``size``."""
    split_size = operator.index(split_size)
    if split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={split_size}")
    if split_size == 0 and size != 0:
        raise RuntimeError(
            f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}"
        )
    if split_size == 0:
        return [0]
    count = max(-(-size // split_size), 1)
    return [split_size] * (count - 1) + [size - split_size * (count - 1)]


def chunk_sizes(size: int, chunks: int) -> list:
    chunks = operator.index(chunks)
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    split_size = -(-size // chunks)
    if split_size == 0 and size == 0:
        return [0] * chunks
    return split_sizes(size, split_size)


def check_split_with_sizes(size: int, dim: int, sections) -> list:
    sections = list(_ints(sections, "split_sizes"))
    if any(s < 0 for s in sections):
        raise RuntimeError(
            f"split_with_sizes expects split_sizes have only non-negative entries, but got "
            f"split_sizes={sections}"
        )
    if sum(sections) != size:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size "
            f"at dimension {dim}), but got split_sizes={sections}"
        )
    return sections


def split_with_sizes(geom, sections, dim: int = 0) -> list:
    """One geometry per piece, as ``narrow`` would give them."""
    if len(geom[0]) == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    dim = normalize_dim(dim, len(geom[0]))
    sections = check_split_with_sizes(geom[0][dim], dim, sections)
    pieces, start = [], 0
    for length in sections:
        pieces.append(narrow(geom, dim, start, length))
        start += length
    return pieces


def split(geom, split_size, dim: int = 0) -> list:
    if len(geom[0]) == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    dim = normalize_dim(dim, len(geom[0]))
    return split_with_sizes(geom, split_sizes(geom[0][dim], split_size), dim)


def chunk(geom, chunks: int, dim: int = 0) -> list:
    if len(geom[0]) == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    dim = normalize_dim(dim, len(geom[0]))
    return split_with_sizes(geom, chunk_sizes(geom[0][dim], chunks), dim)


def unbind(geom, dim: int = 0) -> list:
    if len(geom[0]) == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    dim = normalize_dim(dim, len(geom[0]))
    return [select(geom, dim, i) for i in range(geom[0][dim])]


# -- layout of copies -------------------------------------------------------------------
def dense_strides_like(sizes, strides) -> tuple:
    """Dense strides keeping the dim order of ``strides`` (what a preserve_format copy gets).

    Non-overlapping dense inputs keep their strides. Otherwise dims are insertion-sorted
    by stride, innermost last; a zero stride (a broadcast dim) compares as ambiguous, so
    such dims keep their contiguous-order position.
    """
    sizes, strides = tuple(sizes), tuple(strides)
    if layout.is_non_overlapping_and_dense(sizes, strides):
        return strides
    ndim = len(sizes)
    perm = list(range(ndim - 1, -1, -1))  # innermost first

    def should_swap(d0: int, d1: int) -> int:
        s0, s1 = strides[d0], strides[d1]
        if s0 == 0 or s1 == 0:
            return 0
        if s0 != s1:
            return -1 if s0 < s1 else 1
        return 1 if sizes[d0] > sizes[d1] else 0

    for i in range(1, ndim):
        d1 = i
        for j in range(1, i + 1):
            d0 = i - j
            cmp = should_swap(perm[d0], perm[d1])
            if cmp > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif cmp < 0:
                break
    out = [0] * ndim
    acc = 1
    for d in perm:
        out[d] = acc
        acc *= max(sizes[d], 1)
    return tuple(out)


def memory_format_strides(sizes, strides, memory_format) -> tuple:
    """Strides of a fresh copy of ``(sizes, strides)`` in ``memory_format``."""
    if memory_format is layout.preserve_format:
        return dense_strides_like(sizes, strides)
    return layout.memory_format_strides(sizes, memory_format)
