"""Autocast policy: which ops run in lower precision or in float32 under dl.autocast, and the casts.

NOTE: [autocast] ``dl.autocast(device_type)`` (dynamo_lite/amp) switches the per-thread state of
ops/autocast/state.py on for one device type. ``dispatch`` then asks ``autocast_arguments`` to cast the floating tensors of an
op listed in ``POLICIES`` before running (or recording) it: to the autocast dtype for the
matmul/convolution family, to float32 for the ops listed as needing range, to the widest
input dtype for the promoting ones. float64 tensors and tensors on another device type are
left alone, as torch does. The casts are ordinary ``_to_copy`` ops, so autograd records them
(gradients reach float32 parameters in float32) and the tracer puts them in the graph.
Composite functions (the losses in nn/functional/loss.py, cdist) are decorated with ``float32_function`` instead.
"""
from __future__ import annotations

import functools

from ...tensor.dtype import bfloat16, float16, float32, float64, promote_types
from ...tensor.tensor import Tensor
from .state import AUTOCAST, AUTOCAST_HOOK
from ..creation.conversions import to_copy_op

__all__ = ["AUTOCAST", "POLICIES", "autocast_arguments", "float32_function"]

LOWER, FLOAT32, PROMOTE = "lower_precision", "float32", "promote"

#: policy -> registry op names, as torch's autocast lists (recorded in tests/amp/fixtures).
_LISTS = {
    LOWER: ("mm", "matmul", "bmm", "baddbmm", "addmm", "linear", "conv2d", "conv_transpose2d", "einsum"),
    FLOAT32: ("prod", "linalg_inv", "linalg_solve", "linalg_cholesky", "polar", "view_as_complex"),
    PROMOTE: ("cat", "stack"),
}
#: op name -> policy.
POLICIES = {name: policy for policy, names in _LISTS.items() for name in names}

#: the dtypes each device type's autocast accepts.
SUPPORTED_DTYPES = {"cpu": (bfloat16, float16), "cuda": (bfloat16, float16)}


def _eligible(value, device_type) -> bool:
    return isinstance(value, Tensor) and value._dtype.is_floating_point and value._dtype is not float64 \
        and value._device.type == device_type


def _cast(value, dtype):
    return value if value._dtype is dtype else to_copy_op(value, dtype=dtype, device=value._device)


def _map_tensors(fn, value):
    if isinstance(value, Tensor):
        return fn(value)
    if isinstance(value, (tuple, list)):
        return type(value)(_map_tensors(fn, v) for v in value)
    return value


def _first_device_type(args):
    for value in args:
        if isinstance(value, Tensor):
            return value._device.type
        if isinstance(value, (tuple, list)):
            found = _first_device_type(value)
            if found is not None:
                return found
    return None


def _target_dtype(policy, device_dtype, args):
    if policy == LOWER:
        return device_dtype
    if policy == FLOAT32:
        return float32
    widest = None
    for value in args:
        for tensor in (value if isinstance(value, (tuple, list)) else (value,)):
            if isinstance(tensor, Tensor) and tensor._dtype.is_floating_point:
                widest = tensor._dtype if widest is None else promote_types(widest, tensor._dtype)
    return widest


def autocast_arguments(op, args, kwargs):
    """``args``/``kwargs`` with the eligible tensors cast as ``op``'s policy says (unchanged when
    autocast is off for the device type of the op's first tensor)."""
    device_type = _first_device_type(args)
    device_dtype = AUTOCAST.dtypes.get(device_type)
    if device_dtype is None:
        return args, kwargs
    dtype = _target_dtype(POLICIES[op.name], device_dtype, args)
    if dtype is None:
        return args, kwargs

    def cast(tensor):
        return _cast(tensor, dtype) if _eligible(tensor, device_type) else tensor

    return _map_tensors(cast, args), {k: _map_tensors(cast, v) for k, v in kwargs.items()}


def float32_function(fn):
    """``fn`` with its floating tensor arguments cast to float32 while autocast is on for their
    device type: the composite functions torch's autocast runs in float32 (losses).

    Example:
        >>> mse = float32_function(lambda a, b: ((a - b) ** 2).mean())
    """

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not AUTOCAST.dtypes:
            return fn(*args, **kwargs)
        device_type = _first_device_type(args)
        if device_type not in AUTOCAST.dtypes:
            return fn(*args, **kwargs)

        def cast(tensor):
            return _cast(tensor, float32) if _eligible(tensor, device_type) else tensor

        return fn(*_map_tensors(cast, args), **{k: _map_tensors(cast, v) for k, v in kwargs.items()})

    return wrapper


AUTOCAST_HOOK.policies, AUTOCAST_HOOK.cast = POLICIES, autocast_arguments
