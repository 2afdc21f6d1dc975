"""Eager execution of a registry op: meta rule, output allocation, kernel."""
from __future__ import annotations

import threading

from ..tensor.device import array_module
from ..tensor.meta import TensorMeta
from ..tensor.tensor import Tensor, empty_like_meta


def _map(fn, value):
    """Apply ``fn`` to every Tensor inside nested tuples/lists/dicts."""
    if isinstance(value, Tensor):
        return fn(value)
    if isinstance(value, (tuple, list)):
        return type(value)(_map(fn, v) for v in value)
    if isinstance(value, dict):
        return {k: _map(fn, v) for k, v in value.items()}
    return value


def _devices(args, kwargs):
    found = []
    _map(lambda t: found.append(t._device) if t._device not in found else None, (args, kwargs))
    return found


def check_same_device(devices) -> None:
    if len(devices) > 1:
        a, b = devices[0], devices[1]
        raise RuntimeError(
            f"Expected all tensors to be on the same device, but found at least two devices, {b} and {a}!"
        )


class TracingState(threading.local):
    """The tracer (if any) that records ops called on this thread.

    NOTE: [tracing through library code] While the translator calls dynamo_lite library
    code (tensor methods, ``dl.*`` functions, ``nn.functional``) on proxy tensors, it sets
    ``TRACING.tracer``; every op dispatched meanwhile is handed to ``tracer.record(op,
    args, kwargs)`` instead of running, so each op's Python wrapper serves eager mode and
    tracing alike. Thread-local so that eager code on other threads is unaffected.
    """

    tracer = None


TRACING = TracingState()


def dispatch(op, args, kwargs):
    """Run ``op`` eagerly on tensors: the same meta rule the tracer uses decides the outputs."""
    tracer = TRACING.tracer
    if tracer is not None:
        return tracer.record(op, args, kwargs)
    devices = _devices(args, kwargs)
    check_same_device(devices)
    meta_args = _map(TensorMeta.of, args)
    meta_kwargs = _map(TensorMeta.of, kwargs)
    out_meta = op.meta(*meta_args, **meta_kwargs)
    if op.view is not None:
        base = args[0]
        sizes, strides, offset = op.view((base._sizes, base._strides, base._offset), *args[1:], **kwargs)
        return base._view(sizes, strides, offset)
    xp = array_module(devices[0]) if devices else array_module(getattr(out_meta, "device", None) or _cpu())
    arrays = _map(Tensor._array, args)
    array_kwargs = _map(Tensor._array, kwargs)
    if "inplace" in op.tags:
        target = args[0]
        op.kernel(xp, *arrays, out=arrays[0], **array_kwargs)
        target._bump_version()
        return target
    outputs = _allocate(out_meta)
    result = op.kernel(xp, *arrays, out=_map(Tensor._array, outputs), **array_kwargs)
    return _store(outputs, result, out_meta)


def _cpu():
    from ..tensor.device import CPU

    return CPU


def _allocate(meta):
    if isinstance(meta, TensorMeta):
        return empty_like_meta(meta)
    if isinstance(meta, (tuple, list)):
        return type(meta)(_allocate(m) for m in meta)
    return None


def _store(outputs, result, meta):
    """Copy kernel results into the preallocated outputs unless the kernel wrote in place."""
    if isinstance(meta, TensorMeta):
        arr = outputs._array()
        if result is not arr:
            arr[...] = result
        return outputs
    if isinstance(meta, (tuple, list)):
        return type(meta)(_store(o, r, m) for o, r, m in zip(outputs, result, meta))
    return result
