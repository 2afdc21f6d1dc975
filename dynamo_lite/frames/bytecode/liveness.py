"""Which locals a code object may still read from a given instruction on."""
from __future__ import annotations

import dis

from .compat import UNCONDITIONAL_JUMPS
from .resume import indexed_instructions

_READS = ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "LOAD_DEREF", "LOAD_CLOSURE",
          "DELETE_FAST", "LOAD_FAST_LOAD_FAST")
_STOPS = ("RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE")


def live_locals(code, start: int) -> set:
    """Names read by any instruction reachable from index ``start`` (an over-approximation:
    a name counts even if it is written before being read)."""
    instructions, index_of_offset = indexed_instructions(code)
    handlers = [(e.start, e.end, e.target) for e in dis.Bytecode(code).exception_entries]
    seen, pending, names = set(), [start], set()
    while pending:
        index = pending.pop()
        if index in seen or index >= len(instructions):
            continue
        seen.add(index)
        ins = instructions[index]
        if ins.opname in _READS:
            value = ins.argval
            names.update(value if isinstance(value, tuple) else (value,))
        if ins.opname == "STORE_FAST_LOAD_FAST":
            names.add(ins.argval[1])
        for start_offset, end_offset, target in handlers:
            if start_offset <= ins.offset < end_offset and target in index_of_offset:
                pending.append(index_of_offset[target])
        if ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs:
            if isinstance(ins.argval, int) and ins.argval in index_of_offset:
                pending.append(index_of_offset[ins.argval])
            if ins.opname in UNCONDITIONAL_JUMPS:
                continue
        if ins.opname not in _STOPS:
            pending.append(index + 1)
    return names
