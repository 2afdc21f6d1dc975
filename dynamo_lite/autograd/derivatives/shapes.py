"""Derivatives of views, copies, joins, diagonal and indexing (gather/index/index_put_/embedding)."""
from __future__ import annotations

from ...tensor.dtype import int64
from .helpers import OPS, arange, embed, is_tensor, scatter_add, zeros_of
from .table import derivative
from .table import NOT_DIFFERENTIABLE


# -- views: the gradient is the output gradient put back into the input's geometry ------------
@derivative("view", "squeeze", "unsqueeze")
def view_backward(grad, input, *args, **kwargs):
    return grad.reshape(tuple(input._sizes))


@derivative("transpose")
def transpose_backward(grad, input, dim0, dim1):
    return OPS["transpose"](grad, dim0, dim1)


@derivative("permute")
def permute_backward(grad, input, dims):
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d % len(dims)] = i
    return OPS["permute"](grad, tuple(inverse))


@derivative("expand", "alias", "clone")
def expand_backward(grad, input, *args, **kwargs):
    return grad  # the engine sums broadcast dims away (NOTE: [broadcast reduction] in op_node.py)


@derivative("_to_copy")
def _to_copy_backward(grad, input, dtype, device, memory_format=None):
    return OPS["_to_copy"](grad, dtype=input._dtype, device=input._device)


@derivative("slice")
def slice_backward(grad, input, dim, start=None, end=None, step=1):
    return embed(grad, input, lambda z: OPS["slice"](z, dim, start, end, step))


@derivative("narrow")
def narrow_backward(grad, input, dim, start, length):
    return embed(grad, input, lambda z: OPS["narrow"](z, dim, start, length))


@derivative("select")
def select_backward(grad, input, dim, index):
    return embed(grad, input, lambda z: OPS["select"](z, dim, index))


@derivative("index_basic")
def index_basic_backward(grad, input, spec):
    return embed(grad, input, lambda z: OPS["index_basic"](z, spec))


@derivative("as_strided")
def as_strided_backward(grad, input, size, stride, storage_offset=None):
    # The window within a zero tensor laid out like the input; windows that overlap
    # themselves (a stride of 0) add up element by element.
    base = OPS["zeros"](size=(int(_extent(input)),), dtype=grad._dtype, device=grad._device)
    offset = input._offset if storage_offset is None else storage_offset
    flat_index = _strided_positions(size, stride, offset - input._offset, grad)
    OPS["index_put_"](base, (flat_index,), grad, accumulate=True)
    positions = _strided_positions(input._sizes, input._strides, 0, grad)
    return OPS["index"](base, (positions,))


def _extent(meta) -> int:
    return 1 + sum((n - 1) * s for n, s in zip(meta._sizes, meta._strides)) if all(meta._sizes) else 0


def _strided_positions(sizes, strides, offset, like):
    """The storage position of every element of a strided window, as an int64 tensor."""
    positions = OPS["full"](size=(), dtype=int64, device=like._device, fill_value=offset)
    for n, s in zip(sizes, strides):
        ar = OPS["mul"](arange(n, like), s)
        positions = OPS["add"](OPS["unsqueeze"](positions, -1), ar)
    return positions


@derivative("unfold")
def unfold_backward(grad, input, dimension, size, step):
    if input.ndim == 0:
        return grad.reshape(())
    d = dimension % input.ndim
    n_windows, last = grad._sizes[d], grad.ndim - 1
    moved = OPS["permute"](grad, tuple(i for i in range(grad.ndim) if i not in (d, last)) + (d, last))
    # the input position of element e of window w is w * step + e
    index = OPS["add"](OPS["unsqueeze"](OPS["mul"](arange(n_windows, grad), step), 1), arange(size, grad)).reshape(-1)
    other = tuple(n for i, n in enumerate(input._sizes) if i != d)
    flat = moved.reshape(other + (n_windows * size,))
    target = OPS["zeros"](size=other + (input._sizes[d],), dtype=grad._dtype, device=grad._device)
    keys = (None,) * len(other) + (index,)
    OPS["index_put_"](target, keys, flat, accumulate=True)
    order = list(range(len(other)))
    order.insert(d, len(other))
    return OPS["permute"](target, tuple(order))


# -- in-place writes and copies ---------------------------------------------------------------
@derivative("copy_")
def copy_backward(grad, input, src, non_blocking=False):
    return zeros_of(grad), (OPS["_to_copy"](grad, dtype=src._dtype, device=src._device) if is_tensor(src) else None)


@derivative("fill_")
def fill_backward(grad, input, value):
    return zeros_of(grad), (OPS["sum"](grad) if is_tensor(value) else None)


@derivative("zero_")
def zero_backward(grad, input):
    return zeros_of(grad)


