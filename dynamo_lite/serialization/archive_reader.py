"""Reads a checkpoint's zip records with bounded memory: sizes checked against the file, storages read in place.

NOTE: [bounded records] A record's header says how many bytes it holds; a hostile file
can claim a terabyte, or a deflated record can inflate far past the file. Before a record
is read, its sizes are checked against what the archive can hold: a stored record's data
must lie inside the file and its size equal its stored size, a deflated one may not claim
more than deflate can produce from its compressed bytes (DEFLATE_MAX_RATIO), and no other
compression is accepted. Reading never inflates past the declared size (zipfile stops
there and checks the CRC). Storage bytes go straight into the array the Storage keeps
(no second copy), or, with ``mmap=True``, the array maps the file itself (copy-on-write).
"""
from __future__ import annotations

import os
import struct
import zipfile

import numpy as np

# deflate emits at most 258 bytes per 2 bits of input (about 1032:1); slack for tiny records.
DEFLATE_MAX_RATIO = 1032
DEFLATE_SLACK = 1024
CHUNK_BYTES = 1 << 20
LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")
LOCAL_SIGNATURE = b"PK\x03\x04"
ZIP_SIGNATURES = (LOCAL_SIGNATURE, b"PK\x05\x06")


class CorruptCheckpoint(RuntimeError):
    """The checkpoint is truncated or corrupt (the message says which record and how)."""


def open_archive(source, size: int) -> zipfile.ZipFile:
    """The zip archive of a checkpoint file, or an error saying why it is not one.

    Raises:
        CorruptCheckpoint: empty, or a zip archive cut short or damaged.
        pickle.UnpicklingError: not a zip archive at all (a legacy or non-PyTorch file).
    """
    import pickle

    start = source.tell()
    head = source.read(4)
    source.seek(start)
    if size - start <= 0 or not head:
        raise CorruptCheckpoint("dl.load: the checkpoint is empty (0 bytes): the file is truncated or corrupt")
    try:
        return zipfile.ZipFile(source)
    except (zipfile.BadZipFile, EOFError, ValueError, OSError, OverflowError) as exc:
        if head in ZIP_SIGNATURES or head[:2] == b"PK":
            raise CorruptCheckpoint(f"dl.load: the checkpoint is truncated or corrupt (a zip archive whose directory "
                                    f"cannot be read: {exc})") from None
        raise pickle.UnpicklingError(
            "dl.load reads PyTorch's zip checkpoint format (torch.save since PyTorch 1.6); this file is not a zip "
            "archive (a legacy or non-PyTorch file)"
        ) from None


class ArchiveReader:
    """The records of one open checkpoint archive, each read only after its sizes check out."""

    def __init__(self, archive: zipfile.ZipFile, source, size: int, path: str | None = None, mmap: bool = False):
        self.archive, self.source, self.size, self.path, self.mmap = archive, source, size, path, mmap
        self.infos = {info.filename: info for info in archive.infolist()}

    def info(self, name: str) -> zipfile.ZipInfo:
        info = self.infos.get(name)
        if info is None:
            raise CorruptCheckpoint(f"dl.load: the checkpoint has no record {name} (truncated or corrupt)")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise CorruptCheckpoint(f"dl.load: record {name} uses zip compression method {info.compress_type}; "
                                    "checkpoints hold stored (or deflated) records only")
        if info.header_offset < 0 or info.header_offset + info.compress_size > self.size:
            raise CorruptCheckpoint(f"dl.load: record {name} claims {info.compress_size} bytes at offset "
                                    f"{info.header_offset}, past the end of the {self.size}-byte file (truncated)")
        if info.compress_type == zipfile.ZIP_STORED and info.file_size != info.compress_size:
            raise CorruptCheckpoint(f"dl.load: stored record {name} claims {info.file_size} bytes but holds "
                                    f"{info.compress_size} (corrupt)")
        if info.file_size > info.compress_size * DEFLATE_MAX_RATIO + DEFLATE_SLACK:
            raise CorruptCheckpoint(f"dl.load: deflated record {name} claims {info.file_size} bytes from "
                                    f"{info.compress_size} compressed bytes, more than deflate can produce (corrupt)")
        return info

    def record_size(self, name: str) -> int:
        return self.info(name).file_size

    def read_bytes(self, name: str) -> bytes:
        """A small record (the pickle, the byte order) as bytes."""
        info = self.info(name)
        try:
            return self.archive.read(info)
        except (zipfile.BadZipFile, EOFError, OSError, ValueError) as exc:
            raise CorruptCheckpoint(f"dl.load: record {name} is truncated or corrupt ({exc})") from None

    def read_array(self, name: str) -> np.ndarray:
        """A storage record as a ``uint8`` array, read once into its final buffer (or mapped)."""
        info = self.info(name)
        if self.mmap and info.compress_type == zipfile.ZIP_STORED and info.file_size:
            return np.memmap(self.path, dtype=np.uint8, mode="c", offset=self._data_offset(info),
                             shape=(info.file_size,))
        out = np.empty(info.file_size, dtype=np.uint8)
        view = memoryview(out)
        filled = 0
        try:
            with self.archive.open(info) as record:
                while filled < info.file_size:
                    chunk = record.read(min(CHUNK_BYTES, info.file_size - filled))
                    if not chunk:
                        raise EOFError(f"{info.file_size - filled} bytes missing")
                    view[filled:filled + len(chunk)] = chunk
                    filled += len(chunk)
                if record.read(1):
                    raise zipfile.BadZipFile("more data than the record declares")
        except (zipfile.BadZipFile, EOFError, OSError, ValueError) as exc:
            raise CorruptCheckpoint(f"dl.load: record {name} is truncated or corrupt ({exc})") from None
        return out

    def _data_offset(self, info: zipfile.ZipInfo) -> int:
        """Where a stored record's bytes start in the file (after its local header)."""
        self.source.seek(info.header_offset)
        header = self.source.read(LOCAL_HEADER.size)
        if len(header) != LOCAL_HEADER.size or header[:4] != LOCAL_SIGNATURE:
            raise CorruptCheckpoint(f"dl.load: record {info.filename} has a bad local header (corrupt)")
        fields = LOCAL_HEADER.unpack(header)
        start = info.header_offset + LOCAL_HEADER.size + fields[-2] + fields[-1]
        if start + info.file_size > self.size:
            raise CorruptCheckpoint(f"dl.load: record {info.filename} runs past the end of the file (truncated)")
        return start


def source_size(source) -> int:
    """Bytes in a seekable binary file from its start."""
    position = source.tell()
    try:
        return source.seek(0, os.SEEK_END)
    finally:
        source.seek(position)
