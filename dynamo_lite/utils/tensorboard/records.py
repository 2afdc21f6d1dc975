"""The TFRecord framing of event files: length, masked CRC32C of the length, data, masked CRC32C of the data.

NOTE: [event file records] Every record is ``uint64 length`` (little endian), ``uint32
masked_crc32c(length bytes)``, ``length`` bytes of a serialized ``Event``, ``uint32
masked_crc32c(data)``. CRC32C is the Castagnoli polynomial (reflected 0x82F63B78); the mask
rotates the CRC right by 15 bits and adds 0xA282EAD8, so that a CRC of data that itself
holds CRCs does not degenerate. TensorBoard's reader checks both checksums.
"""
from __future__ import annotations

import functools
import math
import struct

import numpy as np

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


_NP_TABLE = np.array(_TABLE, dtype=np.uint32)
_VECTOR_MIN_BYTES = 8192  # below this the byte loop is as fast


def _register_update(register: int, data) -> int:
    """The CRC register after ``data`` (no initial or final inversion)."""
    table = _TABLE
    for byte in data:
        register = table[(register ^ byte) & 0xFF] ^ (register >> 8)
    return register


@functools.lru_cache(maxsize=8)
def _zeros_operator(length: int) -> tuple:
    """Four 256-entry tables applying ``length`` zero bytes to a register, one per register byte.

    Feeding zeros is linear over GF(2) in the register, so the register after them is the
    XOR of what each of its bytes alone becomes.
    """
    registers = (np.arange(256, dtype=np.uint32)[None, :] << (8 * np.arange(4, dtype=np.uint32)[:, None])).ravel()
    for _ in range(length):
        registers = _NP_TABLE[registers & 0xFF] ^ (registers >> 8)
    return tuple(tuple(int(v) for v in row) for row in registers.reshape(4, 256))


def _register_update_chunked(register: int, data: bytes) -> int:
    """``_register_update`` for long data: chunks of ``length`` bytes run side by side in NumPy.

    NOTE: [CRC32C of long records] The register update is linear: after chunks A1..Ak,
    ``r_i = Z(r_{i-1}) ^ R(A_i)``, where ``R(A)`` is the register after A from zero and ``Z``
    feeds ``len(A)`` zero bytes (``_zeros_operator``). All ``R(A_i)`` are computed at once, one
    byte column per NumPy step, then folded in order; the tail runs through the byte loop.
    """
    length = 1 << min(12, max(6, math.isqrt(len(data)).bit_length() - 3))  # about sqrt(n) / 4 bytes
    count = len(data) // length
    columns = np.frombuffer(data, np.uint8, count * length).reshape(count, length).T.astype(np.uint32)
    partial = np.zeros(count, np.uint32)
    for column in columns:
        partial = _NP_TABLE[(partial ^ column) & 0xFF] ^ (partial >> 8)
    t0, t1, t2, t3 = _zeros_operator(length)
    for value in partial.tolist():
        register = (t0[register & 0xFF] ^ t1[(register >> 8) & 0xFF] ^ t2[(register >> 16) & 0xFF]
                    ^ t3[register >> 24] ^ value)
    return _register_update(register, memoryview(data)[count * length:])


def crc32c(data: bytes, crc: int = 0) -> int:
    """CRC32C (Castagnoli) of ``data``, continuing from ``crc``; ``crc32c(b"123456789") == 0xE3069283``."""
    update = _register_update_chunked if len(data) >= _VECTOR_MIN_BYTES else _register_update
    return update(crc ^ 0xFFFFFFFF, bytes(data)) ^ 0xFFFFFFFF


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