# -- joins and rearrangements -------------------------------------------------------------------
@derivative("cat")
def cat_backward(grad, tensors, dim=0):
    grads, start = [], 0
    ndim = max(t.ndim for t in tensors)
    for t in tensors:
        if t.ndim == 1 and t._sizes[0] == 0 and ndim > 1:  # torch skips legacy empty inputs
            grads.append(None)
            continue
        length = t._sizes[dim % t.ndim]
        grads.append(OPS["narrow"](grad, dim, start, length))
        start += length
    return grads


@derivative("stack")
def stack_backward(grad, tensors, dim=0):
    return [OPS["select"](grad, dim, i) for i in range(len(tensors))]


@derivative("flip")
def flip_backward(grad, input, dims):
    return OPS["flip"](grad, dims)


@derivative("tril")
def tril_backward(grad, input, diagonal=0):
    return OPS["tril"](grad, diagonal)


@derivative("triu")
def triu_backward(grad, input, diagonal=0):
    return OPS["triu"](grad, diagonal)


@derivative("repeat")
def repeat_backward(grad, input, repeats):
    lead = len(repeats) - input.ndim
    sizes = (1,) * lead + tuple(input._sizes)
    split = []
    for r, n in zip(repeats, sizes):
        split += [r, n]
    summed = OPS["sum"](grad.reshape(tuple(split)), dim=tuple(range(0, 2 * len(sizes), 2)))
    return summed.reshape(tuple(input._sizes))


@derivative("constant_pad_nd")
def constant_pad_nd_backward(grad, input, pad, value=0):
    return OPS["constant_pad_nd"](grad, tuple(-p for p in pad), 0)


# -- indexing -----------------------------------------------------------------------------------
@derivative("gather", saves=("index",))
def gather_backward(grad, input, dim, index):
    return scatter_add(input._sizes, dim, index, grad, grad)


@derivative("index_select", saves=("index",))
def index_select_backward(grad, input, dim, index):
    d = dim % max(input.ndim, 1)
    keys = (None,) * d + (index,)
    if input.ndim == 0:
        return grad.reshape(())
    return OPS["index_put_"](zeros_of(input, grad._dtype), keys, grad, accumulate=True)


@derivative("index", saves=("indices",))
def index_backward(grad, input, indices):
    return OPS["index_put_"](zeros_of(input, grad._dtype), tuple(indices), grad, accumulate=True)


@derivative("index_put_", saves=("indices",))
def index_put_backward(grad, input, indices, values, accumulate=False):
    grad_input = grad if accumulate else OPS["index_put_"](OPS["clone"](grad), tuple(indices), 0.0)
    grad_values = OPS["index"](grad, tuple(indices)) if is_tensor(values) else None
    return grad_input, None, grad_values


@derivative("embedding", saves=("indices",))
def embedding_backward(grad, weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    if scale_grad_by_freq:
        raise NotImplementedError("embedding(scale_grad_by_freq=True) has no gradient in dynamo_lite yet")
    if padding_idx is not None and padding_idx >= 0:
        grad = OPS["masked_fill"](grad, OPS["unsqueeze"](OPS["eq"](indices, padding_idx), -1), 0.0)
    rows = OPS["view"](grad, (-1, weight._sizes[-1]))
    return OPS["index_put_"](zeros_of(weight, grad._dtype), (OPS["view"](indices, (-1,)),), rows, accumulate=True), None


@derivative("roll")
def roll_backward(grad, input, shifts, dims=()):
    negated = -shifts if isinstance(shifts, int) else tuple(-s for s in shifts)
    return OPS["roll"](grad, negated, dims)


@derivative("repeat_interleave", saves=("repeats",))
def repeat_interleave_backward(grad, input, repeats, dim=None, output_size=None):
    # every output element came from one input element: add the gradients back per source index
    if dim is None:
        sizes, d = (input.numel(),), 0
    else:
        sizes, d = tuple(input._sizes), dim % max(input.ndim, 1)
    output_size = grad._sizes[d] if dim is not None else grad.numel()
    index = OPS["repeat_interleave"](arange(sizes[d], grad), repeats, 0, output_size=output_size)
    keys = (None,) * d + (index,)
    summed = OPS["index_put_"](OPS["zeros"](size=sizes, dtype=grad._dtype, device=grad._device), keys, grad,
                               accumulate=True)
    return summed.reshape(tuple(input._sizes)), None


@derivative("diagonal")
def diagonal_backward(grad, input, offset=0, dim1=0, dim2=1):
    return embed(grad, input, lambda zeros: OPS["diagonal"](zeros, offset, dim1, dim2))


NOT_DIFFERENTIABLE.update({
    name: "factories: the output does not depend on any input's values"
    for name in ("triangle_indices", "combination_indices")
})
