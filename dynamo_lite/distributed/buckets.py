"""Gradient buckets: which parameters share one flat buffer, and the GradBucket a comm hook sees.

NOTE: [gradient buckets] Parameters are assigned to buckets in the order their gradients
are expected to become ready (at first: the reverse of ``module.parameters()``; after the
first iteration: the order they actually became ready on rank 0). One bucket holds tensors
of one dtype; it is closed when its size reaches the current limit, which is 1 MiB for the
first bucket (so communication starts early in the backward) and ``bucket_cap_mb`` after
(when the user sets ``bucket_cap_mb``, every bucket has that limit).
Buckets are numbered by their first member's position in that order, and every rank
launches their reductions in bucket order, as MPI collectives must be started in the same
order on every rank.
"""
from __future__ import annotations

import numpy as np

from ..ops.core.api import empty

FIRST_BUCKET_BYTES = 1024 * 1024
#: the attribute DistributedDataParallel sets on its parameters: its bucket byte limits (first, then the
#: rest); dl.compile cuts training graphs where those buckets end (NOTE: [DDP graph split])
DDP_BUCKET_LIMITS = "_ddp_bucket_limits"


def assign_buckets(params, order, limits) -> list:
    """Lists of parameter indices, one per bucket, for ``params`` taken in ``order``.

    Args:
        params: the parameters (tensors).
        order: indices into ``params``, in expected ready order.
        limits: bucket byte limits; the last repeats.
    """
    open_buckets, closed = {}, []
    for index in order:
        p = params[index]
        key = p._dtype
        bucket = open_buckets.setdefault(key, {"indices": [], "bytes": 0, "limit": 0})
        bucket["indices"].append(index)
        bucket["bytes"] += p.numel() * p._dtype.itemsize
        if bucket["bytes"] >= limits[min(bucket["limit"], len(limits) - 1)]:
            closed.append(bucket["indices"])
            open_buckets[key] = {"indices": [], "bytes": 0, "limit": bucket["limit"] + 1}
    closed.extend(b["indices"] for b in open_buckets.values() if b["indices"])
    position = {index: i for i, index in enumerate(order)}
    return sorted(closed, key=lambda indices: position[indices[0]])


class Bucket:
    """One flat gradient buffer for some parameters (all of one dtype), and its reduction's state."""

    def __init__(self, index: int, params: list, indices: list):
        self.index = index
        self.indices = list(indices)
        self.params = [params[i] for i in indices]
        self.offsets, total = [], 0
        for p in self.params:
            self.offsets.append(total)
            total += p.numel()
        self.buffer = empty(total, dtype=self.params[0]._dtype)
        self.array = self.buffer._array()
        self.pending = len(self.indices)
        self.future = None

    def slot(self, position: int):
        """The part of the buffer (a NumPy view shaped as the parameter) for member ``position``."""
        p, start = self.params[position], self.offsets[position]
        return self.array[start:start + p.numel()].reshape(p.shape)

    def reset(self) -> None:
        self.pending = len(self.indices)
        self.future = None


class GradBucket:
    """What a DDP communication hook gets: a bucket's flat gradient buffer and its parameters.

    Example:
        >>> def hook(state, bucket):
        ...     return dl.distributed.all_reduce(bucket.buffer().div_(2), async_op=True).get_future().then(
        ...         lambda fut: fut.value()[0])
    """

    def __init__(self, bucket: Bucket, is_last: bool):
        self._bucket = bucket
        self._is_last = is_last

    def index(self) -> int:
        return self._bucket.index

    def buffer(self):
        """The flat tensor holding every member's gradient."""
        return self._bucket.buffer

    def set_buffer(self, tensor) -> None:
        np.copyto(self._bucket.array, tensor._array().reshape(-1))

    def parameters(self) -> list:
        return list(self._bucket.params)

    def gradients(self) -> list:
        """Each member's gradient, as a view of the buffer."""
        buffer = self._bucket.buffer
        return [buffer[start:start + p.numel()].view(p.shape) for p, start in zip(self._bucket.params,
                                                                                  self._bucket.offsets)]

    def is_last(self) -> bool:
        return self._is_last
