"""The names PyTorch's checkpoint format uses: storage types per dtype, the archive's records.

NOTE: [checkpoint format] ``torch.save`` (since 1.6) writes an uncompressed zip archive
whose records sit under one folder named after the file (``model.pt`` -> ``model/``):
``data.pkl`` is a protocol-2 pickle of the saved object in which every tensor is
``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)``
and every storage a persistent id ``("storage", torch.<Type>Storage, key, location,
numel)`` whose bytes are the record ``data/<key>`` (little endian, aligned to 64 bytes);
``byteorder``, ``version``, ``.format_version``, ``.storage_alignment`` and
``.data/serialization_id`` complete it. dl.save writes exactly this and dl.load reads it,
so checkpoints move both ways between dynamo_lite and PyTorch.
"""
from __future__ import annotations

from ..tensor import dtype as dtypes

# torch.<name>Storage -> dtype, and the dtype names torch pickles as ``torch.<name>``.
STORAGE_TYPES = {
    "FloatStorage": dtypes.float32, "DoubleStorage": dtypes.float64, "HalfStorage": dtypes.float16,
    "LongStorage": dtypes.int64, "IntStorage": dtypes.int32, "ShortStorage": dtypes.int16,
    "CharStorage": dtypes.int8, "ByteStorage": dtypes.uint8, "BoolStorage": dtypes.bool_,
    "ComplexFloatStorage": dtypes.complex64, "ComplexDoubleStorage": dtypes.complex128,
    "BFloat16Storage": dtypes.bfloat16,
}
STORAGE_TYPE_OF = {dt: name for name, dt in STORAGE_TYPES.items()}
DTYPES = {dt.name: dt for dt in STORAGE_TYPES.values()}

ALIGNMENT = 64
FORMAT_VERSION = b"1"
ARCHIVE_VERSION = b"3\n"
BYTEORDER = b"little"
