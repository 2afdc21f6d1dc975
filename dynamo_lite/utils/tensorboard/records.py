"""The TFRecord framing of event files: length, masked CRC32C of the length, data, masked CRC32C of the data.

NOTE: [event file records] Every record is ``uint64 length`` (little endian), ``uint32
masked_crc32c(length bytes)``, ``length`` bytes of a serialized ``Event``, ``uint32
masked_crc32c(data)``. CRC32C is the Castagnoli polynomial (reflected 0x82F63B78); the mask
rotates the CRC right by 15 bits and adds 0xA282EAD8, so that a CRC of data that itself
holds CRCs does not degenerate. TensorBoard's reader checks both checksums.
"""
from __future__ import annotations

import struct

_POLY = 0x82F63B78
_MASK_DELTA = 0xA282EAD8


def _table() -> tuple:
    rows = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ _POLY if crc & 1 else crc >> 1
        rows.append(crc)
    return tuple(rows)


_TABLE = _table()


def crc32c(data: bytes, crc: int = 0) -> int:
    """CRC32C (Castagnoli) of ``data``, continuing from ``crc``; ``crc32c(b"123456789") == 0xE3069283``."""
    table = _TABLE
    crc ^= 0xFFFFFFFF
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data: bytes) -> int:
    """The CRC32C of ``data`` masked as the record format stores it."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def encode_record(data: bytes) -> bytes:
    """One framed record holding ``data``."""
    header = struct.pack("<Q", len(data))
    return b"".join((header, struct.pack("<I", masked_crc32c(header)), data, struct.pack("<I", masked_crc32c(data))))


def read_records(path: str):
    """Yield the data of each record in the file at ``path``, checking both checksums.

    Raises:
        ValueError: a truncated record or a checksum that does not match (the file is
            read as untrusted input).
    """
    with open(path, "rb") as f:
        while True:
            header = f.read(8)
            if not header:
                return
            crc = f.read(4)
            if len(header) < 8 or len(crc) < 4:
                raise ValueError(f"{path}: truncated record header")
            if struct.unpack("<I", crc)[0] != masked_crc32c(header):
                raise ValueError(f"{path}: the length's checksum does not match")
            (length,) = struct.unpack("<Q", header)
            data = f.read(length)
            crc = f.read(4)
            if len(data) < length or len(crc) < 4:
                raise ValueError(f"{path}: truncated record")
            if struct.unpack("<I", crc)[0] != masked_crc32c(data):
                raise ValueError(f"{path}: the data's checksum does not match")
            yield data
