"""default_collate / default_convert: merge a list of samples into a batch, structure by structure."""
from __future__ import annotations

import collections.abc
import numbers

import numpy as np

from ...ops.core.api import as_tensor, from_numpy, stack, tensor
from ...tensor.dtype import float64, int64
from ...tensor.tensor import Tensor
from .worker import get_worker_info


def _collate_tensors(batch):
    info = get_worker_info()
    if info is not None and _plain_cpu_rows(batch):
        # In a worker: stack straight into shared memory, which the main process maps without
        # copying (NOTE: [worker tensors in shared memory]).
        out = info._allocator.empty((len(batch), *batch[0]._sizes), batch[0]._dtype)
        rows = out._array()
        for i, sample in enumerate(batch):
            rows[i] = sample._array()
        return out
    return stack(batch, 0)


def _plain_cpu_rows(batch) -> bool:
    """Same shape and dtype, on the CPU, outside autograd: rows a plain copy can stack."""
    first = batch[0]
    return first.numel() > 0 and all(
        type(t) is Tensor and t._sizes == first._sizes and t._dtype is first._dtype
        and t._storage.device.type == "cpu" and not t._requires_grad for t in batch)


def _collate_numpy(batch):
    if batch[0].dtype.kind in "SaUO":
        raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {batch[0].dtype}")
    return stack([as_tensor(b) for b in batch], 0)


def _collate_float(batch):
    return tensor(batch, dtype=float64)


def _collate_int(batch):
    return tensor(batch, dtype=int64)


# Leaf types, checked in order (bool is an int, so it stays with ints as torch does).
_LEAVES = (
    (Tensor, _collate_tensors),
    (np.ndarray, _collate_numpy),
    (float, _collate_float),
    (numbers.Integral, _collate_int),
    ((str, bytes), list),
)


def default_collate(batch):
    """Stack tensors/arrays along a new first dimension; numbers become tensors; recurse into containers.

    Example:
        >>> default_collate([(dl.ones(2), 0), (dl.zeros(2), 1)])
        [tensor([[1., 1.], [0., 0.]]), tensor([0, 1])]
    """
    first = batch[0]
    for kind, collate in _LEAVES:
        if isinstance(first, kind):
            return collate(batch)
    if isinstance(first, collections.abc.Mapping):
        return {key: default_collate([sample[key] for sample in batch]) for key in first}
    if isinstance(first, tuple) and hasattr(first, "_fields"):
        return type(first)(*(default_collate(list(samples)) for samples in zip(*batch)))
    if isinstance(first, collections.abc.Sequence):
        if any(len(sample) != len(first) for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(samples)) for samples in zip(*batch)]
    raise TypeError("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                    f"found {type(first)}")


def default_convert(data):
    """Turn numpy arrays into tensors inside ``data``'s structure (the no-batching collate)."""
    if isinstance(data, np.ndarray) and data.dtype.kind not in "SaUO":
        return from_numpy(data)
    if isinstance(data, collections.abc.Mapping):
        return {key: default_convert(value) for key, value in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, (list, tuple)):
        return [default_convert(d) for d in data]
    return data
