"""torch's legacy constructors: ``dl.Tensor(data)``/``dl.Tensor(2, 3)`` and the typed tensor
classes (``dl.FloatTensor``, ``dl.LongTensor`` ...), which construct and answer isinstance.

Example:
    >>> dl.Tensor([1, 2]).dtype, dl.LongTensor(2, 3).shape
    (dynamo_lite.float32, dl.Size([2, 3]))
    >>> isinstance(dl.ones(2), dl.FloatTensor), isinstance(dl.ones(2), dl.LongTensor)
    (True, False)
"""
from __future__ import annotations

import numpy as np

from . import dtype as dtypes
from .device import as_device
from .layout import Size
from .tensor import LEGACY_CONSTRUCTOR, Tensor, empty_strided, from_array


def legacy_new(dtype, args: tuple, kwargs: dict) -> Tensor:
    """What ``Tensor(*args, device=...)`` makes as torch's legacy constructor does, in ``dtype``:
    no argument: an empty tensor; sizes (ints, or one Size): a tensor of that shape
    (zero-filled, torch leaves it uninitialized); a tensor of ``dtype``: an alias of it;
    anything else: a copy of the data (a sequence or an array)."""
    unknown = set(kwargs) - {"device"}
    if unknown:
        raise TypeError(f"new() got an unexpected keyword argument '{sorted(unknown)[0]}'")
    device = as_device(kwargs.get("device") or "cpu")
    if device.type != "cpu":
        raise RuntimeError(f"legacy constructor expects device type: cpu but device type: {device.type} was passed")
    if not args:
        return empty_strided((0,), (1,), dtype, device)
    if len(args) == 1 and isinstance(args[0], Tensor):
        source = args[0]
        if source.dtype is not dtype:
            raise TypeError(f"expected {dtype} (got {source.dtype})")
        return Tensor._make(source._storage, source._sizes, source._strides, source._offset, dtype)
    if all(_is_int(a) for a in args) or (len(args) == 1 and isinstance(args[0], Size)):
        sizes = tuple(int(a) for a in (args[0] if isinstance(args[0], Size) else args))
        if any(n < 0 for n in sizes):
            raise RuntimeError(f"Trying to create tensor with negative dimension {min(sizes)}: {list(sizes)}")
        result = empty_strided(sizes, _contiguous(sizes), dtype, device)
        if result.numel():
            result._array_cache[...] = 0
        return result
    if len(args) > 1:
        raise TypeError(f"new() received an invalid combination of arguments - got "
                        f"({', '.join(type(a).__name__ for a in args)})")
    data = args[0]
    if isinstance(data, (float, complex, bool, str)):
        raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
    return from_array(np.array(data, dtype=dtype.numpy, copy=True))


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _contiguous(sizes: tuple) -> tuple:
    strides, step = [], 1
    for n in reversed(sizes):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


class _TypedTensorType(type):
    """The class of ``dl.FloatTensor`` and friends: calling one constructs a CPU tensor of its
    dtype; ``isinstance`` is true for CPU tensors of that dtype (as in torch)."""

    def __call__(cls, *args, **kwargs):
        return legacy_new(cls.dtype, args, kwargs)

    def __instancecheck__(cls, instance) -> bool:
        return isinstance(instance, Tensor) and instance.dtype is cls.dtype and instance.device.type == "cpu"

    def __repr__(cls) -> str:
        return f"<class 'dl.{cls.__name__}'>"


def _typed(name: str, dtype) -> type:
    return _TypedTensorType(name, (), {"dtype": dtype, "__module__": __name__,
                                         "__doc__": f"CPU tensors of {dtype} (legacy constructor and isinstance)."})


FloatTensor = _typed("FloatTensor", dtypes.float32)
DoubleTensor = _typed("DoubleTensor", dtypes.float64)
HalfTensor = _typed("HalfTensor", dtypes.float16)
LongTensor = _typed("LongTensor", dtypes.int64)
IntTensor = _typed("IntTensor", dtypes.int32)
ShortTensor = _typed("ShortTensor", dtypes.int16)
CharTensor = _typed("CharTensor", dtypes.int8)
ByteTensor = _typed("ByteTensor", dtypes.uint8)
BoolTensor = _typed("BoolTensor", dtypes.bool_)

LEGACY_CONSTRUCTOR.new = legacy_new  # dl.Tensor(...) (Tensor.__new__)

TYPED_TENSORS = (FloatTensor, DoubleTensor, HalfTensor, LongTensor, IntTensor, ShortTensor, CharTensor, ByteTensor,
                 BoolTensor)
