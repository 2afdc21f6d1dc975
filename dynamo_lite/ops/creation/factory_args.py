"""Argument handling shared by factory ops: sizes, dtype defaults, factory meta rules."""
from __future__ import annotations

import functools

from ...tensor import layout
from ...tensor import views as rules
from ...tensor.device import as_device
from ...tensor.dtype import as_dtype, bool_, get_default_dtype, int64, scalar_category
from ...tensor.layout import contiguous_format, preserve_format
from ...tensor.meta import TensorMeta
from .conversions import _is_tensor


def size_arg(size, kwargs) -> tuple:
    """Shape from varargs ints, one sequence, or a ``size=`` keyword."""
    if "size" in kwargs:
        if size:
            raise TypeError("size given both positionally and as a keyword")
        size = (kwargs.pop("size"),)
    return layout.check_shape(size)


def accepts_requires_grad(factory):
    """Give a factory torch's ``requires_grad=`` keyword: the new tensor becomes a leaf that requires grad."""
    @functools.wraps(factory)
    def wrapper(*args, requires_grad=False, **kwargs):
        result = factory(*args, **kwargs)
        if requires_grad:  # a new tensor: no compiled guard has seen it (tensor/rebinds.py)
            result._assign_requires_grad(True, counted=False)
        return result
    return wrapper


def check_no_extra(name: str, kwargs) -> None:
    for ignored in ("layout", "pin_memory"):
        kwargs.pop(ignored, None)
    if kwargs:
        raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kwargs))}'")


def dtype_or_default(dtype):
    return get_default_dtype() if dtype is None else as_dtype(dtype)


def scalar_dtype(value):
    """The dtype torch gives a Python scalar: bool, int64, or the default float dtype."""
    return (bool_, int64, get_default_dtype())[scalar_category(value)]


def factory_meta(size, dtype, device, memory_format=contiguous_format, **_):
    strides = layout.memory_format_strides(size, memory_format)
    return TensorMeta(size, dtype, strides, device)


def like_meta(x, dtype, device, memory_format=preserve_format, **_):
    strides = rules.memory_format_strides(x._sizes, x._strides, memory_format)
    return TensorMeta(x._sizes, dtype, strides, device)


def like_args(input, dtype, device):
    """Resolve a *_like factory's dtype/device defaults from its model tensor."""
    return (input.dtype if dtype is None else as_dtype(dtype)), (input.device if device is None else as_device(device))


def number(value):
    """A Python number from a number or a one-element tensor (reads its data)."""
    return value.item() if _is_tensor(value) else value
