"""Ops that rearrange or select elements into a new tensor: cat, stack, flip, tril/triu, gather,
index_select, one_hot, repeat and constant padding."""
from __future__ import annotations

from ...tensor import layout
from ...tensor.dtype import int32, int64
from ...tensor.layout import as_size, normalize_dim, normalize_dims
from ..core import meta_rules as mr
from ..core.registry import register_op

__all__ = [
    "cat", "concat", "concatenate", "stack", "flip", "tril", "triu", "gather", "index_select", "tile",
    "constant_pad_nd",
]

INDEX_DTYPES = (int32, int64)


# -- meta rules ---------------------------------------------------------------------------
def _is_legacy_empty(t) -> bool:
    """torch still lets 1-D empty tensors (shape ``(0,)``) join a cat of any rank."""
    return t._sizes == (0,)


def cat_meta(tensors, dim=0):
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if not t._sizes:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    parts = [t for t in tensors if not _is_legacy_empty(t)] or list(tensors[:1])
    ref = parts[0]
    for i, t in enumerate(tensors):
        if _is_legacy_empty(t) and t is not ref:
            continue
        if len(t._sizes) != len(ref._sizes):
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {len(ref._sizes)} and {len(t._sizes)}"
            )
        for d, (a, b) in enumerate(zip(ref._sizes, t._sizes)):
            if d != dim and a != b:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {dim}. Expected size {a} but got "
                    f"size {b} for tensor number {i} in the list."
                )
    shape = list(ref._sizes)
    shape[dim] = sum(t._sizes[dim] for t in parts)
    shape = tuple(shape)
    formats = {t.suggest_memory_format() for t in parts}
    strides = mr.memory_format_strides(ref, shape) if len(formats) == 1 else None
    dtype = mr.result_type(*tensors)
    return mr.make_meta(shape, dtype, strides, mr.common_device(tensors))


def stack_meta(tensors, dim=0):
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tensors[0]._sizes
    for i, t in enumerate(tensors):
        if t._sizes != first:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(first)} at entry 0 and "
                f"{list(t._sizes)} at entry {i}"
            )
    shape = first[:dim] + (len(tensors),) + first[dim:]
    return mr.make_meta(shape, mr.result_type(*tensors), None, mr.common_device(tensors))


def flip_meta(input, dims):
    # Like empty_like: a dense input's strides are kept, others are made dense in their dim order.
    return mr.converted(input, input._dtype)


def triangle_meta(name):
    def meta(input, diagonal=0):
        if len(input._sizes) < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        return mr.same_meta(input)

    return meta


def _check_index_dtype(index, message: str) -> None:
    if index._dtype not in INDEX_DTYPES:
        raise RuntimeError(message)


def gather_meta(input, dim, index):
    _check_index_dtype(index, "gather(): Expected dtype int32/int64 for index")
    if max(len(index._sizes), 1) != max(len(input._sizes), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for d, (i_size, s_size) in enumerate(zip(index._sizes, input._sizes)):
        if d != dim and i_size > s_size:
            raise RuntimeError(
                f"Size does not match at dimension {d} expected index {list(index._sizes)} to be no "
                f"larger than self {list(input._sizes)} apart from dimension {dim}"
            )
    mr.common_device((input, index))
    return mr.make_meta(index._sizes, input._dtype, None, input._device)


def index_select_meta(input, dim, index):
    _check_index_dtype(index, "index_select(): Expected dtype int32 or int64 for index")
    if len(index._sizes) > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    mr.common_device((input, index))
    shape = list(input._sizes)
    if shape:
        shape[dim] = layout.prod(index._sizes)
    return mr.make_meta(tuple(shape), input._dtype, None, input._device)


def one_hot_meta(input, num_classes):
    if input._dtype is not int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    return mr.make_meta(input._sizes + (num_classes,), int64, None, input._device)


def repeat_meta(input, repeats):
    if len(repeats) < len(input._sizes):
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"
        )
    padded = (1,) * (len(repeats) - len(input._sizes)) + input._sizes
    shape = tuple(s * r for s, r in zip(padded, repeats))
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(shape)}")
    return mr.make_meta(shape, input._dtype, None, input._device)


