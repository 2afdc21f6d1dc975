"""dl.load: read a PyTorch checkpoint with a restricted unpickler (tensors, containers, plain values only)."""
from __future__ import annotations

import collections
import io
import os
import pickle

from ..tensor.device import device as Device
from ..tensor.device import as_device
from ..tensor.layout import Size
from ..tensor.storage import Storage
from ..tensor.tensor import Tensor
from .archive_reader import ArchiveReader, CorruptCheckpoint, open_archive, source_size
from .pickle_scan import check_pickle
from .tensor_bounds import checked_geometry
from .torch_format import DTYPES, STORAGE_TYPES


class _StorageType:
    """What ``torch.<Type>Storage`` stands for in a checkpoint: the dtype of a storage."""

    def __init__(self, dtype):
        self.dtype = dtype


class _StorageRecord:
    """A storage of the checkpoint before its bytes are read: its record, dtype and byte size.

    The bytes are read (``materialize``) only once a tensor viewing them passed the bounds
    check, so a hostile geometry is refused before any memory is allocated for it.
    """

    def __init__(self, name: str, nbytes: int, device: Device, reader):
        self.name, self.nbytes, self.device = name, nbytes, device
        self._reader, self._storage = reader, None

    def materialize(self) -> Storage:
        if self._storage is None:
            raw = self._reader(self.name)
            if self.device.type != "cpu":
                from ..tensor.device import array_module

                raw = array_module(self.device).asarray(raw)
            self._storage = Storage(raw, self.device)
        return self._storage


class _TypedStorageRef:
    """What a persistent id loads to: a storage record and the dtype the pickle reads it as."""

    __slots__ = ("record", "dtype")

    def __init__(self, record: _StorageRecord, dtype):
        self.record, self.dtype = record, dtype


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None,
                       metadata=None):
    if not isinstance(storage, _TypedStorageRef):
        raise pickle.UnpicklingError(f"dl.load: _rebuild_tensor_v2 expects a storage of the checkpoint as its first "
                                     f"argument, got {type(storage).__name__} (the checkpoint is corrupt)")
    record, dtype = storage.record, storage.dtype
    sizes, strides, offset = checked_geometry(size, stride, storage_offset, dtype.itemsize, record.nbytes)
    tensor = Tensor._make(record.materialize(), sizes, strides, offset, dtype)
    if requires_grad:
        tensor.requires_grad_(True)
    return tensor


def _rebuild_parameter(data, requires_grad, backward_hooks=None, *state):
    from ..nn.parameter import Parameter

    if type(data) is not Tensor:
        raise pickle.UnpicklingError(f"dl.load: _rebuild_parameter expects a tensor, got {type(data).__name__} "
                                     "(the checkpoint is corrupt)")
    return Parameter(data, bool(requires_grad))


