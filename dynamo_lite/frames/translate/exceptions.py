"""Exceptions inside the traced code: the exception table (3.11+) sends a raise to its handler.

NOTE: [try/except in the traced frame] A raise the translator can see (``raise E(...)``,
a missing dict key, a failed ``next()`` ...) is a ``UserError``. If the instruction that
raised is covered by an entry of the code's exception table, the translator does what
the interpreter does: cut the stack to the entry's depth, push the offset when the entry
says ``lasti``, push the exception and continue at the handler; ``except`` clauses then
run symbolically (PUSH_EXC_INFO, CHECK_EXC_MATCH, POP_EXCEPT, RERAISE). An exception
no handler takes leaves the translator (inlined callees pass it to their caller). A
graph break inside a ``try`` block never runs the breaking instruction outside the
block: the code resumes *at* it, inside the original try (see BreakPlan).
"""
from __future__ import annotations

import dis
from dataclasses import dataclass

from ..tracing.variables.base import ConstantVariable
from ..tracing.variables.exceptions import exception_variable


@dataclass(frozen=True)
class Handler:
    """One exception-table entry, by instruction index."""

    start: int  # first covered instruction
    end: int  # one past the last covered instruction
    target: int  # the handler's first instruction
    depth: int
    lasti: bool
    real: bool  # an except/finally clause (False: a with statement's cleanup)


def exception_handlers(code, instructions, index_of_offset) -> list:
    """The exception table of ``code`` in instruction indices (an empty list before 3.11)."""
    handlers = []
    for entry in getattr(dis.Bytecode(code), "exception_entries", ()):
        target = index_of_offset.get(entry.target)
        start = index_of_offset.get(entry.start)
        if target is None or start is None:
            continue
        end = index_of_offset.get(entry.end, len(instructions))
        following = instructions[target + 1].opname if target + 1 < len(instructions) else ""
        real = not (instructions[target].opname == "PUSH_EXC_INFO" and following == "WITH_EXCEPT_START")
        handlers.append(Handler(start, end, target, entry.depth, entry.lasti, real))
    return handlers


def handler_at(handlers: list, index: int):
    """The handler covering instruction ``index`` (the table is flat: at most one)."""
    for handler in handlers:
        if handler.start <= index < handler.end:
            return handler
    return None


def in_try_block(handlers: list, index: int) -> bool:
    """Is instruction ``index`` protected by an except/finally clause (not only a with)?"""
    handler = handler_at(handlers, index)
    return handler is not None and handler.real


def enter_handler(tx, error, index: int) -> bool:
    """Send ``error`` (raised by instruction ``index``) to its handler; False if none."""
    handler = handler_at(tx.exception_handlers, index)
    if handler is None:
        return False
    del tx.stack[handler.depth:]
    if handler.lasti:
        tx.push(ConstantVariable(tx.instructions[index].offset))
    tx.push(exception_variable(error))
    tx.pc = handler.target
    return True
