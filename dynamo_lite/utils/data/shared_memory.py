"""Tensors passed from DataLoader workers to the main process through shared-memory files.

NOTE: [worker tensors in shared memory] A worker collates a batch straight into memory
mapped from a file in /dev/shm (the temp dir where there is none), pickles the batch with
each tensor replaced by a small handle (file name, geometry, dtype) and sends only those
bytes through the result queue. The main process maps the file, unlinks it at once (the
memory lives as long as the mapping) and wraps the mapping in a Storage: the tensor it
gets *is* the worker's buffer, with no copy on receipt. File names carry a per-iterator
prefix, so files whose batch never arrived (an iterator dropped mid-epoch, a killed worker)
are removed when the workers are shut down.
"""
from __future__ import annotations

import glob
import io
import mmap
import os
import pickle
import tempfile

import numpy as np

from ...tensor.dtype import _lookup_name
from ...tensor.storage import Storage
from ...tensor.tensor import Tensor

SHARED_DIR = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else tempfile.gettempdir()
NON_LEAF_MESSAGE = (
    "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does not support "
    "crossing process boundaries.  If you just want to transfer the data, call detach() on the tensor "
    "before serializing (e.g., putting it on the queue)."
)
# A tensor whose storage is more than this many times larger than its own window is sent as
# a compact copy (a row of a big dataset tensor must not ship the whole dataset).
WHOLE_STORAGE_RATIO = 2


def _map(path: str, nbytes: int, create: bool):
    flags = os.O_RDWR | (os.O_CREAT | os.O_EXCL if create else 0)
    fd = os.open(path, flags, 0o600)
    try:
        if create:
            os.ftruncate(fd, nbytes)
        return mmap.mmap(fd, nbytes)
    finally:
        os.close(fd)


class SharedFileAllocator:
    """Allocates shared-memory storages for one worker and turns its tensors into handles.

    Example:
        >>> allocator = SharedFileAllocator("dynamo_lite_123_ab_w0_")
        >>> t = allocator.empty((4, 3), dl.float32)     # backed by /dev/shm/dynamo_lite_123_ab_w0_0
        >>> payload = allocator.dumps([t])              # bytes: a handle instead of the data
    """

    def __init__(self, prefix: str):
        self.prefix = prefix
        self.count = 0
        self.files = {}  # id(storage) -> (file name, shared Storage, the storage it stands for)

    def storage(self, nbytes: int) -> tuple:
        name = f"{self.prefix}{self.count}"
        self.count += 1
        mapping = _map(os.path.join(SHARED_DIR, name), nbytes, create=True)
        storage = Storage(np.frombuffer(mapping, np.uint8, count=nbytes))
        self.files[id(storage)] = (name, storage, storage)
        return name, storage

    def empty(self, sizes, dtype) -> Tensor:
        """A contiguous tensor in a new shared-memory file."""
        sizes = tuple(sizes)
        strides, numel = [], 1
        for size in reversed(sizes):
            strides.insert(0, numel)
            numel *= size
        _, storage = self.storage(max(numel, 1) * dtype.itemsize)
        return Tensor._make(storage, sizes, tuple(strides), 0, dtype)

    def handle(self, tensor: Tensor) -> tuple:
        """What the pickled batch holds instead of ``tensor``'s data."""
        if tensor._grad_fn is not None:
            raise RuntimeError(NON_LEAF_MESSAGE)
        entry = self.files.get(id(tensor._storage))
        if entry is None:
            span = 1 + sum((n - 1) * s for n, s in zip(tensor._sizes, tensor._strides))
            if tensor._storage.nbytes() > WHOLE_STORAGE_RATIO * span * tensor._dtype.itemsize:
                compact = self.empty(tensor._sizes, tensor._dtype)
                compact._array()[...] = tensor._array()
                return self.handle(compact)
            name, shared = self.storage(tensor._storage.nbytes())
            shared.data[...] = tensor._storage.data
            entry = self.files[id(tensor._storage)] = (name, shared, tensor._storage)
        name, shared, _ = entry
        return ("dynamo_lite.tensor", name, shared.nbytes(), tensor._sizes, tensor._strides, tensor._offset,
                tensor._dtype.name, tensor._requires_grad)

    def dumps(self, obj) -> bytes:
        """Pickle ``obj`` with its CPU tensors replaced by shared-memory handles."""
        buffer = io.BytesIO()
        _HandlePickler(buffer, self).dump(obj)
        self.files.clear()  # sent: the main process owns those files now
        return buffer.getvalue()


class _HandlePickler(pickle.Pickler):
    def __init__(self, file, allocator: SharedFileAllocator):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.allocator = allocator

    def persistent_id(self, obj):
        if type(obj) is Tensor and obj._storage.device.type == "cpu" and obj.numel():
            return self.allocator.handle(obj)
        return None


class _HandleUnpickler(pickle.Unpickler):
    def __init__(self, file):
        super().__init__(file)
        self.storages = {}  # file name -> Storage: views sent together share one storage again

    def persistent_load(self, pid):
        _, name, nbytes, sizes, strides, offset, dtype_name, requires_grad = pid
        storage = self.storages.get(name)
        if storage is None:
            storage = self.storages[name] = open_shared(name, nbytes)
        tensor = Tensor._make(storage, sizes, strides, offset, _lookup_name(dtype_name))
        tensor._requires_grad = requires_grad
        return tensor


def open_shared(name: str, nbytes: int) -> Storage:
    """Map a worker's shared-memory file as a Storage and unlink it (the mapping keeps the memory)."""
    path = os.path.join(SHARED_DIR, name)
    mapping = _map(path, nbytes, create=False)
    os.unlink(path)
    return Storage(np.frombuffer(mapping, np.uint8, count=nbytes))


def loads(payload: bytes):
    """Rebuild what ``SharedFileAllocator.dumps`` pickled; its tensors use the shared memory in place."""
    return _HandleUnpickler(io.BytesIO(payload)).load()


def leftovers_pattern(prefix: str) -> str:
    """The glob pattern of every shared-memory file named with ``prefix``."""
    return os.path.join(SHARED_DIR, glob.escape(prefix) + "*")


def remove_leftovers(pattern: str) -> int:
    """Delete the shared-memory files matching ``pattern`` that no one received; returns how many."""
    paths = glob.glob(pattern)
    for path in paths:
        try:
            os.unlink(path)
        except FileNotFoundError:  # received (and unlinked) meanwhile
            pass
    return len(paths)