def _encode_text(text, encoding="latin1"):
    """``_codecs.encode``, which protocol-2 pickles use for bytes: text codecs only."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1", "utf-8", "utf8"):
        raise pickle.UnpicklingError(f"dl.load: unsupported _codecs.encode({type(text).__name__}, {encoding!r})")
    return text.encode(encoding)


def _torch_device(spec, index=None):
    return Device(spec, index)


# (module, name) -> what the restricted unpickler gives for that global; nothing else loads.
ALLOWED_GLOBALS = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch", "Size"): Size,
    ("torch", "device"): _torch_device,
    ("builtins", "set"): set, ("__builtin__", "set"): set,
    ("builtins", "frozenset"): frozenset, ("__builtin__", "frozenset"): frozenset,
    ("builtins", "complex"): complex, ("__builtin__", "complex"): complex,
    ("builtins", "slice"): slice, ("__builtin__", "slice"): slice,
    ("_codecs", "encode"): _encode_text,  # bytes in protocol 2
    **{("torch", name): _StorageType(dt) for name, dt in STORAGE_TYPES.items()},
    **{("torch", name): dt for name, dt in DTYPES.items()},
}


class _RestrictedUnpickler(pickle.Unpickler):
    """Resolves only ALLOWED_GLOBALS; storages come from the archive's records."""

    def __init__(self, file, reader: ArchiveReader, prefix: str, map_location):
        super().__init__(file)
        self._reader, self._prefix = reader, prefix
        self._map_location = map_location
        self._storages: dict = {}

    def find_class(self, module, name):
        found = ALLOWED_GLOBALS.get((module, name))
        if found is None and module == "torch" and name.endswith("Storage"):
            raise pickle.UnpicklingError(f"dl.load: tensors stored as torch.{name} are not supported (no such dtype here)")
        if found is None:
            raise pickle.UnpicklingError(
                f"Weights only load failed: unsupported global {module}.{name}. dl.load reads only tensors, "
                "containers (dict, list, tuple, OrderedDict, set) and plain values; it never unpickles other "
                "classes or functions. Save a state_dict() instead of the object."
            )
        return found

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"dl.load: unsupported persistent id {pid!r}")
        _, storage_type, key, location, numel = pid
        if not isinstance(storage_type, _StorageType):
            raise pickle.UnpicklingError(f"dl.load: unsupported storage type {storage_type!r}")
        if not isinstance(key, str) or not isinstance(location, str) or type(numel) is not int or numel < 0:
            raise pickle.UnpicklingError(f"dl.load: malformed storage id {pid!r} (the checkpoint is corrupt)")
        dtype = storage_type.dtype
        record = self._storages.get(key)
        if record is None:
            name = f"{self._prefix}data/{key}"
            device = _target_device(location, self._map_location)
            record = self._storages[key] = _StorageRecord(name, self._reader.record_size(name), device,
                                                          self._reader.read_array)
        if record.nbytes != numel * dtype.itemsize:
            raise CorruptCheckpoint(f"dl.load: storage record data/{key} holds {record.nbytes} bytes but the checkpoint "
                                    f"declares {numel} elements of {dtype.itemsize} bytes ({numel * dtype.itemsize} "
                                    "bytes): the checkpoint is corrupt")
        return _TypedStorageRef(record, dtype)


def _target_device(location: str, map_location) -> Device:
    if map_location is None:
        return as_device(location)
    if isinstance(map_location, dict):
        return as_device(map_location.get(location, location))
    if isinstance(map_location, (str, Device)):
        return as_device(map_location)
    raise TypeError(f"dl.load: map_location must be None, a device, a string or a dict, got {map_location!r}")


def load(f, map_location=None, weights_only=True, **kwargs):
    """Load an object saved by ``dl.save`` or ``torch.save`` (PyTorch's zip format).

    Only tensors, Parameters, containers and plain values are read (as ``weights_only=True``
    does in torch); anything else raises ``pickle.UnpicklingError`` naming it.
    ``map_location`` (a device, a string or a ``{saved: target}`` dict) moves the storages.
    ``mmap=True`` (a path only) maps the storages from the file (copy-on-write) instead of
    reading them. Every tensor is checked against its storage before it exists (torch's
    "setStorage: ... out of bounds" RuntimeError), and no record is read past what the file
    can hold (NOTE: [bounded records], NOTE: [bounded unpickling]).

    Example:
        >>> dl.save({"w": dl.ones(2)}, "/tmp/w.pt")
        >>> dl.load("/tmp/w.pt", map_location="cpu")["w"].tolist()
        [1.0, 1.0]
    """
    if not weights_only:
        raise ValueError("dl.load(weights_only=False) is not supported: dl.load never unpickles arbitrary objects")
    mmap = bool(kwargs.pop("mmap", False) or False)
    if kwargs:
        raise TypeError(f"load() got an unexpected keyword argument '{next(iter(kwargs))}'")
    path = os.fspath(f) if isinstance(f, (str, os.PathLike)) else None
    if mmap and path is None:
        raise ValueError("f must be a file path in order to use the mmap argument")
    source = open(path, "rb") if path else f
    try:
        with open_archive(source, source_size(source)) as archive:
            reader = ArchiveReader(archive, source, source_size(source), path, mmap)
            names = list(reader.infos)
            pickles = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
            if not pickles:
                raise pickle.UnpicklingError("dl.load: the archive holds no data.pkl record")
            prefix = pickles[0][: -len("data.pkl")]
            byteorder = prefix + "byteorder"
            if byteorder in names and reader.read_bytes(byteorder) != b"little":
                raise pickle.UnpicklingError("dl.load: big-endian checkpoints are not supported")
            data = reader.read_bytes(pickles[0])
            check_pickle(data, pickles[0])
            return _RestrictedUnpickler(io.BytesIO(data), reader, prefix, map_location).load()
    finally:
        if path:
            source.close()
