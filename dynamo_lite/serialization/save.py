"""dl.save: write an object of tensors, containers and plain values in PyTorch's checkpoint format."""
from __future__ import annotations

import collections
import io
import os
import pickle
import struct
import tempfile
import uuid
import zipfile

import numpy as np

from ..tensor.device import device as Device
from ..tensor.dtype import dtype as DType
from ..tensor.layout import Size
from ..tensor.tensor import Tensor
from .torch_format import ALIGNMENT, ARCHIVE_VERSION, BYTEORDER, FORMAT_VERSION, STORAGE_TYPE_OF


class _TorchName:
    """A name in PyTorch's namespace (``torch._utils._rebuild_tensor_v2``) written as a pickle GLOBAL."""

    def __init__(self, module: str, name: str):
        self.module, self.name = module, name

    def __call__(self, *args):  # pickle wants reduce functions to be callable; this one is only written
        raise TypeError(f"{self.module}.{self.name} exists only inside PyTorch checkpoints")


REBUILD_TENSOR = _TorchName("torch._utils", "_rebuild_tensor_v2")
REBUILD_PARAMETER = _TorchName("torch._utils", "_rebuild_parameter")
TORCH_SIZE = _TorchName("torch", "Size")
TORCH_DEVICE = _TorchName("torch", "device")


class _StorageRef:
    """One storage of the checkpoint: its record key, dtype, element count and device."""

    def __init__(self, key: str, dtype, numel: int, location: str):
        self.key, self.dtype, self.numel, self.location = key, dtype, numel, location


class _CheckpointPickler(pickle._Pickler):
    """Pickles tensors as torch's rebuild calls over persistent storages (NOTE: [checkpoint format]).

    The pure-Python pickler is used because the torch names it writes are never looked
    up in this process (PyTorch is not installed here).
    """

    def __init__(self, file):
        super().__init__(file, protocol=2)
        self.storages: dict = {}  # (id(storage), dtype) -> (key, storage)

    def persistent_id(self, obj):
        if isinstance(obj, _StorageRef):
            return ("storage", _TorchName("torch", STORAGE_TYPE_OF[obj.dtype]), obj.key, obj.location, obj.numel)
        return None

    def save(self, obj, save_persistent_id=True):
        if isinstance(obj, _TorchName):
            self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
            return
        if type(obj) is DType:
            return self.save(_TorchName("torch", obj.name))
        return super().save(obj, save_persistent_id)

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        if isinstance(obj, Size):
            return TORCH_SIZE, (tuple(obj),)
        if isinstance(obj, Device):
            return TORCH_DEVICE, (str(obj),)
        return NotImplemented

    def _reduce_tensor(self, tensor):
        if tensor.dtype not in STORAGE_TYPE_OF:
            raise pickle.PicklingError(f"dl.save: tensors of dtype {tensor.dtype} cannot be saved")
        if type(tensor) is not Tensor:  # a Parameter: torch rebuilds the tensor, then the parameter
            plain = Tensor._make(tensor._storage, tensor._sizes, tensor._strides, tensor._offset, tensor._dtype)
            return REBUILD_PARAMETER, (plain, bool(tensor.requires_grad), collections.OrderedDict())
        storage = tensor.untyped_storage()
        key, storage = self.storages.setdefault(
            (id(storage), tensor.dtype), (str(len(self.storages)), storage))
        ref = _StorageRef(key, tensor.dtype, storage.nbytes() // tensor.dtype.itemsize, str(storage.device))
        requires_grad = bool(getattr(tensor, "requires_grad", False))
        return REBUILD_TENSOR, (ref, tensor.storage_offset(), tuple(tensor.shape), tuple(tensor.stride()),
                                requires_grad, collections.OrderedDict())


def _write_record(archive: zipfile.ZipFile, name: str, data: bytes) -> None:
    """An uncompressed record whose data starts at a multiple of ALIGNMENT (torch mmaps them)."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    header = 30 + len(name.encode("utf-8"))
    offset = archive.fp.tell()
    padding = (-(offset + header + 4)) % ALIGNMENT
    info.extra = struct.pack("<HH", 0x4246, padding) + b"Z" * padding  # "FB" padding field, as torch writes
    archive.writestr(info, data)


def save(obj, f) -> None:
    """Save ``obj`` (tensors, Parameters, dicts/lists/tuples, numbers, strings, None) to ``f``
    (a path or a binary file) in PyTorch's checkpoint format (NOTE: [checkpoint format]).

    Example:
        >>> dl.save({"w": dl.ones(2)}, "/tmp/w.pt")
        >>> dl.load("/tmp/w.pt")["w"].tolist()
        [1.0, 1.0]
    """
    buffer = io.BytesIO()
    pickler = _CheckpointPickler(buffer)
    pickler.dump(obj)
    path = os.fspath(f) if isinstance(f, (str, os.PathLike)) else None
    if path is None:
        _write_archive(f, "archive", buffer.getvalue(), pickler.storages.values())
        return
    prefix = os.path.splitext(os.path.basename(path))[0]
    _replace_atomically(path, lambda target: _write_archive(target, prefix, buffer.getvalue(),
                                                            pickler.storages.values()))


def _write_archive(target, prefix: str, data_pkl: bytes, storages) -> None:
    with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as archive:
        _write_record(archive, f"{prefix}/data.pkl", data_pkl)
        _write_record(archive, f"{prefix}/.format_version", FORMAT_VERSION)
        _write_record(archive, f"{prefix}/.storage_alignment", str(ALIGNMENT).encode())
        _write_record(archive, f"{prefix}/byteorder", BYTEORDER)
        for key, storage in storages:
            _write_record(archive, f"{prefix}/data/{key}", _host_bytes(storage))
        _write_record(archive, f"{prefix}/version", ARCHIVE_VERSION)
        _write_record(archive, f"{prefix}/.data/serialization_id", uuid.uuid4().hex.encode().ljust(40, b"0"))


def _replace_atomically(path: str, write) -> None:
    """Write a new file through ``write(file)`` and put it in ``path``'s place in one step.

    NOTE: [atomic save] The checkpoint is written to a temporary file in the same folder,
    flushed to disk (fsync), then renamed over the old one (``os.replace`` is atomic on one
    file system): a process killed mid-write, or a full disk (ENOSPC, EFBIG), leaves the old
    checkpoint whole. A symlinked path replaces the file the link points to; a path that is
    not a regular file (``/dev/null``, a pipe) is written in place. The new file
    gets the old one's permissions (a new path: the default ``0o666`` less the umask).
    """
    target = os.path.realpath(path)
    if os.path.exists(target) and not os.path.isfile(target):  # a device or a pipe: written in place
        with open(target, "wb") as file:
            write(file)
        return
    folder = os.path.dirname(target) or "."
    fd, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as file:
            write(file)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, _mode_for(target))
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    try:  # the rename itself reaches the disk with the folder's entry
        directory = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(directory)
    except OSError:
        pass
    finally:
        os.close(directory)


def _mode_for(target: str) -> int:
    try:
        return os.stat(target).st_mode & 0o7777
    except FileNotFoundError:
        return 0o666 & ~_umask()


def _umask() -> int:
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)  # no /proc: read it by setting it (and put it back at once)
    os.umask(mask)
    return mask


def _host_bytes(storage) -> bytes:
    data = storage.data
    if not isinstance(data, np.ndarray):
        data = data.get()
    return np.ascontiguousarray(data).tobytes()
