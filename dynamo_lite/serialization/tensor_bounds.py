"""Checks a checkpoint's tensor geometry against its storage before the tensor exists (torch's setStorage rules)."""
from __future__ import annotations

import operator

# torch's sizes, strides and offsets are int64: a value or an extent past this overflows there.
INT64_MAX = 2**63 - 1


def _int_list(value, what: str) -> tuple:
    if not isinstance(value, (tuple, list)):
        raise RuntimeError(f"dl.load: a tensor's {what} must be a tuple of ints, got {type(value).__name__}")
    try:
        items = tuple(operator.index(v) for v in value)
    except TypeError:
        raise RuntimeError(f"dl.load: a tensor's {what} must be a tuple of ints, got {list(value)!r}") from None
    if any(type(v) is bool for v in value):
        raise RuntimeError(f"dl.load: a tensor's {what} must be a tuple of ints, got {list(value)!r}")
    return items


def required_bytes(sizes: tuple, strides: tuple, offset: int, itemsize: int) -> int:
    """Bytes of storage a tensor of this geometry reads (torch's computeStorageNbytes; 0 when empty)."""
    if any(n == 0 for n in sizes):
        return 0
    return (offset + 1 + sum((n - 1) * s for n, s in zip(sizes, strides))) * itemsize


def checked_geometry(sizes, strides, offset, itemsize: int, storage_nbytes: int) -> tuple:
    """``(sizes, strides, offset)`` as int tuples once they fit the storage, else torch's RuntimeError.

    Raises:
        RuntimeError: negative or overflowing values, or a view reaching past the storage
            ("setStorage: sizes [..], strides [..], storage offset .., and itemsize .. requiring
            a storage size of .. are out of bounds for storage of size ..").
    """
    sizes, strides = _int_list(sizes, "size"), _int_list(strides, "stride")
    try:
        offset = operator.index(offset)
    except TypeError:
        raise RuntimeError(f"dl.load: a tensor's storage offset must be an int, got {offset!r}") from None
    if len(sizes) != len(strides):
        raise RuntimeError(f"unequal size length ({len(sizes)}) and stride length ({len(strides)})")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if any(n < 0 for n in sizes):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(sizes)}: {list(sizes)}")
    if any(s < 0 for s in strides):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: {list(strides)}")
    numel = 1
    for n in sizes:
        numel *= n
    needed = required_bytes(sizes, strides, offset, itemsize)
    if numel > INT64_MAX or needed > INT64_MAX or offset > INT64_MAX or any(s > INT64_MAX for s in strides):
        raise RuntimeError(f"setStorage: sizes {list(sizes)}, strides {list(strides)}, storage offset {offset}, and "
                           f"itemsize {itemsize} overflow int64 (the checkpoint is corrupt)")
    if needed > storage_nbytes:
        raise RuntimeError(f"setStorage: sizes {list(sizes)}, strides {list(strides)}, storage offset {offset}, and "
                           f"itemsize {itemsize} requiring a storage size of {needed} are out of bounds for storage "
                           f"of size {storage_nbytes}")
    return sizes, strides, offset
