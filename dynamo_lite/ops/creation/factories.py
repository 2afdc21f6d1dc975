"""Factories as ops: tensor, zeros, ones, full, empty, arange, linspace, eye and the *_like forms.

A factory op has no tensor input (``*_like`` ops take the model tensor): its meta rule
builds the TensorMeta from ``size``/``dtype``/``device``, its kernel fills the output
the dispatcher allocated. Wrappers resolve defaults (the default dtype, dtype inference
from values) so each op receives concrete values. Random factories live in
``ops/random/random_factories.py`` and are re-exported here.
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from ...tensor import layout
from ...tensor.device import as_device
from ...tensor.dtype import (
    COMPLEX_OF, as_dtype, bfloat16, bool_, from_numpy_dtype, get_default_dtype, int64, promote_types,
)
from ...tensor.interop import from_numpy
from ...tensor.layout import contiguous_format, preserve_format
from ...tensor.meta import TensorMeta
from ...tensor.symint import SymInt
from .conversions import _assign, _host_module, _is_tensor, clone, to
from .factory_args import (
    accepts_requires_grad, check_no_extra, dtype_or_default, factory_meta, like_args, like_meta, number,
    scalar_dtype, size_arg,
)
from ..random.random_factories import __all__ as _random_all
from ..random.random_factories import *  # noqa: F401,F403  (random factories are part of this module's API)
from ..core.registry import register_op

__all__ = [
    "arange", "as_tensor", "empty", "empty_like", "empty_strided", "eye", "full", "full_like",
    "linspace", "ones", "ones_like", "tensor", "zeros", "zeros_like",
] + list(_random_all)


# -- data -> (shape, dtype) ----------------------------------------------------------------
def _is_sequence(value) -> bool:
    return isinstance(value, (list, tuple, range)) or (isinstance(value, np.ndarray) and value.ndim > 0)


def _leaf_dtype(kind):
    if kind is builtins.bool:
        return bool_
    if kind is builtins.int:
        return int64
    if kind is builtins.float:
        return get_default_dtype()
    if kind is builtins.complex:
        return COMPLEX_OF[get_default_dtype()]
    if issubclass(kind, (np.generic,)):
        return from_numpy_dtype(kind)
    raise TypeError(f"Could not infer dtype of {kind.__name__}")


def infer_data(data):
    """Shape, dtype and flat leaves of nested sequences, as ``torch.tensor`` infers them."""
    if isinstance(data, np.ndarray):
        return data.shape, from_numpy_dtype(data.dtype), None
    shape, level = [], [data]
    while level and _is_sequence(level[0]):
        n = len(level[0])
        for value in level:
            if not _is_sequence(value):
                raise TypeError(f"expected a sequence at dim {len(shape)}, got {type(value).__name__}")
            if len(value) != n:
                raise ValueError(f"expected sequence of length {n} at dim {len(shape)} (got {len(value)})")
        shape.append(n)
        level = [item for value in level for item in value]
    if any(_is_tensor(v) for v in level):
        level = [_tensor_scalar(v) for v in level]
    dt = None
    for kind in {type(v) for v in level}:
        if _is_sequence_type(kind):
            raise ValueError(f"expected sequence of length 0 at dim {len(shape)} (got a sequence)")
        d = _leaf_dtype(kind)
        dt = d if dt is None else promote_types(dt, d)
    return tuple(shape), dt or get_default_dtype(), level


def _is_sequence_type(kind) -> bool:
    return issubclass(kind, (list, tuple, range, np.ndarray))


def _tensor_scalar(value):
    if not _is_tensor(value):
        return value
    if value.numel() != 1:
        raise ValueError("only one element tensors can be converted to Python scalars")
    arr = value._array()
    arr = arr if isinstance(arr, np.ndarray) else arr.get()
    return arr.reshape(())[()]  # a NumPy scalar keeps the tensor's dtype


def _host_array(data, dtype):
    shape, inferred, leaves = infer_data(data)
    dt = inferred if dtype is None else as_dtype(dtype)
    # bfloat16 data is given as float32 values: dispatch rounds them (NOTE: [bfloat16]).
    host_dtype = np.float32 if dt is bfloat16 else dt.numpy
    try:
        with np.errstate(invalid="ignore", over="ignore"):
            if leaves is None:
                return np.array(data, dtype=host_dtype), dt
            return np.array(leaves, dtype=host_dtype).reshape(shape), dt
    except OverflowError:
        raise RuntimeError(f"value cannot be converted to type {dt.name} without overflow") from None


# -- ops ------------------------------------------------------------------------------------
def _tensor_meta(data, dtype, device):
    return TensorMeta(data.shape, dtype, None, device)


def _fill_with(value):
    def kernel(xp, *tensor_args, out, **_):
        out[...] = value
        return out

    return kernel


def _arange_length(start, end, step) -> int:
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if all(isinstance(v, (builtins.int, SymInt)) for v in (start, end, step)):
        return -(-(end - start) // step)
    return builtins.int(math.ceil((end - start) / step))


def _arange_kernel(xp, *, out, start, end, step, dtype, device):
    mod = _host_module(out)
    exact = all(isinstance(v, builtins.int) for v in (start, end, step))
    index = mod.arange(out.shape[0], dtype=np.int64 if exact else np.float64)
    return _assign(out, index * step + start)


def _linspace_kernel(xp, *, out, start, end, steps, dtype, device):
    mod = _host_module(out)
    if steps == 1:
        return _assign(out, start)
    step = (end - start) / (steps - 1)
    idx = mod.arange(steps, dtype=np.float64)
    values = mod.where(idx < steps // 2, start + step * idx, end - step * (steps - 1 - idx))
    return _assign(out, values)


def _eye_kernel(xp, *, out, n, m, dtype, device):
    out[...] = 0
    diagonal = _host_module(out).arange(builtins.min(n, m))
    out[diagonal, diagonal] = 1
    return out


tensor_op = register_op("tensor", meta=_tensor_meta, kernel=lambda xp, *, out, data, **_: _assign(out, data))
empty_op = register_op("empty", meta=factory_meta, kernel=lambda xp, *, out, **_: out)
zeros_op = register_op("zeros", meta=factory_meta, kernel=_fill_with(0))
ones_op = register_op("ones", meta=factory_meta, kernel=_fill_with(1))
full_op = register_op(
    "full", meta=factory_meta, kernel=lambda xp, *, out, fill_value, **_: _assign(out, fill_value)
)
empty_strided_op = register_op(
    "empty_strided",
    meta=lambda size, stride, dtype, device: TensorMeta(size, dtype, stride, device),
    kernel=lambda xp, *, out, **_: out,
)
arange_op = register_op(
    "arange",
    meta=lambda start, end, step, dtype, device: TensorMeta((_arange_length(start, end, step),), dtype, None, device),
    kernel=_arange_kernel,
)
linspace_op = register_op(
    "linspace", meta=lambda start, end, steps, dtype, device: TensorMeta((steps,), dtype, None, device),
    kernel=_linspace_kernel,
)
eye_op = register_op(
    "eye", meta=lambda n, m, dtype, device: TensorMeta((n, m), dtype, None, device), kernel=_eye_kernel
)
empty_like_op = register_op("empty_like", meta=like_meta, kernel=lambda xp, x, *, out, **_: out)
zeros_like_op = register_op("zeros_like", meta=like_meta, kernel=_fill_with(0))
ones_like_op = register_op("ones_like", meta=like_meta, kernel=_fill_with(1))
full_like_op = register_op(
    "full_like", meta=like_meta, kernel=lambda xp, x, *, out, fill_value, **_: _assign(out, fill_value)
)


# -- wrappers -----------------------------------------------------------------------------
@accepts_requires_grad
def tensor(data, *, dtype=None, device=None, **kwargs):
    """A new tensor holding a copy of ``data`` (nested lists/tuples of numbers, an array, a tensor).

    dtype is inferred as torch does: bools -> bool, ints -> int64, floats -> the default
    dtype; NumPy arrays keep theirs.

    Example:
        >>> dl.tensor([[1, 2], [3, 4]]).dtype
        dynamo_lite.int64
    """
    check_no_extra("tensor", kwargs)
    if _is_tensor(data):
        copy = clone(data, memory_format=contiguous_format)
        return to(copy, dtype=dtype or data.dtype, device=device or data.device)
    host, dt = _host_array(data, dtype)
    return tensor_op(data=host, dtype=dt, device=as_device(device))


def as_tensor(data, dtype=None, device=None):
    """Like ``tensor`` but shares memory when it can (tensors, NumPy arrays of a matching dtype).

    Example:
        >>> a = np.zeros(3); t = dl.as_tensor(a); t.numpy() is not None
        True
    """
    if _is_tensor(data):
        return to(data, dtype=dtype or data.dtype, device=device or data.device)
    if isinstance(data, np.ndarray):
        base = from_numpy(data)
        return to(base, dtype=dtype or base.dtype, device=device or base.device)
    return tensor(data, dtype=dtype, device=device)


@accepts_requires_grad
def empty(*size, dtype=None, device=None, memory_format=contiguous_format, **kwargs):
    """An uninitialized tensor of ``size`` (ints or one sequence)."""
    size = size_arg(size, kwargs)
    check_no_extra("empty", kwargs)
    return empty_op(size=size, dtype=dtype_or_default(dtype), device=as_device(device), memory_format=memory_format)


@accepts_requires_grad
def zeros(*size, dtype=None, device=None, **kwargs):
    """A tensor of zeros.

    Example:
        >>> dl.zeros(2, 3).shape
        dl.Size([2, 3])
    """
    size = size_arg(size, kwargs)
    check_no_extra("zeros", kwargs)
    return zeros_op(size=size, dtype=dtype_or_default(dtype), device=as_device(device))


@accepts_requires_grad
def ones(*size, dtype=None, device=None, **kwargs):
    """A tensor of ones (same arguments as ``zeros``)."""
    size = size_arg(size, kwargs)
    check_no_extra("ones", kwargs)
    return ones_op(size=size, dtype=dtype_or_default(dtype), device=as_device(device))


@accepts_requires_grad
def full(size, fill_value, *, dtype=None, device=None, **kwargs):
    """A tensor filled with ``fill_value``; dtype inferred from it (bool, int64, default float).

    Example:
        >>> dl.full((2,), 7).dtype
        dynamo_lite.int64
    """
    check_no_extra("full", kwargs)
    if _is_tensor(fill_value):
        fill_value = fill_value.item()
    dt = scalar_dtype(fill_value) if dtype is None else as_dtype(dtype)
    return full_op(size=layout.check_shape((size,)), fill_value=fill_value, dtype=dt, device=as_device(device))


@accepts_requires_grad
def empty_strided(size, stride, *, dtype=None, device=None, **kwargs):
    check_no_extra("empty_strided", kwargs)
    size, stride = layout.check_shape((size,)), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {list(size)} vs {list(stride)}")
    return empty_strided_op(size=size, stride=stride, dtype=dtype_or_default(dtype), device=as_device(device))


@accepts_requires_grad
def arange(start, end=None, step=1, *, dtype=None, device=None, **kwargs):
    """Values from ``start`` (default 0) up to but excluding ``end``, every ``step``.

    Integer arguments give int64, any float argument the default dtype.

    Example:
        >>> dl.arange(1, 2.5, 0.5).tolist()
        [1.0, 1.5, 2.0]
    """
    check_no_extra("arange", kwargs)
    if end is None:
        start, end = 0, start
    start, end, step = number(start), number(end), number(step)
    if dtype is None:
        floating = any(isinstance(v, (builtins.float, np.floating)) for v in (start, end, step))
        dtype = get_default_dtype() if floating else int64
    return arange_op(start=start, end=end, step=step, dtype=as_dtype(dtype), device=as_device(device))


@accepts_requires_grad
def linspace(start, end, steps, *, dtype=None, device=None, **kwargs):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    check_no_extra("linspace", kwargs)
    steps = builtins.int(steps)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return linspace_op(
        start=number(start), end=number(end), steps=steps, dtype=dtype_or_default(dtype), device=as_device(device)
    )


@accepts_requires_grad
def eye(n, m=None, *, dtype=None, device=None, **kwargs):
    """An ``n`` x ``m`` (default square) identity matrix."""
    check_no_extra("eye", kwargs)
    m = n if m is None else m
    for name, v in (("n", n), ("m", m)):
        if v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    return eye_op(n=builtins.int(n), m=builtins.int(m), dtype=dtype_or_default(dtype), device=as_device(device))


@accepts_requires_grad
def empty_like(input, *, dtype=None, device=None, memory_format=preserve_format, **kwargs):
    check_no_extra("empty_like", kwargs)
    dtype, device = like_args(input, dtype, device)
    return empty_like_op(input, dtype=dtype, device=device, memory_format=memory_format)


@accepts_requires_grad
def zeros_like(input, *, dtype=None, device=None, memory_format=preserve_format, **kwargs):
    """Zeros shaped like ``input`` (its dense layout kept, e.g. channels_last)."""
    check_no_extra("zeros_like", kwargs)
    dtype, device = like_args(input, dtype, device)
    return zeros_like_op(input, dtype=dtype, device=device, memory_format=memory_format)


@accepts_requires_grad
def ones_like(input, *, dtype=None, device=None, memory_format=preserve_format, **kwargs):
    check_no_extra("ones_like", kwargs)
    dtype, device = like_args(input, dtype, device)
    return ones_like_op(input, dtype=dtype, device=device, memory_format=memory_format)


@accepts_requires_grad
def full_like(input, fill_value, *, dtype=None, device=None, memory_format=preserve_format, **kwargs):
    check_no_extra("full_like", kwargs)
    dtype, device = like_args(input, dtype, device)
    return full_like_op(input, fill_value=number(fill_value), dtype=dtype, device=device, memory_format=memory_format)


# -- Tensor.new_* ---------------------------------------------------------------------------
def _new(factory):
    def new(self, *size, dtype=None, device=None, **kwargs):
        dtype, device = like_args(self, dtype, device)
        return factory(*size, dtype=dtype, device=device, **kwargs)

    new.__name__ = f"new_{factory.__name__}"
    return new


def new_full(self, size, fill_value, *, dtype=None, device=None, **kwargs):
    dtype, device = like_args(self, dtype, device)
    return full(size, fill_value, dtype=dtype, device=device, **kwargs)


def new_tensor(self, data, *, dtype=None, device=None, **kwargs):
    dtype, device = like_args(self, dtype, device)
    return tensor(data, dtype=dtype, device=device, **kwargs)


METHODS = {
    "new_zeros": _new(zeros),
    "new_ones": _new(ones),
    "new_empty": _new(empty),
    "new_full": new_full,
    "new_tensor": new_tensor,
}
