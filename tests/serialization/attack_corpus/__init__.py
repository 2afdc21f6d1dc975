"""Hostile and damaged checkpoints, built in memory: malicious pickles, malformed zips, bad tensor geometry.

Each builder returns the bytes of a file ``dl.load`` is given. The pickles are written
opcode by opcode (or through dl.save's own pickler with a forged tensor), the archives with
``zipfile`` and then patched where a header must lie, so every case says exactly what it
breaks. Payloads that would run a command touch a marker file; tests check it never appears.
"""
from __future__ import annotations

import collections
import io
import pickle
import struct
import zipfile

import importlib

save_module = importlib.import_module("dynamo_lite.serialization.save")
from dynamo_lite.serialization.torch_format import STORAGE_TYPE_OF


class ForgedTensor:
    """A tensor as the pickle describes it: any storage size, offset, sizes and strides."""

    def __init__(self, nbytes, sizes, strides, offset=0, dtype=None, numel=None, storage=None):
        import dynamo_lite as dl

        self.dtype = dtype or dl.float32
        self.nbytes, self.sizes, self.strides, self.offset = nbytes, sizes, strides, offset
        self.numel = nbytes // self.dtype.itemsize if numel is None else numel
        self.storage = storage  # what the pickle passes instead of the storage (e.g. an int)


class _ForgingPickler(save_module._CheckpointPickler):
    def __init__(self, file):
        super().__init__(file)
        self.records = {}

    def reducer_override(self, obj):
        if isinstance(obj, ForgedTensor):
            key = str(len(self.records))
            self.records[key] = bytes(obj.nbytes)
            ref = save_module._StorageRef(key, obj.dtype, obj.numel, "cpu")
            storage = ref if obj.storage is None else obj.storage
            return save_module.REBUILD_TENSOR, (storage, obj.offset, tuple(obj.sizes), tuple(obj.strides), False,
                                                collections.OrderedDict())
        return super().reducer_override(obj)


def archive(records: dict, deflate: tuple = ()) -> bytes:
    """A zip of ``{name: bytes}`` under ``archive/``; names in ``deflate`` are compressed."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, data in records.items():
            zf.writestr(f"archive/{name}", data, zipfile.ZIP_DEFLATED if name in deflate else zipfile.ZIP_STORED)
    return out.getvalue()


def forged_checkpoint(obj) -> bytes:
    """A checkpoint of ``obj`` (which may hold ForgedTensors) with zeroed storages of the forged sizes."""
    buffer = io.BytesIO()
    pickler = _ForgingPickler(buffer)
    pickler.dump(obj)
    records = {"data.pkl": buffer.getvalue(), "byteorder": b"little"}
    records.update({f"data/{key}": data for key, data in pickler.records.items()})
    return archive(records)


def pickle_checkpoint(data_pkl: bytes) -> bytes:
    return archive({"data.pkl": data_pkl, "byteorder": b"little"})


def set_declared_size(data: bytes, name: str, file_size: int) -> bytes:
    """Rewrite the uncompressed size a record's local and central headers declare."""
    data = bytearray(data)
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as zf:
        header_offset = zf.getinfo(f"archive/{name}").header_offset
    struct.pack_into("<L", data, header_offset + 22, file_size)  # local header: uncompressed size
    central = bytes(data).find(b"PK\x01\x02")
    while central >= 0:
        name_len = struct.unpack_from("<H", data, central + 28)[0]
        if bytes(data[central + 46:central + 46 + name_len]).decode() == f"archive/{name}":
            struct.pack_into("<L", data, central + 24, file_size)  # central directory: uncompressed size
        central = bytes(data).find(b"PK\x01\x02", central + 4)
    return bytes(data)


def marker_command(marker: str) -> bytes:
    return f"touch {marker}".encode()


def malicious_pickles(marker: str) -> dict:
    """Name -> data.pkl bytes; each would create ``marker`` if any global it names were resolved."""
    cmd = marker_command(marker)
    short = lambda text: bytes([pickle.SHORT_BINUNICODE[0], len(text)]) + text  # noqa: E731
    return {
        "GLOBAL+REDUCE os.system": b"cos\nsystem\n(S'" + cmd + b"'\ntR.",
        "GLOBAL+REDUCE posix.system": b"cposix\nsystem\n(S'" + cmd + b"'\ntR.",
        "INST os.system": b"(S'" + cmd + b"'\nios\nsystem\n.",
        "OBJ subprocess.call": b"(csubprocess\ncall\n(S'sh'\nS'-c'\nS'" + cmd + b"'\nlo.",
        "STACK_GLOBAL os.system": b"\x80\x04" + short(b"os") + short(b"system") + b"\x93" + short(cmd) + b"\x85R.",
        "builtins.eval": b"cbuiltins\neval\n(S'__import__(\"os\").system(\"" + cmd + b"\")'\ntR.",
        "builtins.getattr chain": b"cbuiltins\ngetattr\n(cbuiltins\n__import__\n(S'os'\ntRS'system'\ntR(S'"
                                  + cmd + b"'\ntR.",
        "NEWOBJ on a forbidden class": b"\x80\x02cos\n_wrap_close\n)\x81.",
        "torch global that is not allowed": b"ctorch.serialization\n_get_restore_location\n(S'x'\ntR.",
        "_codecs.encode with a non-text codec": b"c_codecs\nencode\n(S'" + cmd + b"'\nS'zlib'\ntR.",
    }


def forged_checkpoint_pickle(obj) -> bytes:
    """Only the data.pkl of ``forged_checkpoint(obj)``."""
    buffer = io.BytesIO()
    _ForgingPickler(buffer).dump(obj)
    return buffer.getvalue()
