"""Copies and conversions: clone, to/float/cpu..., copy_/fill_/zero_, and Python scalars.

``clone``, ``_to_copy``, ``copy_``, ``fill_`` and ``zero_`` are registry ops. The Python
conversions (``item``, ``tolist``, ``__bool__``, ``__float__``, ``__int__``,
``__index__``, ``__repr__``) need the data, so they read ``_array()`` and are not ops.
"""
from __future__ import annotations

import builtins
import operator

import numpy as np

from ...tensor import views as rules
from ...tensor.device import as_device, device as Device
from ...tensor.bfloat16 import widen
from ...tensor.dtype import (
    as_dtype, bfloat16, bool_, dtype as DType, float16, float32, float64, int8, int16, int32, int64, uint8,
)
from ...tensor.layout import preserve_format
from ...tensor.meta import TensorMeta
from ...tensor.interop import METHODS as _DLPACK_METHODS
from ...tensor.printing import format_tensor
from ..core.registry import register_op

__all__ = ["clone"]


def _is_tensor(value) -> bool:
    """True for Tensors and the proxies/metas that stand for them while tracing."""
    return hasattr(value, "_sizes") and hasattr(value, "_dtype")


def _host_module(array):
    """NumPy for host arrays, CuPy otherwise: the module that owns ``array``."""
    if isinstance(array, np.ndarray):
        return np
    import cupy

    return cupy


def _assign(out, value):
    """``out[...] = value`` with unsafe casting, moving ``value`` across devices if needed."""
    if isinstance(out, np.ndarray):
        if hasattr(value, "get") and not isinstance(value, np.ndarray):
            value = value.get()
        with np.errstate(invalid="ignore", over="ignore"):
            out[...] = value
    else:
        cupy = _host_module(out)
        if isinstance(value, np.ndarray):
            value = cupy.asarray(value)
        out[...] = value
    return out


# -- ops --------------------------------------------------------------------------------
def _clone_meta(x, memory_format=preserve_format):
    strides = rules.memory_format_strides(x._sizes, x._strides, memory_format)
    return TensorMeta(x._sizes, x._dtype, strides, x._device)


def _clone_kernel(xp, x, *, out, memory_format=preserve_format):
    return _assign(out, x)


def _to_copy_meta(x, dtype, device, memory_format=preserve_format):
    strides = rules.memory_format_strides(x._sizes, x._strides, memory_format)
    return TensorMeta(x._sizes, dtype, strides, device)


def _to_copy_kernel(xp, x, *, out, dtype, device, memory_format=preserve_format):
    return _assign(out, x)


def _copy_meta(x, src, non_blocking=False):
    if not _is_tensor(src):
        raise TypeError(f"copy_(): argument 'src' must be Tensor, not {type(src).__name__}")
    rules.expand((src._sizes, src._strides, 0), x._sizes)
    return TensorMeta.of(x)


def _copy_kernel(xp, x, src, *, out, non_blocking=False):
    return _assign(out, src)


def _fill_meta(x, value):
    if _is_tensor(value):
        if len(value._sizes) != 0:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with {len(value._sizes)} dimensions."
            )
    elif not isinstance(value, (builtins.bool, builtins.int, builtins.float, np.number, np.bool_)):
        raise TypeError(f"fill_(): argument 'value' must be Number, not {type(value).__name__}")
    return TensorMeta.of(x)


def _fill_kernel(xp, x, value, *, out):
    return _assign(out, value)


def _zero_kernel(xp, x, *, out):
    out[...] = 0
    return out


clone_op = register_op("clone", meta=_clone_meta, kernel=_clone_kernel, doc="Copy into fresh memory.")
to_copy_op = register_op("_to_copy", meta=_to_copy_meta, kernel=_to_copy_kernel, doc="dtype/device conversion copy.")
copy_op = register_op("copy_", meta=_copy_meta, kernel=_copy_kernel, tags=("inplace",))
fill_op = register_op("fill_", meta=_fill_meta, kernel=_fill_kernel, tags=("inplace",))
zero_op = register_op("zero_", meta=lambda x: TensorMeta.of(x), kernel=_zero_kernel, tags=("inplace",))


# -- wrappers ---------------------------------------------------------------------------
def clone(input, *, memory_format=preserve_format):
    """A copy of ``input`` in new memory (strides kept for dense inputs).

    Example:
        >>> y = dl.clone(x)   # writes to y do not show in x
    """
    return clone_op(input, memory_format=memory_format)


def copy_(self, src, non_blocking: bool = False):
    """Copy ``src`` (broadcast, converted to ``self.dtype``) into ``self``; returns self."""
    if _is_tensor(src) and src.device != self.device:
        src = to(src, self.device)
    return copy_op(self, src)


def fill_(self, value):
    return fill_op(self, value)


def zero_(self):
    return zero_op(self)


