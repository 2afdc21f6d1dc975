"""Memory for a scan's stacked outputs, reused by the next call of the same scan once nothing else holds it.

NOTE: [recycled scan rows] A scan's stacked outputs (the step outputs, and under autograd the
saved carries and products) are large fresh arrays, new on every call; the system allocator
maps such arrays afresh and every page is faulted in on the first write, which cost as much
as the rest of an LSTM's training step on a loaded machine (25 ms of page faults for six
3 MB arrays). The unrolled graph never pays it: its per-step tensors are small and come from
the recycled heap. So a scan runner keeps the flat buffers of the stacked outputs it made
and hands one out again when the tensors over it are gone: every tensor, view, NumPy array
or storage over a buffer holds a Python reference to it, so a buffer that only this pool
refers to is unused (``sys.getrefcount``). Only the buffers of the last ``KEEP`` outputs are
kept, so the memory held is bounded by one call's stacked outputs.
"""
from __future__ import annotations

import sys
import threading

import numpy as np

from dynamo_lite.tensor.device import CPU
from dynamo_lite.tensor.layout import contiguous_strides
from dynamo_lite.tensor.storage import Storage
from dynamo_lite.tensor.tensor import Tensor

UINT8 = np.dtype(np.uint8)
KEEP = 16
_UNUSED = 2  # references to a pooled buffer nobody else holds: the pool's list and the call's argument


class RecycledRows:
    """The stacked-output buffers of one scan runner (see NOTE: [recycled scan rows])."""

    def __init__(self):
        self.buffers: list = []
        self._lock = threading.Lock()  # two threads running the scan must not take one buffer

    def _buffer(self, nbytes: int):
        for index in range(len(self.buffers)):
            if self.buffers[index].nbytes == nbytes and sys.getrefcount(self.buffers[index]) == _UNUSED:
                return self.buffers.pop(index)
        return np.empty(nbytes, UINT8)

    def rows(self, length: int, like) -> tuple:
        """``(tensor, array)``: a contiguous CPU tensor for ``length`` rows shaped like the tensor ``like``."""
        sizes = (length, *like._sizes)
        strides = contiguous_strides(sizes)
        dtype = like._dtype
        itemsize = dtype.itemsize
        nbytes = max(1, length * like.numel() * itemsize)
        with self._lock:
            buffer = self._buffer(nbytes)
            self.buffers.append(buffer)
            del self.buffers[:-KEEP]
        array = np.ndarray(sizes, dtype.numpy, buffer, 0, tuple(s * itemsize for s in strides))
        tensor = Tensor._make(Storage(buffer, CPU), sizes, strides, 0, dtype)
        tensor._array_cache = array
        return tensor, array
