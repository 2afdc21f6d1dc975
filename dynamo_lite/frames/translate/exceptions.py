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
from ..tracing.variables.exceptions import CaughtExceptionVariable, exception_variable


@dataclass(frozen=True)
class Handler:
    """One exception-table entry, by instruction index."""

    start: int  # first covered instruction
    end: int  # one past the last covered instruction
    target: int  # the handler's first instruction
    depth: int
    lasti: bool
    kind: str  # "clause" (an except/finally clause), "with_exit" or "cleanup" (both re-raise)
    unbinds: tuple = ()  # locals a cleanup deletes (``except ... as e`` unbinds ``e``)

    @property
    def real(self) -> bool:
        return self.kind == "clause"


def exception_handlers(code, instructions, index_of_offset) -> list:
    """The exception table of ``code`` in instruction indices (an empty list before 3.11)."""
    handlers = []
    for entry in getattr(dis.Bytecode(code), "exception_entries", ()):
        target = index_of_offset.get(entry.target)
        start = index_of_offset.get(entry.start)
        if target is None or start is None:
            continue
        end = index_of_offset.get(entry.end, len(instructions))
        kind, unbinds = _kind(instructions, target)
        handlers.append(Handler(start, end, target, entry.depth, entry.lasti, kind, unbinds))
    return handlers


# What cleanups do before re-raising: unbind ``except ... as e``, restore the previous exception.
_CLEANUP_STEPS = frozenset(("LOAD_CONST", "STORE_FAST", "DELETE_FAST", "COPY", "POP_EXCEPT", "NOP"))


def _kind(instructions, target: int) -> tuple:
    """What the handler at ``target`` is: a with statement's exit (which, for the no-op
    context managers the translator enters, never swallows the exception), a cleanup
    that re-raises (after an except clause), or an except/finally clause of the program."""
    if [ins.opname for ins in instructions[target:target + 2]] == ["PUSH_EXC_INFO", "WITH_EXCEPT_START"]:
        return "with_exit", ()
    index = target
    while index < len(instructions) and instructions[index].opname in _CLEANUP_STEPS:
        index += 1
    if index < len(instructions) and instructions[index].opname == "RERAISE":
        return "cleanup", tuple(ins.argval for ins in instructions[target:index] if ins.opname == "DELETE_FAST")
    return "clause", ()


def handler_at(handlers: list, index: int):
    """The handler covering instruction ``index`` (the table is flat: at most one)."""
    for handler in handlers:
        if handler.start <= index < handler.end:
            return handler
    return None


def handler_chain(handlers: list, index: int) -> tuple:
    """``(clause, passed)``: the except/finally clause an exception raised by instruction
    ``index`` reaches (None: it leaves the frame), and the cleanups it passes on the way
    (each re-raises from instructions the next handler covers)."""
    handler, passed = handler_at(handlers, index), []
    while handler is not None and not handler.real and handler not in passed:
        passed.append(handler)
        handler = handler_at(handlers, handler.target)
    return (handler if handler is not None and handler.real else None), passed


def in_cleanup(handlers: list, instructions, index: int) -> bool:
    """Is instruction ``index`` part of a cleanup's own code (from its first instruction to
    its RERAISE), where the stack holds the interpreter's offsets (lasti)?"""
    for handler in handlers:
        if handler.kind != "clause" and handler.target <= index:
            end = handler.target
            while end < len(instructions) and instructions[end].opname != "RERAISE":
                end += 1
            if index <= end:
                return True
    return False


def in_try_block(handlers: list, index: int) -> bool:
    """Does an exception raised by instruction ``index`` reach an except/finally clause?"""
    return handler_chain(handlers, index)[0] is not None


def note_context(tx, error) -> None:
    """Where ``error`` is raised (its first translator), the exception being handled there
    becomes its ``__context__``, as a raise does in Python (a re-raise keeps its own)."""
    if getattr(error, "context_noted", False):
        return
    error.context_noted = True
    variable = error.variable = exception_variable(error)
    if isinstance(variable, CaughtExceptionVariable) or variable.context is not None:
        return
    while tx is not None and not tx.active_exceptions:
        tx = tx.parent
    if tx is not None and tx.active_exceptions[-1] is not variable:
        variable.context = tx.active_exceptions[-1]


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