_PYTHON_SCALAR_TYPES = (builtins.bool, builtins.int, builtins.float, builtins.complex)


def _parse_to(self, args, kwargs):
    dtype, device = kwargs.pop("dtype", None), kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    memory_format = kwargs.pop("memory_format", preserve_format)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    flags = []
    for arg in args:
        if _is_tensor(arg):
            dtype, device = arg.dtype, arg.device
        elif isinstance(arg, DType) or arg in _PYTHON_SCALAR_TYPES:  # x.to(bool): Python types name dtypes
            dtype = arg
        elif isinstance(arg, builtins.bool):
            flags.append(arg)  # non_blocking, copy (positional, in that order)
        elif isinstance(arg, (str, Device)):
            device = arg
        else:
            raise TypeError(f"to() received an invalid combination of arguments: got {type(arg).__name__}")
    if len(flags) > 1:
        copy = flags[1]
    dtype = self.dtype if dtype is None else as_dtype(dtype)
    device = self.device if device is None else as_device(device)
    return dtype, device, copy, memory_format


def to(self, *args, **kwargs):
    """Convert dtype and/or device; returns ``self`` when nothing changes (unless copy=True).

    Example:
        >>> x.to(dl.float64).dtype
        dynamo_lite.float64
    """
    dtype, device, copy, memory_format = _parse_to(self, args, dict(kwargs))
    unchanged = dtype is self.dtype and device == self.device
    if unchanged and not copy and (memory_format is preserve_format or self.is_contiguous(memory_format)):
        return self
    return to_copy_op(self, dtype=dtype, device=device, memory_format=memory_format)


def _converter(dt):
    def convert(self, memory_format=preserve_format):
        return to(self, dt, memory_format=memory_format)

    convert.__doc__ = f"``self.to({dt!r})``."
    return convert


def type_as(self, other):
    return to(self, other.dtype)


def cpu(self, memory_format=preserve_format):
    return to(self, "cpu", memory_format=memory_format)


def cuda(self, device=None, non_blocking: bool = False, memory_format=preserve_format):
    if device is None:
        device = "cuda"
    elif isinstance(device, builtins.int):
        device = f"cuda:{device}"
    return to(self, device, memory_format=memory_format)


# -- conversions to Python (need data; not ops) ------------------------------------------
def item(self):
    """The value of a one-element tensor as a Python number."""
    n = self.numel()
    if n != 1:
        raise RuntimeError(f"a Tensor with {n} elements cannot be converted to Scalar")
    return values(self).item()


def tolist(self):
    return values(self).tolist()


def values(tensor):
    """The array of a tensor's values to read (bfloat16 bits widened to float32, NOTE: [bfloat16])."""
    arr = tensor._array()
    return widen(_host_module(arr), arr) if tensor._dtype is bfloat16 else arr


def _bool(self) -> bool:
    n = self.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return builtins.bool(item(self))


def _float(self) -> float:
    return builtins.float(item(self))


def _int(self) -> int:
    return builtins.int(item(self))


def _index(self) -> int:
    if self.dtype.is_floating_point or self.numel() != 1:
        raise TypeError("only integer tensors of a single element can be converted to an index")
    return operator.index(item(self))


def _len(self) -> int:
    if self.ndim == 0:
        raise TypeError("len() of a 0-d tensor")
    return self._sizes[0]


def _repr(self, *, tensor_contents=None) -> str:
    arr = values(self)
    host = arr if isinstance(arr, np.ndarray) else arr.get()
    if self._grad_fn is not None:
        autograd = f"grad_fn=<{self._grad_fn.name()}>"
    else:
        autograd = "requires_grad=True" if self._requires_grad else ""
    return format_tensor(host, self.dtype, self.device, autograd)


def _format(self, spec: str) -> str:
    if self.ndim == 0:
        return format(item(self), spec)
    return object.__format__(self, spec)


METHODS = {
    "to": to,
    "float": _converter(float32),
    "double": _converter(float64),
    "half": _converter(float16),
    "bfloat16": _converter(bfloat16),
    "int": _converter(int32),
    "long": _converter(int64),
    "short": _converter(int16),
    "char": _converter(int8),
    "byte": _converter(uint8),
    "bool": _converter(bool_),
    "type_as": type_as,
    "cpu": cpu,
    "cuda": cuda,
    "clone": clone,
    "copy_": copy_,
    "fill_": fill_,
    "zero_": zero_,
    "item": item,
    "tolist": tolist,
    "__bool__": _bool,
    "__float__": _float,
    "__int__": _int,
    "__index__": _index,
    "__len__": _len,
    "__repr__": _repr,
    "__str__": _repr,
    "__format__": _format,
    **_DLPACK_METHODS,  # __dlpack__, __dlpack_device__ (defined with the rest of the interop)
}
