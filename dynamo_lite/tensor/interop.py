"""Zero-copy exchange with NumPy, CuPy and any DLPack producer or consumer.

``from_numpy`` and ``from_dlpack`` wrap foreign memory without copying (the tensor keeps
the producer's buffer alive); ``Tensor.__dlpack__`` exports through the NumPy/CuPy array
over the tensor's strided window, so consumers share the same memory.

NOTE: [read-only arrays] A read-only NumPy array (or a DLPack capsule flagged read-only)
still shares memory with its tensor, but in-place ops on that tensor raise NumPy's
``ValueError: assignment destination is read-only`` instead of writing.
"""
from __future__ import annotations

import numpy as np

from .device import device as Device
from .tensor import Tensor, from_array

__all__ = ["from_dlpack", "from_numpy"]

_DLPACK_CPU, _DLPACK_CUDA = 1, 2


def from_numpy(ndarray) -> Tensor:
    """A tensor sharing memory with a NumPy array.

    Raises TypeError for non-arrays and unsupported dtypes, ValueError for negative strides.

    Example:
        >>> a = np.zeros(3, dtype=np.float32)
        >>> t = dl.from_numpy(a); a[0] = 5; t[0].item()
        5.0
    """
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    return from_array(ndarray)


def from_dlpack(ext_tensor) -> Tensor:
    """A tensor sharing memory with any object implementing ``__dlpack__`` (NumPy, CuPy, ...).

    Example:
        >>> t = dl.from_dlpack(np.arange(3)); t.tolist()
        [0, 1, 2]
    """
    if isinstance(ext_tensor, Tensor):
        return ext_tensor._view(ext_tensor._sizes, ext_tensor._strides, ext_tensor._offset)
    if not hasattr(ext_tensor, "__dlpack__"):
        raise TypeError(f"from_dlpack expects an object with __dlpack__, got {type(ext_tensor).__name__}")
    kind, index = ext_tensor.__dlpack_device__()
    if kind == _DLPACK_CPU:
        return from_array(np.from_dlpack(ext_tensor))
    if kind == _DLPACK_CUDA:
        from .device import cupy_module

        cupy = cupy_module()
        return from_array(cupy.from_dlpack(ext_tensor), device=Device("cuda", int(index)))
    raise RuntimeError(f"from_dlpack: unsupported DLPack device type {kind}")


def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    """Export the tensor as a DLPack capsule sharing its memory."""
    kwargs = {k: v for k, v in (("stream", stream), ("max_version", max_version), ("dl_device", dl_device),
                               ("copy", copy)) if v is not None}
    return self._array().__dlpack__(**kwargs)


def __dlpack_device__(self):
    """``(device_type, index)`` as DLPack numbers them: (1, 0) for CPU, (2, n) for cuda:n."""
    if self.device.type == "cpu":
        return (_DLPACK_CPU, 0)
    return (_DLPACK_CUDA, self.device.index)


METHODS = {"__dlpack__": __dlpack__, "__dlpack_device__": __dlpack_device__}
