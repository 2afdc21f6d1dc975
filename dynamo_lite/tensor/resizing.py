"""``resize_``/``resize_as_``, ``share_memory_``/``is_shared``: methods that replace a tensor's storage memory.

NOTE: [storage memory replaced] Every tensor caches a NumPy array over its storage's buffer
(``Tensor._array_cache``), so the buffer of a Storage that other tensors view cannot be swapped
without leaving their arrays over the old memory. The methods here move a storage's bytes to a
new buffer (a larger one for ``resize_``, a shared mapping for ``share_memory_``) only when the
calling tensor is the one tensor holding that storage; otherwise they raise a RuntimeError that
says so. A ``resize_`` that fits in the storage only changes the tensor's own geometry, as
torch's does.
"""
from __future__ import annotations

import gc
import mmap

import numpy as np

from . import layout
from .rebinds import tensor_rebound


def _sole_holder(tensor) -> bool:
    """Whether no other tensor holds ``tensor``'s storage (a heap scan: these methods are rare)."""
    return not any(r is not tensor and hasattr(r, "_array_cache") for r in gc.get_referrers(tensor._storage))


def _sizes_argument(sizes) -> tuple:
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    sizes = tuple(int(s) for s in sizes)
    for s in sizes:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(sizes)}")
    return sizes


def _move_bytes(tensor, buffer: np.ndarray, action: str) -> None:
    """Copy the storage's bytes to the front of ``buffer`` and make it the storage's memory."""
    if not _sole_holder(tensor):
        raise RuntimeError(
            f"{action}: other tensors view this tensor's storage, and their arrays would keep the old memory; "
            f"call it before taking views of the tensor (NOTE: [storage memory replaced])")
    storage = tensor._storage
    old = storage.data
    buffer[:old.nbytes] = old
    storage.data = buffer
    tensor._array_cache = None
    tensor_rebound()


def _is_shared_buffer(data) -> bool:
    while isinstance(data, np.ndarray):
        data = data.base
    return isinstance(data, memoryview) and isinstance(data.obj, mmap.mmap)


class StorageResizing:
    """Tensor methods that resize a tensor in place or move its storage to shared memory."""

    __slots__ = ()

    def resize_(self, *sizes, memory_format=None):
        """Give the tensor ``sizes`` (contiguous strides), growing its storage if it is too small.

        Elements beyond the old ones are uninitialized, as in torch.

        Raises:
            RuntimeError: the tensor requires grad; a size is negative; the storage must grow
                while other tensors view it (NOTE: [storage memory replaced]).

        Example:
            >>> t = dl.arange(6.0)
            >>> t.resize_(2, 2)
            tensor([[0., 1.],
                    [2., 3.]])
        """
        if self._requires_grad:
            raise RuntimeError("cannot resize variables that require grad")
        sizes = _sizes_argument(sizes)
        strides = layout.memory_format_strides(sizes, memory_format or layout.contiguous_format)
        numel = 1
        for s in sizes:
            numel *= s
        needed = (self._offset + numel) * self._dtype.itemsize if numel else 0
        storage = self._storage
        if needed > storage.nbytes():
            if storage.device.type != "cpu":
                raise RuntimeError("resize_ cannot grow the storage of a tensor on a CUDA device in dynamo_lite")
            _move_bytes(self, np.empty(needed, dtype=np.uint8), "resize_")
        self._sizes, self._strides = sizes, strides
        self._array_cache = None
        tensor_rebound()
        return self

    def resize_as_(self, other, memory_format=None):
        """``resize_`` to ``other``'s sizes."""
        return self.resize_(tuple(other.shape), memory_format=memory_format)

    def share_memory_(self):
        """Move the storage to shared memory (a process fork then shares it); a no-op if it is
        already there or on a CUDA device. Returns the tensor.

        Raises:
            RuntimeError: other tensors view the storage (NOTE: [storage memory replaced]).
        """
        storage = self._storage
        if storage.device.type != "cpu" or self.is_shared():
            return self
        nbytes = storage.nbytes()
        shared = np.frombuffer(mmap.mmap(-1, max(nbytes, 1)), dtype=np.uint8)[:nbytes]
        _move_bytes(self, shared, "share_memory_")
        return self

    def is_shared(self) -> bool:
        """Whether the storage is in shared memory (always True on a CUDA device, as torch says)."""
        storage = self._storage
        return storage.device.type != "cpu" or _is_shared_buffer(storage.data)