def constant_pad_meta(input, pad, value=0):
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    ndim = len(input._sizes)
    if len(pad) // 2 > ndim:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but got "
            f"padding length {len(pad)} and input of dimension {ndim}"
        )
    shape = list(input._sizes)
    for i in range(len(pad) // 2):
        d = ndim - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        shape[d] = input._sizes[d] + left + right
        if shape[d] < 0:
            raise RuntimeError(
                f"The input size {input._sizes[d]}, plus negative padding {left} and {right} resulted in a "
                f"negative output size, which is invalid. Check dimension {d} of your input."
            )
    shape = tuple(shape)
    return mr.make_meta(shape, input._dtype, mr.memory_format_strides(input, shape), input._device)


# -- kernels ------------------------------------------------------------------------------
def cat_kernel(xp, tensors, dim=0, *, out):
    parts = [a for a in tensors if a.shape != (0,)] if out.ndim != 1 else list(tensors)
    return xp.concatenate(parts, axis=dim, out=out, casting="unsafe")


def stack_kernel(xp, tensors, dim=0, *, out):
    return xp.stack(tensors, axis=dim, out=out, casting="unsafe")


def flip_kernel(xp, x, dims, *, out):
    xp.copyto(out, xp.flip(x, axis=dims))
    return out


def _triangle_kernel(lower: bool):
    def kernel(xp, x, diagonal=0, *, out):
        rows, cols = x.shape[-2:]
        keep = xp.tri(rows, cols, diagonal, dtype=bool) if lower else ~xp.tri(rows, cols, diagonal - 1, dtype=bool)
        out[...] = 0
        xp.copyto(out, x, where=keep)
        return out

    return kernel


def gather_kernel(xp, x, dim, index, *, out):
    if index.size == 0:
        return out
    if x.ndim == 0:
        x, index = x.reshape(1), index.reshape(1)
    dim %= x.ndim
    size = x.shape[dim]
    low, high = int(index.min()), int(index.max())
    if low < 0 or high >= size:
        raise RuntimeError(f"index {low if low < 0 else high} is out of bounds for dimension {dim} with size {size}")
    # torch lets index be smaller than input in the other dims: gather from that corner.
    corner = tuple(slice(None) if d == dim else slice(0, n) for d, n in enumerate(index.shape))
    out[...] = xp.take_along_axis(x[corner], index, axis=dim).reshape(out.shape)
    return out


def index_select_kernel(xp, x, dim, index, *, out):
    flat = index.reshape(-1)
    if flat.size and (int(flat.min()) < 0 or int(flat.max()) >= (x.shape[dim] if x.ndim else 1)):
        raise IndexError("index out of range in self")
    if x.ndim == 0:
        out[...] = x
        return out
    out[...] = xp.take(x, flat, axis=dim)
    return out


def one_hot_kernel(xp, x, num_classes, *, out):
    if x.size:
        if int(x.min()) < 0:
            raise RuntimeError("Class values must be non-negative.")
        if int(x.max()) >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    out[...] = x[..., None] == xp.arange(num_classes)
    return out


def repeat_kernel(xp, x, repeats, *, out):
    out[...] = xp.tile(x, repeats)
    return out


def constant_pad_kernel(xp, x, pad, value=0, *, out):
    out[...] = value
    source, target = [slice(None)] * x.ndim, [slice(None)] * x.ndim
    for i in range(len(pad) // 2):
        d = x.ndim - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        # Negative padding crops the input instead of extending the output.
        source[d] = slice(max(-left, 0), x.shape[d] - max(-right, 0))
        target[d] = slice(max(left, 0), out.shape[d] - max(right, 0))
    region = out[tuple(target)]
    if region.size:
        region[...] = x[tuple(source)]
    return out


SHAPE_OPS = {
    "cat": (cat_meta, cat_kernel, ()),
    "stack": (stack_meta, stack_kernel, ()),
    "flip": (flip_meta, flip_kernel, ()),
    "tril": (triangle_meta("tril"), _triangle_kernel(True), ()),
    "triu": (triangle_meta("triu"), _triangle_kernel(False), ()),
    "gather": (gather_meta, gather_kernel, ()),
    "index_select": (index_select_meta, index_select_kernel, ()),
    "one_hot": (one_hot_meta, one_hot_kernel, ()),
    "repeat": (repeat_meta, repeat_kernel, ()),
    "constant_pad_nd": (constant_pad_meta, constant_pad_kernel, ()),
}
OPS = {name: register_op(name, meta=meta, kernel=kernel, tags=tags) for name, (meta, kernel, tags) in SHAPE_OPS.items()}


# -- public functions ---------------------------------------------------------------------
def cat(tensors, dim=0):
    """Join tensors along an existing ``dim`` (dtypes promote; 1-D empty tensors are skipped).

    Example:
        >>> dl.cat([dl.zeros(1, 2), dl.ones(2, 2)]).shape
        dl.Size([3, 2])
    """
    tensors = list(tensors)
    ref = next((t for t in tensors if tuple(t.shape) != (0,)), tensors[0] if tensors else None)
    if ref is not None:
        dim = normalize_dim(dim, ref.ndim)
    return OPS["cat"](tensors, dim) if dim else OPS["cat"](tensors)


concat = concatenate = cat


def stack(tensors, dim=0):
    """Join equally shaped tensors along a new ``dim``.

    Example:
        >>> dl.stack([dl.zeros(2), dl.ones(2)], dim=1).shape
        dl.Size([2, 2])
    """
    tensors = list(tensors)
    if tensors:
        dim = normalize_dim(dim, tensors[0].ndim + 1)
    return OPS["stack"](tensors, dim) if dim else OPS["stack"](tensors)


def _dims_arg(dims) -> tuple:
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        return tuple(dims[0])
    return tuple(dims)


def flip(input, dims):
    """Reverse the order of elements along ``dims``.

    Example:
        >>> dl.flip(dl.tensor([1, 2, 3]), [0]).tolist()
        [3, 2, 1]
    """
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    return OPS["flip"](input, tuple(sorted(normalize_dims(dims, input.ndim))))


def tril(input, diagonal=0):
    """Zero the elements above ``diagonal`` in the last two dims.

    Example:
        >>> dl.tril(dl.ones(2, 2)).tolist()
        [[1.0, 0.0], [1.0, 1.0]]
    """
    return OPS["tril"](input, diagonal) if diagonal else OPS["tril"](input)


def triu(input, diagonal=0):
    """Zero the elements below ``diagonal`` in the last two dims."""
    return OPS["triu"](input, diagonal) if diagonal else OPS["triu"](input)


def gather(input, dim, index):
    """``out[i][j] = input[index[i][j]][j]`` for ``dim=0`` (and likewise for other dims).

    Example:
        >>> dl.gather(dl.tensor([[1, 2], [3, 4]]), 1, dl.tensor([[1], [0]])).tolist()
        [[2], [3]]
    """
    return OPS["gather"](input, normalize_dim(dim, input.ndim), index)


def index_select(input, dim, index):
    """The slices of ``input`` along ``dim`` at the positions in the 1-D ``index``.

    Example:
        >>> dl.index_select(dl.tensor([[1, 2], [3, 4]]), 0, dl.tensor([1])).tolist()
        [[3, 4]]
    """
    return OPS["index_select"](input, normalize_dim(dim, input.ndim), index)


def one_hot(tensor, num_classes=-1):
    """int64 one-hot rows along a new last dim (``num_classes=-1`` reads the data's max)."""
    if num_classes == -1:
        num_classes = int(tensor.max()) + 1 if tensor.numel() else 0
    return OPS["one_hot"](tensor, num_classes)


def repeat(self, *sizes):
    """Tile ``self`` ``sizes[i]`` times along each dim (extra leading sizes add dims).

    Example:
        >>> dl.tensor([1, 2]).repeat(2).tolist()
        [1, 2, 1, 2]
    """
    return OPS["repeat"](self, tuple(as_size(s) for s in _dims_arg(sizes)))


def tile(input, dims):
    """``repeat`` that pads ``dims`` with leading 1s when it is shorter than ``input.ndim``."""
    dims = tuple(dims)
    return OPS["repeat"](input, (1,) * (input.ndim - len(dims)) + dims)


def constant_pad_nd(input, pad, value=0):
    """Pad the last ``len(pad) // 2`` dims with ``value``: ``pad = (left_last, right_last, ...)``.

    Negative padding crops. channels_last inputs give channels_last outputs.

    Example:
        >>> dl.constant_pad_nd(dl.ones(1, 2), (1, 1)).tolist()
        [[0.0, 1.0, 1.0, 0.0]]
    """
    pad = tuple(int(p) for p in pad)
    return OPS["constant_pad_nd"](input, pad, value) if value != 0 else OPS["constant_pad_nd"](input, pad)


def _flip_method(self, *dims):
    return flip(self, _dims_arg(dims))


METHODS = {
    "flip": _flip_method, "tril": tril, "triu": triu, "gather": gather, "index_select": index_select,
    "repeat": repeat, "tile": tile,
}
