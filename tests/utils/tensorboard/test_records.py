"""The record framing of event files: CRC32C against its published check value and TensorBoard's reader."""
import struct

import numpy as np

import pytest

from .conftest import require_tensorboard

require_tensorboard()

from dynamo_lite.utils.tensorboard.records import crc32c, encode_record, masked_crc32c, read_records  # noqa: E402


def test_crc32c_check_values():
    # The check value of CRC-32C (Castagnoli) for "123456789" (RFC 3720 B.4 lists it too).
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c(b"") == 0
    # RFC 3720 B.4: 32 bytes of zeros and 32 bytes of 0xFF.
    assert crc32c(bytes(32)) == 0x8A9136AA
    assert crc32c(b"\xff" * 32) == 0x62A8AB43
    # Continuing a CRC over a second piece gives the CRC of the whole.
    assert crc32c(b"56789", crc32c(b"1234")) == crc32c(b"123456789")


def test_masked_crc_matches_tensorboards():
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c as theirs
    for data in (b"", b"a", b"event data" * 37, bytes(range(256))):
        assert masked_crc32c(data) == theirs(data)


def test_records_read_back_by_tensorboard(tmp_path):
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import PyRecordReader_New
    payloads = [b"", b"x", bytes(range(256)) * 5]
    path = tmp_path / "records"
    path.write_bytes(b"".join(encode_record(p) for p in payloads))
    reader = PyRecordReader_New(str(path))
    got = []
    for _ in payloads:
        reader.GetNext()
        got.append(reader.record())
    assert got == payloads
    assert list(read_records(str(path))) == payloads


def test_corrupt_records_are_rejected(tmp_path):
    good = encode_record(b"payload")
    path = tmp_path / "bad"
    path.write_bytes(good[:-1] + bytes([good[-1] ^ 1]))
    with pytest.raises(ValueError, match="data's checksum"):
        list(read_records(str(path)))
    path.write_bytes(struct.pack("<Q", 5) + b"\0\0\0\0")
    with pytest.raises(ValueError, match="length's checksum"):
        list(read_records(str(path)))
    path.write_bytes(good[:10])
    with pytest.raises(ValueError, match="truncated"):
        list(read_records(str(path)))


@pytest.mark.parametrize("length", [8191, 8192, 8193, 65536 + 13, 300_001, 1 << 20])
def test_long_data_takes_the_chunked_path_to_the_same_crc(length):
    from dynamo_lite.utils.tensorboard.records import _register_update
    data = np.random.default_rng(length).integers(0, 256, length, dtype=np.uint8).tobytes()
    byte_by_byte = _register_update(0xFFFFFFFF, data) ^ 0xFFFFFFFF
    assert crc32c(data) == byte_by_byte
    assert crc32c(data[5000:], crc32c(data[:5000])) == byte_by_byte  # continued across the two paths
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c as theirs
    assert masked_crc32c(data) == theirs(data)
