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
    real: bool  # an except/finally clause (False: a cleanup that passes the exception on)


def exception_handlers(code, instructions, index_of_offset) -> list:
    """The exception table of ``code`` in instruction indices (an empty list before 3.11)."""
    handlers = []
    for entry in getattr(dis.Bytecode(code), "exception_entries", ()):
        target = index_of_offset.get(entry.target)
        start = index_of_offset.get(entry.start)
        if target is None or start is None:
            continue
        end = index_of_offset.get(entry.end, len(instructions))
        real = not _passes_on(instructions, target)
        handlers.append(Handler(start, end, target, entry.depth, entry.lasti, real))
    return handlers


# What cleanups do before re-raising: unbind ``except ... as e``, restore the previous exception.
_CLEANUP_STEPS = frozenset(("LOAD_CONST", "STORE_FAST", "DELETE_FAST", "COPY", "POP_EXCEPT", "NOP"))


def _passes_on(instructions, target: int) -> bool:
    """Is the handler at ``target`` a cleanup that re-raises (a with statement's exit,
    which for the no-op context managers the translator enters never swallows, or the
    cleanup of an except clause), not an except/finally clause of the program?"""
    if [ins.opname for ins in instructions[target:target + 2]] == ["PUSH_EXC_INFO", "WITH_EXCEPT_START"]:
        return True
    index = target
    while index < len(instructions) and instructions[index].opname in _CLEANUP_STEPS:
        index += 1
    return index < len(instructions) and instructions[index].opname == "RERAISE"


def handler_at(handlers: list, index: int):
    """The handler covering instruction ``index`` (the table is flat: at most one)."""
    for handler in handlers:
        if handler.start <= index < handler.end:
            return handler
    return None


def in_try_block(handlers: list, index: int) -> bool:
    """Does an exception raised by instruction ``index`` reach an except/finally clause?

    A with statement's cleanup (and the cleanup after it) re-raise the exception, from
    instructions that the enclosing try covers: follow them outwards.
    """
    handler = handler_at(handlers, index)
    seen = set()
    while handler is not None and not handler.real and handler.target not in seen:
        seen.add(handler.target)
        handler = handler_at(handlers, handler.target)
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
