"""Graph breaks inside try blocks, with blocks and except clauses: where an exception goes.

NOTE: [breaks inside try/except] A graph break runs one instruction of the original code
eagerly in the transformed code, between the graph and the resume function of the code
after it. Inside a try block, a with block or an except clause, that instruction is
covered by a handler of the original code's exception table, and an exception it raises
must meet that handler, as it does in the eager frame. So the transformed code covers
the instruction with an exception-table entry of its own; its handler calls a second
resume function, made at the original handler's first instruction, with the stack the
handler expects (the values below the entry's depth, the offset when the entry keeps
one, the exception) and the locals live there. The handler's code (``except`` matching,
``finally`` bodies, a with block's ``__exit__``) then runs in that resume function,
which the frame hook translates like any other: the except clause compiles too.

Both resume functions start after the instruction, so they compile (the rest of the try
body, the code after the try) instead of breaking again at the same instruction. Inside
an except clause the exception being handled sits on the stack (PUSH_EXC_INFO pushed
the previous one under it); the resume function's prologue makes it the current
exception again (layout kinds ``exc_prev``/``exc``), and the transformed code does the
same around the eager instruction, so ``sys.exception()``, a bare ``raise`` and the
``__context__`` of a new exception are what they are in the eager frame. The stack
values are rebuilt before the instruction: a grad-mode block is entered again there,
and its ``__exit__`` is on the stack the handler gets.
"""
from __future__ import annotations

from bytecode import Label

from .exceptions import handler_chain
from ..tracing.variables.objects import NoOpExitVariable

#: The temporary holding the exception the eager instruction raised.
EXCEPTION_TEMP = "__dl_exception"


class ExceptionRoute:
    """The exception-table entry around a graph break's eager work, and its handler.

    Args:
        plan: the BreakPlan (its snapshot, original code and resume functions).
        clause: the except/finally clause the exception reaches (None: it leaves the frame).
        passed: the cleanups on the way (exceptions.handler_chain).
    """

    def __init__(self, plan, clause, passed: list):
        self.plan, self.clause = plan, clause
        stack = plan.snapshot.stack
        # The with blocks the exception leaves call their __exit__ (in the transformed
        # code: a grad-mode block's exit never swallows it); except clauses it leaves unbind.
        self.exits = [stack[cleanup.depth - 1] for cleanup in passed if cleanup.kind == "with_exit"]
        self.unbound = frozenset(name for cleanup in passed for name in cleanup.unbinds)
        if clause is not None:
            self.target = plan.resume.original_position(plan.tx.code, clause.target)[1]
        slots = plan.snapshot.exception_slots
        self.handled = slots[-1][1] if slots else None  # of the innermost except clause
        self.label = Label()
        self.entry = None

    @classmethod
    def of(cls, plan):
        """The route of ``plan``'s breaking instruction, or None when there is nothing to
        do for its exceptions (no handler, no with block, not in an except clause)."""
        clause, passed = _stop_at_user_exits(plan.snapshot.stack, *handler_chain(plan.tx.exception_handlers,
                                                                                 plan.snapshot.index))
        if clause is None and not plan.snapshot.exception_slots and not any(c.kind == "with_exit" for c in passed):
            return None
        return cls(plan, clause, passed)

    def enter(self, cg, below: list) -> None:
        """Before the eager work: rebuild the stack values, make the handled exception
        current, open the entry."""
        cg.route_exceptions()
        kinds = self.plan.layout(below)
        cg.stash([self.plan.passed_value(slot, variable) for slot, (variable, kind) in enumerate(zip(below, kinds))
                  if kind != "null"])
        if self.handled is not None:
            cg.reconstruct(self.handled)
            cg.emit("PUSH_EXC_INFO")
        self.entry = cg.begin_try(self.label)

    def leave(self, cg) -> None:
        cg.end_try(self.entry)

    def restore(self, cg) -> None:
        """After the eager work (or in the handler): the previous exception is current again."""
        if self.handled is not None:
            cg.emit("POP_TOP")
            cg.emit("POP_EXCEPT")

    def emit_handler(self, cg, hook) -> None:
        """The entry's handler: leave the with blocks, continue at the clause in a resume function."""
        cg.place_label(self.label)
        cg.store_fast(EXCEPTION_TEMP)
        self.restore(cg)
        for exit_fn in self.exits:
            def emit_args(exit_fn=exit_fn):
                cg.reconstruct(exit_fn)
                cg.load_fast(EXCEPTION_TEMP)

            cg.call_const(_leave_block, emit_args, 2)
            cg.emit("POP_TOP")
        if self.clause is None:
            cg.load_fast(EXCEPTION_TEMP)
            cg.emit("RAISE_VARARGS", 1)
            return
        below = self.plan.snapshot.stack[:self.clause.depth]
        self.plan.call_resume(cg, hook, self.target, below, [EXCEPTION_TEMP], lasti=self.clause.lasti,
                              unbound=self.unbound)


def _stop_at_user_exits(stack: list, clause, passed: list) -> tuple:
    """``(clause, passed)`` of handler_chain, where the exit of a user context manager is a
    clause: it may suppress the exception (NOTE: [user context managers])."""
    for position, cleanup in enumerate(passed):
        if cleanup.kind == "with_exit" and not isinstance(stack[cleanup.depth - 1], NoOpExitVariable):
            return cleanup, passed[:position]
    return clause, passed


def _leave_block(exit_fn, exception) -> None:
    """Leave a grad-mode block by ``exception``, as a with statement does."""
    exit_fn(type(exception), exception, exception.__traceback__)


class _NoRoute:
    """No handler covers the instruction: its exception leaves the frame."""

    def enter(self, cg, below) -> None:
        pass

    def leave(self, cg) -> None:
        pass

    def restore(self, cg) -> None:
        pass

    def emit_handler(self, cg, hook) -> None:
        pass


NO_ROUTE = _NoRoute()
