"""dl.load: read a PyTorch checkpoint with a restricted unpickler (tensors, containers, plain values only)."""
from __future__ import annotations

import collections
import os
import pickle
import zipfile

import numpy as np

from ..tensor.device import device as Device
from ..tensor.device import as_device
from ..tensor.layout import Size
from ..tensor.storage import Storage
from ..tensor.tensor import Tensor
from .torch_format import DTYPES, STORAGE_TYPES


class _StorageType:
    """What ``torch.<Type>Storage`` stands for in a checkpoint: the dtype of a storage."""

    def __init__(self, dtype):
        self.dtype = dtype


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None,
                       metadata=None):
    tensor = Tensor._make(storage[0], tuple(size), tuple(stride), storage_offset, storage[1])
    if requires_grad:
        tensor.requires_grad_(True)
    return tensor


def _rebuild_parameter(data, requires_grad, backward_hooks=None, *state):
    from ..nn.parameter import Parameter

    return Parameter(data, requires_grad)


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
    ("_codecs", "encode"): lambda text, encoding="utf-8": text.encode(encoding),  # bytes in protocol 2
    **{("torch", name): _StorageType(dt) for name, dt in STORAGE_TYPES.items()},
    **{("torch", name): dt for name, dt in DTYPES.items()},
}


class _RestrictedUnpickler(pickle.Unpickler):
    """Resolves only ALLOWED_GLOBALS; storages come from the archive's records."""

    def __init__(self, file, read_record, map_location):
        super().__init__(file)
        self._read_record = read_record
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
        cached = self._storages.get(key)
        if cached is None:
            raw = np.frombuffer(self._read_record(f"data/{key}"), dtype=np.uint8).copy()
            device = _target_device(location, self._map_location)
            if device.type != "cpu":
                from ..tensor.device import array_module

                raw = array_module(device).asarray(raw)
            cached = self._storages[key] = Storage(raw, device)
        return cached, storage_type.dtype


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

    Example:
        >>> dl.save({"w": dl.ones(2)}, "/tmp/w.pt")
        >>> dl.load("/tmp/w.pt", map_location="cpu")["w"].tolist()
        [1.0, 1.0]
    """
    if not weights_only:
        raise ValueError("dl.load(weights_only=False) is not supported: dl.load never unpickles arbitrary objects")
    kwargs.pop("mmap", None)
    if kwargs:
        raise TypeError(f"load() got an unexpected keyword argument '{next(iter(kwargs))}'")
    path = os.fspath(f) if isinstance(f, (str, os.PathLike)) else None
    source = open(path, "rb") if path else f
    try:
        if not zipfile.is_zipfile(source):
            raise pickle.UnpicklingError(
                "dl.load reads PyTorch's zip checkpoint format (torch.save since PyTorch 1.6); this file is not a zip "
                "archive (a legacy or non-PyTorch file)"
            )
        with zipfile.ZipFile(source) as archive:
            names = archive.namelist()
            pickles = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
            if not pickles:
                raise pickle.UnpicklingError("dl.load: the archive holds no data.pkl record")
            prefix = pickles[0][: -len("data.pkl")]
            byteorder = prefix + "byteorder"
            if byteorder in names and archive.read(byteorder) != b"little":
                raise pickle.UnpicklingError("dl.load: big-endian checkpoints are not supported")
            with archive.open(pickles[0]) as data:
                unpickler = _RestrictedUnpickler(data, lambda name: archive.read(prefix + name), map_location)
                return unpickler.load()
    finally:
        if path:
            source.close()
