"""Shape and stride arithmetic shared by tensors, TensorMetas, view rules and meta rules."""
from __future__ import annotations

import functools
import operator
from typing import Sequence

from .symint import SymInt, has_symbols


class Size(tuple):
    """A tensor shape: a tuple of ints, printed as ``dl.Size([2, 3])``."""

    def __repr__(self) -> str:
        return f"dl.Size({list(self)})"

    def numel(self) -> int:
        return prod(self)

    # Like torch.Size: slicing, concatenating to and repeating a Size give a Size
    # (``tuple + Size`` is tuple's own concatenation: a tuple).
    def __getitem__(self, key):
        result = tuple.__getitem__(self, key)
        return Size(result) if isinstance(key, slice) else result

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(self, other))

    def __mul__(self, times):
        return Size(tuple.__mul__(self, times))

    __rmul__ = __mul__


class _MemoryFormat:
    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"dl.{self.name}"


class _Layout(_MemoryFormat):
    """How a tensor's elements are stored (``Tensor.layout``): dynamo_lite has dense strided tensors."""

    __slots__ = ()


strided = _Layout("strided")

contiguous_format = _MemoryFormat("contiguous_format")
channels_last = _MemoryFormat("channels_last")
preserve_format = _MemoryFormat("preserve_format")


def as_size(value):
    """``operator.index(value)``, except that a symbolic size stays symbolic."""
    return value if type(value) is SymInt else operator.index(value)


def prod(values) -> int:
    result = 1
    for v in values:
        result *= v
    return result


def contiguous_strides(shape: Sequence[int]) -> tuple:
    """Row-major strides of ``shape`` (cached: every op's meta rule asks for them).

    Symbolic shapes are not cached: their SymInts belong to one trace's ShapeEnv.
    """
    shape = tuple(shape)
    if has_symbols(shape):
        return _row_major(shape)
    return _contiguous_strides(shape)


@functools.lru_cache(maxsize=1024)
def _contiguous_strides(shape: tuple) -> tuple:
    return _row_major(shape)


def int_contiguous_strides(shape: tuple) -> tuple:
    """``contiguous_strides`` of a tuple of plain ints (a real tensor's sizes), with no checks."""
    return _contiguous_strides(shape)


def _row_major(shape: tuple) -> tuple:
    strides = []
    acc = 1
    for size in reversed(shape):
        strides.append(acc)
        acc *= max(size, 1)
    return tuple(reversed(strides))


def strides_for_order(shape: Sequence[int], order: Sequence[int]) -> tuple:
    """Dense strides where ``order`` lists dims from outermost to innermost."""
    strides = [0] * len(shape)
    acc = 1
    for dim in reversed(order):
        strides[dim] = acc
        acc *= max(shape[dim], 1)
    return tuple(strides)


def channels_last_strides(shape: Sequence[int]) -> tuple:
    if len(shape) != 4:
        raise RuntimeError(f"required rank 4 tensor to use channels_last format, got rank {len(shape)}")
    return strides_for_order(shape, (0, 2, 3, 1))


def is_contiguous_strides(shape, strides) -> bool:
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size == 0:
            return True
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def is_channels_last_strides(shape, strides) -> bool:
    if len(shape) != 4:
        return False
    expected = 1
    for dim in (1, 3, 2, 0):
        size, stride = shape[dim], strides[dim]
        if size == 0:
            return True
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def is_non_overlapping_and_dense(shape, strides) -> bool:
    order = sorted(range(len(shape)), key=lambda d: (strides[d], shape[d]))
    expected = 1
    for d in order:
        if shape[d] == 1:
            continue
        if strides[d] != expected:
            return False
        expected *= shape[d]
    return True


def dense_order_like(shape, strides) -> tuple:
    """Dims from outermost to innermost as laid out by ``strides`` (ties keep dim order)."""
    dims = range(len(shape))
    return tuple(sorted(dims, key=lambda d: -strides[d] if shape[d] != 1 else 0))


def memory_format_strides(shape, fmt) -> tuple:
    if fmt is channels_last:
        return channels_last_strides(shape)
    if fmt is contiguous_format or fmt is preserve_format:
        return contiguous_strides(shape)
    raise TypeError(f"unknown memory format {fmt!r}")


def normalize_dim(dim, ndim: int, name: str = "dim") -> int:
    """Wrap a possibly negative dim; IndexError in torch's words when out of range."""
    try:
        dim = operator.index(dim)
    except TypeError:
        raise TypeError(f"{name} must be an int, got {type(dim).__name__}") from None
    bound = max(ndim, 1)
    if not -bound <= dim < bound:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-bound}, {bound - 1}], but got {dim})"
        )
    return dim + bound if dim < 0 else dim


def normalize_dims(dims, ndim: int) -> tuple:
    if dims is None:
        return tuple(range(ndim))
    if isinstance(dims, int):
        dims = (dims,)
    result = tuple(normalize_dim(d, ndim) for d in dims)
    if len(set(result)) != len(result):
        repeated = next(d for i, d in enumerate(result) if d in result[:i])
        raise RuntimeError(f"dim {repeated} appears multiple times in the list of dims")
    return result


def broadcast_shapes(*shapes) -> tuple:
    """Broadcast shapes by NumPy/torch rules; RuntimeError naming the sizes on mismatch."""
    ndim = max((len(s) for s in shapes), default=0)
    result = [1] * ndim
    for shape in shapes:
        offset = ndim - len(shape)
        for i, size in enumerate(shape):
            j = offset + i
            if result[j] == 1:
                result[j] = size
            elif size != 1 and size != result[j]:
                raise RuntimeError(
                    f"The size of tensor a ({result[j]}) must match the size of tensor b ({size}) "
                    f"at non-singleton dimension {j}"
                )
    return tuple(result)


def check_shape(shape) -> tuple:
    """Normalize a user shape (ints or one sequence of ints); reject negatives."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, Size)):
        shape = shape[0]
    result = []
    for s in shape:
        if type(s) is SymInt:  # a symbolic size is >= 0 by construction
            result.append(s)
            continue
        try:
            s = operator.index(s)
        except TypeError:
            raise TypeError(f"shape must be a sequence of ints, got element {s!r}") from None
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(shape)}")
        result.append(s)
    return tuple(result)
