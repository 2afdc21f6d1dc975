"""Eager execution of a registry op: meta rule, output allocation, kernel."""
from __future__ import annotations

import threading

import numpy as np

from ...tensor.device import CPU, array_module
from ...tensor.meta import TensorMeta
from ...tensor.bfloat16 import narrow, widen
from ...tensor.autograd_fields import GRAD_MODE
from ...tensor.dtype import DEFAULT as DEFAULT_DTYPE
from ...tensor.dtype import bfloat16
from ...tensor.tensor import Tensor, empty_like_meta, empty_strided
from ..autocast.state import AUTOCAST, AUTOCAST_HOOK
from .meta_rules import device_mismatch


def _map(fn, value):
    """Apply ``fn`` to every Tensor inside nested tuples/lists/dicts."""
    if isinstance(value, Tensor):
        return fn(value)
    if isinstance(value, (tuple, list)):
        return type(value)(_map(fn, v) for v in value)
    if isinstance(value, dict):
        return {k: _map(fn, v) for k, v in value.items()}
    return value


def check_same_device(devices) -> None:
    if len(devices) > 1:
        raise device_mismatch(devices[1], devices[0])


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


def is_tracing() -> bool:
    """True while the compiler traces library code (ops are recorded, not run).

    Library code that eager mode runs with Python numbers read from tensors (``.item()``)
    asks this to keep those numbers as tensors in a graph (see optim/adam.py).
    """
    return TRACING.tracer is not None


class AutogradHook:
    """Where ``dynamo_lite.autograd`` plugs in: ``record(op, args, kwargs)`` runs an op
    with a tensor argument that requires grad.

    NOTE: [autograd hook] ops sit below autograd in the layering, so dispatch does not
    import it; the autograd package sets ``AUTOGRAD.record`` when imported. The eager
    fast path pays one flag test per tensor argument: only an op that meets a tensor
    with ``requires_grad`` goes through ``record``, which runs the op through
    ``dispatch(..., record_grad=False)`` and attaches the ``grad_fn``.
    """

    record = None


AUTOGRAD = AutogradHook()


def dispatch(op, args, kwargs, record_grad=True):
    """Run ``op`` eagerly on tensors: the same meta rule the tracer uses decides the outputs.

    NOTE: [dispatch fast path] Eager overhead per op is a few microseconds, so arguments
    are scanned once with a flat loop (tensors nested in lists/dicts, as in ``cat``, take
    the general ``_map`` path); ``empty_strided`` builds CPU outputs with their arrays.
    """
    if AUTOCAST.dtypes and op.name in AUTOCAST_HOOK.policies:  # NOTE: [autocast] in ops/autocast/policy.py
        args, kwargs = AUTOCAST_HOOK.cast(op, args, kwargs)
    tracer = TRACING.tracer
    if tracer is not None:
        return tracer.record(op, args, kwargs)
    devices = []
    flat = True
    needs_grad = False
    bf16 = False
    with_offset = _META_CACHE_KIND.get(op)
    if with_offset is None:
        with_offset = _META_CACHE_KIND[op] = _cache_kind(op)
    key = [op, DEFAULT_DTYPE.value] if with_offset is not _UNCACHED else None
    for a in args:
        if isinstance(a, Tensor):
            if a._requires_grad:
                needs_grad = True
            if a._dtype is bfloat16:
                bf16 = True
            storage = a._storage
            dev = storage.device
            if not devices or (dev is not devices[0] and dev not in devices):
                devices.append(dev)
            if key is not None:
                key += (a._sizes, a._strides, a._dtype, dev.type, dev.index, a._offset if with_offset else None)
        elif isinstance(a, _CONTAINERS) and _holds_tensor(a):
            flat = False
            needs_grad = _note_devices(devices, a) or needs_grad
        elif key is not None:
            key += (type(a), a, tuple(map(type, a)) if type(a) in _SEQUENCES else None)
    if kwargs:
        for k, v in kwargs.items():
            if isinstance(v, Tensor) or isinstance(v, _CONTAINERS) and _holds_tensor(v):
                flat = False
                needs_grad = _note_devices(devices, v) or needs_grad
            elif key is not None:
                key += (k, type(v), v, tuple(map(type, v)) if type(v) in _SEQUENCES else None)
    if needs_grad and record_grad and AUTOGRAD.record is not None and (GRAD_MODE.enabled or "view" in op.tags):
        return AUTOGRAD.record(op, args, kwargs)  # under no_grad only a view needs record (its view metadata)
    if len(devices) > 1:
        check_same_device(devices)
    out_meta = None
    if flat and key is not None:
        key = tuple(key)
        try:
            out_meta = _META_CACHE.get(key)
        except TypeError:  # an argument that does not hash
            key = None
    else:
        key = None
    if out_meta is None:
        out_meta = _computed_meta(op, args, kwargs, flat, key)
    if op.view is not None:
        base = args[0]
        sizes, strides, offset = op.view((base._sizes, base._strides, base._offset), *args[1:], **kwargs)
        view = base._view(sizes, strides, offset, out_meta._dtype)
        if "untracked_view" in op.tags:
            view._view_base = None
        return view
    device = devices[0] if devices else (getattr(out_meta, "device", None) or CPU)
    xp = np if device.type == "cpu" else array_module(device)
    single = type(out_meta) is TensorMeta
    if bf16 or (out_meta._dtype is bfloat16 if single else _bfloat16_output(out_meta)) or (
            not flat and _has_bfloat16((args, kwargs))):
        return dispatch_bfloat16(op, xp, args, kwargs, out_meta)
    if flat:
        arrays = [a._array() if isinstance(a, Tensor) else a for a in args]
        array_kwargs = kwargs
    else:
        arrays = _map(Tensor._array, args)
        array_kwargs = _map(Tensor._array, kwargs)
    if "inplace" in op.tags:
        target = args[0]
        op.kernel(xp, *arrays, out=arrays[0], **array_kwargs)
        target._bump_version()
        return target
    if single:
        output = empty_strided(out_meta._sizes, out_meta._strides, out_meta._dtype, out_meta._device)
        arr = output._array()
        result = op.kernel(xp, *arrays, out=arr, **array_kwargs)
        if result is not arr:
            arr[...] = result
        return output
    outputs = _allocate(out_meta)
    result = op.kernel(xp, *arrays, out=_map(Tensor._array, outputs), **array_kwargs)
    return _store(outputs, result, out_meta)


