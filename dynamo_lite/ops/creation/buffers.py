"""Tensors over existing memory: asarray (sharing a tensor or NumPy array when it can) and frombuffer."""
from __future__ import annotations

import numpy as np

from ...tensor.interop import from_numpy
from . import conversions, factories
from ..core import meta_rules as mr

__all__ = ["asarray", "frombuffer"]


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """``obj`` as a tensor, sharing memory with a tensor or NumPy array when no conversion (or ``copy=True``) asks otherwise.

    Example:
        >>> t = dl.ones(2); dl.asarray(t) is t
        True
    """
    if mr.is_tensor(obj):
        result = obj
        if (dtype is not None and dtype != obj.dtype) or (device is not None and str(device) != str(obj.device)):
            if copy is False:
                raise ValueError(f"can't alias tensor with dtype '{mr.TYPE_NAMES[obj.dtype]}' into dtype "
                                 f"'{mr.TYPE_NAMES[dtype or obj.dtype]}'.")
            result = obj.to(dtype=dtype or obj.dtype, device=device or obj.device)
        elif copy:
            result = conversions.clone(obj)
    elif isinstance(obj, np.ndarray) and copy is not True and (dtype is None or np.dtype(dtype.numpy) == obj.dtype):
        result = from_numpy(obj)
    else:
        result = factories.tensor(obj, dtype=dtype, device=device)
    return result.requires_grad_() if requires_grad else result


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor over the memory of an object with the buffer protocol (no copy).

    Example:
        >>> dl.frombuffer(bytearray(b"\\x01\\x02"), dtype=dl.uint8).tolist()
        [1, 2]
    """
    length = len(memoryview(buffer).cast("B"))
    itemsize = np.dtype(dtype.numpy).itemsize
    if length <= 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
                         f"({length} bytes) minus 1")
    if count <= 0 and (length - offset) % itemsize:
        raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a multiple "
                         f"of element size ({itemsize})")
    array = np.frombuffer(buffer, dtype=dtype.numpy, count=count, offset=offset)
    result = from_numpy(array)
    return result.requires_grad_() if requires_grad else result


METHODS: dict = {}
