"""Helpers the generated NumPy code calls at run time: fresh output tensors, kernel results, windows."""
from __future__ import annotations

import numpy as np

from dynamo_lite.tensor.device import CPU
from dynamo_lite.tensor.storage import Storage
from dynamo_lite.tensor.tensor import Tensor, empty_strided

UINT8 = np.dtype(np.uint8)


def fresh_tensor(nbytes: int, sizes: tuple, strides: tuple, byte_strides: tuple, dtype,
                 _empty=np.empty, _ndarray=np.ndarray, _make=Tensor._make):
    """``(tensor, array)``: a new CPU tensor of this geometry and the array over its memory.

    What eager dispatch allocates for an op's output, built directly: the generated code
    calls this once per output per call, so it must stay lean (hence the bound defaults).
    """
    if nbytes == 0:
        tensor = empty_strided(sizes, strides, dtype, CPU)
        return tensor, tensor._array()
    buffer = _empty(nbytes, UINT8)
    array = _ndarray(sizes, dtype.numpy, buffer, 0, byte_strides)
    tensor = _make(Storage(buffer, CPU), sizes, strides, 0, dtype)
    tensor._array_cache = array
    return tensor, array


def window(buffer, sizes: tuple, np_dtype, byte_offset: int, byte_strides: tuple):
    """An array of ``sizes``/``byte_strides`` over the flat ``buffer`` from ``byte_offset``, no copy."""
    if 0 in sizes:
        return np.empty(sizes, np_dtype)
    return np.ndarray(sizes, np_dtype, buffer, byte_offset, byte_strides)


def store(out, result):
    """Copy a kernel's result into its preallocated ``out`` unless the kernel wrote there.

    ``out`` and ``result`` may be (nested) tuples for ops with several outputs.
    """
    if isinstance(out, (tuple, list)):
        for o, r in zip(out, result):
            store(o, r)
        return
    if result is not out:
        out[...] = result


def as_tensor_view(tensor: Tensor, sizes: tuple, strides: tuple, offset: int) -> Tensor:
    """A Tensor sharing ``tensor``'s storage with the given geometry (a view op's eager result)."""
    return tensor._view(sizes, strides, offset)


class BlockWorkers:
    """Threads that run shares of a fused group's blocks beside the calling thread.

    NumPy releases the GIL inside its loops, so while one thread is in a ufunc another
    runs Python; with blocks of ~100 KiB the loops dominate and two threads finish a
    large fused group in a little over half the time. ``run`` hands every share but
    the first to a worker, runs the first itself and waits for all (even on error,
    since the workers write into the same outputs and scratch memory).

    Args:
        threads: threads working on one group, the caller included (``1``: no workers).
    """

    def __init__(self, threads: int):
        self.threads = max(1, int(threads))
        self._queue = None
        self._pid = None

    def _start(self) -> None:
        import os
        import queue
        import threading

        self._queue = queue.SimpleQueue()
        self._pid = os.getpid()
        for i in range(self.threads - 1):
            threading.Thread(target=self._work, args=(self._queue,), name=f"dynamo_lite-numpy-{i}", daemon=True).start()

    @staticmethod
    def _work(tasks) -> None:
        while True:
            task = tasks.get()
            fn, share, arrays, done = task[:4]
            try:
                fn(share, *arrays)
            except BaseException as exc:  # handed to the waiting caller
                task.append(exc)
            done.release()

    def run(self, fn, shares, *arrays) -> None:
        """``fn(share, *arrays)`` for every share of blocks, concurrently; re-raises the first error."""
        if len(shares) == 1:
            fn(shares[0], *arrays)
            return
        import os
        import threading

        if self._queue is None or self._pid != os.getpid():  # first use, or a forked child
            self._start()
        tasks = []
        for share in shares[1:]:
            done = threading.Lock()
            done.acquire()
            task = [fn, share, arrays, done]
            tasks.append(task)
            self._queue.put(task)
        try:
            fn(shares[0], *arrays)
        finally:
            for task in tasks:
                task[3].acquire()
        for task in tasks:
            if len(task) > 4:
                raise task[4]