_CONTAINERS = (tuple, list, dict)
_SEQUENCES = (tuple, list)  # in a cache key with their items' types: (1, 2) == (1.0, 2) == (True, 2)

# NOTE: [eager meta cache] The output meta of an op is a function of its inputs' geometry
# (sizes, strides, dtype, device), its other arguments and the default dtype: the compiler
# relies on the same when it guards a graph on TensorMeta.key() and constants. Eager dispatch
# keeps the metas of the ops whose rules read nothing else (pointwise, matmul, reduction; views
# and in-place ops with the storage offset in the key too), so an op repeated in a loop pays a
# dict lookup instead of its meta rule. Arguments that do not hash (lists, slices before 3.12)
# and tensors inside containers skip the cache; a meta rule that raises is never cached. Equal
# values of different types (1, 1.0, True) are different keys.
_UNCACHED = object()
_CACHED_TAGS = frozenset(("pointwise", "matmul", "reduction"))
_CACHED_WITH_OFFSET_TAGS = frozenset(("view", "inplace"))
_META_CACHE_KIND: dict = {}  # op -> False (cached), True (cached, offset in the key) or _UNCACHED
_META_CACHE: dict = {}
_META_CACHE_LIMIT = 4096


def _cache_kind(op):
    tags = op.tags
    if tags & _CACHED_WITH_OFFSET_TAGS:
        return True
    return False if tags & _CACHED_TAGS else _UNCACHED


def _meta_args(args, kwargs, flat: bool):
    if flat:
        return [TensorMeta.of(a) if isinstance(a, Tensor) else a for a in args], kwargs
    return _map(TensorMeta.of, args), _map(TensorMeta.of, kwargs)


def _computed_meta(op, args, kwargs, flat: bool, key):
    """``op.meta`` over the arguments' metas, kept under ``key`` unless it is None (NOTE: [eager meta cache])."""
    meta_args, meta_kwargs = _meta_args(args, kwargs, flat)
    out_meta = op.meta(*meta_args, **meta_kwargs)
    if key is not None and (type(out_meta) is TensorMeta or (
            type(out_meta) is tuple and all(type(m) is TensorMeta for m in out_meta))):
        if len(_META_CACHE) >= _META_CACHE_LIMIT:
            _META_CACHE.clear()
        _META_CACHE[key] = out_meta
    return out_meta


def _bfloat16_output(meta) -> bool:
    if type(meta) is TensorMeta:
        return meta._dtype is bfloat16
    return isinstance(meta, (tuple, list)) and any(getattr(m, "_dtype", None) is bfloat16 for m in meta)


def _has_bfloat16(value) -> bool:
    return any(t._dtype is bfloat16 for t in _flat_tensors(value))


def dispatch_bfloat16(op, xp, args, kwargs, out_meta):
    """Run ``op`` with bfloat16 tensors widened to float32 and bfloat16 results rounded back
    (NOTE: [bfloat16] in tensor/bfloat16.py)."""

    def array(t):
        arr = t._array()
        return widen(xp, arr) if t._dtype is bfloat16 else arr

    arrays, array_kwargs = _map(array, args), _map(array, kwargs)
    if "inplace" in op.tags:
        target = args[0]
        op.kernel(xp, *arrays, out=arrays[0], **array_kwargs)
        if target._dtype is bfloat16:
            target._array()[...] = narrow(xp, arrays[0])
        target._bump_version()
        return target
    outputs = _allocate(out_meta)
    scratch = _map(lambda t: xp.empty(t._sizes, np.float32) if t._dtype is bfloat16 else t._array(), outputs)
    result = op.kernel(xp, *arrays, out=scratch, **array_kwargs)
    for output, value in zip(_flat_tensors(outputs), _flat_arrays(result, out_meta)):
        target = output._array()
        if output._dtype is bfloat16:
            target[...] = narrow(xp, value)
        elif value is not target:
            target[...] = value
    return outputs


def _flat_tensors(value):
    found = []
    _map(found.append, value)
    return found


def _flat_arrays(result, meta):
    if isinstance(meta, TensorMeta):
        return [result]
    return [r for r, m in zip(result, meta) if isinstance(m, TensorMeta)]


def _holds_tensor(value) -> bool:
    """Whether a tuple/list/dict argument has a tensor inside (a shape tuple has none)."""
    items = value.values() if isinstance(value, dict) else value
    for item in items:
        if isinstance(item, Tensor) or isinstance(item, _CONTAINERS) and _holds_tensor(item):
            return True
    return False


def _note_devices(devices, value) -> bool:
    """Add the devices of the tensors nested in ``value``; True if one requires grad."""
    needs_grad = False

    def note(tensor):
        nonlocal needs_grad
        if tensor._device not in devices:
            devices.append(tensor._device)
        needs_grad = needs_grad or tensor._requires_grad

    _map(note, value)
    return needs_grad


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
