"""Checks a checkpoint's pickle stream before it is unpickled: no length or memo index larger than the data allows.

NOTE: [bounded unpickling] The C unpickler allocates what a record claims before it reads
it: a BINBYTES8 of 2**40 bytes asks for a terabyte, a LONG_BINPUT at index 2**32 grows the
memo to tens of gigabytes and zero-fills it. ``check_pickle`` walks the opcodes once with
``pickletools.genops`` (which reads counted arguments from an in-memory stream, so a false
count only finds the data short) and refuses, as a truncated or corrupt checkpoint, any
count past the end of the data and any memo index beyond the number of opcodes seen.
"""
from __future__ import annotations

import io
import pickle
import pickletools

MEMO_WRITES = frozenset({"PUT", "BINPUT", "LONG_BINPUT"})


def check_pickle(data: bytes, record: str) -> None:
    """Raise ``pickle.UnpicklingError`` if ``data`` is not a complete pickle whose counts fit its size."""
    count = 0
    try:
        for opcode, arg, _ in pickletools.genops(io.BytesIO(data)):
            count += 1
            if opcode.name in MEMO_WRITES and not (isinstance(arg, int) and 0 <= arg <= count):
                raise pickle.UnpicklingError(f"dl.load: {record} is corrupt (memo index {arg!r} at opcode {count})")
    except pickle.UnpicklingError:
        raise
    except (ValueError, EOFError, OverflowError) as exc:
        raise pickle.UnpicklingError(f"dl.load: {record} is truncated or corrupt ({exc})") from None
