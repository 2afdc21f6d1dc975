"""Code for a graph break: run the graph so far, one instruction eagerly, then resume."""
from __future__ import annotations

from bytecode import Bytecode, Instr, Label

from ..bytecode import compat
from ..errors import Unsupported, UserError
from .exceptions import in_cleanup, in_try_block
from .try_breaks import NO_ROUTE, ExceptionRoute
from .loops import LoopExit, loop_exits, loop_kept
from ..bytecode.liveness import live_locals
from ..logs import graph_breaks_log
from ..bytecode.resume import bind, closure_names, real_instructions
from ..tracing.variables.base import CellVariable, NullVariable
from ..tracing.variables.exceptions import CaughtExceptionVariable
from ..tracing.variables.iterators import IteratorVariable
from ..tracing.variables.objects import NoOpExitVariable
from ..tracing.variables.tensor import TensorVariable

TEMP_PREFIX = "__dl_result"


def _layout(variables, exception_slots: tuple = ()) -> tuple:
    """The resume function's stack layout (see ResumeFunctions.get) of stack ``variables``."""
    kinds = ["null" if isinstance(v, NullVariable) else "iter" if isinstance(v, IteratorVariable) else "value"
             for v in variables]
    for slot, _ in exception_slots:
        if slot < len(kinds):  # (a handler's stack may end below an except clause)
            kinds[slot] = "exc_prev"
    return tuple(kinds)


def raises_after_graph(tx, snapshot, reason, graph_has_work: bool) -> bool:
    """Whether the code after the graph raises the program's exception itself: running the
    instruction again would not raise (e.g. a loop over a dict the frame resized)."""
    return isinstance(reason, UserError) and tx.instructions[snapshot.index].opname not in compat.EAGER_STACK_EFFECTS \
        and graph_has_work and not in_try_block(tx.exception_handlers, snapshot.index)


def without_tracebacks(error: BaseException) -> BaseException:
    """``error`` (and the exceptions it chains) with no traceback: a kept traceback holds
    the translation's frames, which hold the frame's values (the user's tensors) in a
    reference cycle until a garbage collection."""
    seen = set()
    current = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        current.__traceback__ = None
        current = current.__cause__ or current.__context__
    return error


class BreakPlan:
    """How the transformed code continues after the graph: the instruction it runs
    eagerly (if any) and the resume function(s) it calls.

    Args:
        tx: the translator of the compiled frame, stopped at ``snapshot.index``.
        snapshot: its state before that instruction.
        reason: the Unsupported that stopped it.
        resume_functions: the ResumeFunctions cache of the frame hook.
        f_globals: the frame's globals.
    """

    def __init__(self, tx, snapshot, reason, resume_functions, f_globals, graph_has_work: bool,
                 at_loop_head: bool = False):
        self.tx = tx
        self.snapshot = snapshot
        self.reason = without_tracebacks(reason)
        self.handled_at = dict(snapshot.exception_slots)  # stack slot -> the exception its except clause handles
        self.resume = resume_functions
        self.f_globals = f_globals
        self.instruction = tx.instructions[snapshot.index]
        self.original_code, self.original_index = resume_functions.original_position(tx.code, snapshot.index)
        self.original_instructions = real_instructions(Bytecode.from_code(self.original_code))
        # Resume functions close over the frame's cells (NOTE: [cells across graph breaks]).
        self.closure = [snapshot.locals.get(name) for name in closure_names(self.original_code)]
        if not all(isinstance(cell, CellVariable) for cell in self.closure):
            raise Unsupported(f"{reason.reason} (and the frame cannot resume after it: a cell is not tracked)",
                              reason.filename, reason.lineno, reason.hint)
        cells = set(closure_names(self.original_code))
        self.locals = {name: var for name, var in snapshot.locals.items() if var is not None and name not in cells}
        name = self.instruction.opname
        stack = snapshot.stack
        self.exception = None
        if not at_loop_head and raises_after_graph(tx, snapshot, reason, graph_has_work):
            self.mode, self.exception = "raise", reason.exception
        elif in_cleanup(tx.exception_handlers, tx.instructions, snapshot.index) \
                or any(not 0 <= slot < len(stack) for slot, _ in snapshot.exception_slots):
            # (a cleanup's own code: the stack holds the interpreter's offsets, no resume
            # function can take them over)
            raise Unsupported(f"{reason.reason} (inside an exception handler's cleanup, the frame runs eagerly)",
                              reason.filename, reason.lineno, reason.hint)
        else:
            stack[:] = [v.frozen(tx) if isinstance(v, IteratorVariable) else v for v in stack]
        # An exception of the instruction run in between goes to a resume function at its
        # handler (NOTE: [breaks inside try/except]); a grad-mode block is entered again first.
        self.route = None if at_loop_head else ExceptionRoute.of(self)
        unrouted_mode_change = self.route is None and any(
            isinstance(v, NoOpExitVariable) and v.changes_mode for v in stack)
        if self.exception is not None:
            pass
        elif at_loop_head:  # (with nothing before the loop, still: the code after it compiles)
            self.mode = "loop"
        elif name in compat.CONDITIONAL_JUMPS and stack and isinstance(stack[-1], TensorVariable):
            self.mode = "branch"
        elif name in compat.EAGER_STACK_EFFECTS and not unrouted_mode_change:
            self.mode = "eager"
        elif graph_has_work:
            self.mode = "resume"
        else:  # resuming right here would only repeat this translation
            raise Unsupported(f"{reason.reason} (the frame runs eagerly: nothing before it to compile)",
                              reason.filename, reason.lineno, reason.hint)
        # Original instruction indices the code after the break continues at.
        if self.mode == "branch":
            taken = tx.index_of_offset[self.instruction.argval]
            self.jump_target = resume_functions.original_position(tx.code, taken)[1]
            self.targets = [self.original_index + 1, self.jump_target]
        elif self.mode == "raise":
            self.targets = []
        elif at_loop_head:
            self.targets = [self.original_index]
        else:
            # Resuming at a call starts at its companions (3.11's PRECALL sets the call up).
            self.targets = [self.original_index + 1 if self.mode == "eager" else self._first_of_call()]
        self._live: dict = {}  # resume index -> names read from there on
        self.resume_codes: list = []

    # -- what stays alive ------------------------------------------------------------------
    def live_variables(self) -> list:
        """Stack values and the locals that code after the break may still read."""
        if self.mode == "raise":
            return []
        live = set().union(*(self._live_at(t) for t in self.targets))
        stack = [self.passed_value(slot, v) for slot, v in enumerate(self.snapshot.stack) if not isinstance(v, NullVariable)]
        return stack + [v for name, v in self.locals.items() if name in live] + self.closure

    def layout(self, below: list) -> tuple:
        """The resume-function stack layout of the stack values ``below``."""
        return _layout(below, self.snapshot.exception_slots)

    def passed_value(self, slot: int, variable):
        """What a resume function gets for stack ``slot`` holding ``variable``: in an except
        clause, for the exception its POP_EXCEPT restores, the one the clause handles."""
        return self.handled_at.get(slot, variable)

    def _live_at(self, resume_index: int) -> set:
        if resume_index not in self._live:
            self._live[resume_index] = live_locals(self.original_code, resume_index)
        return self._live[resume_index]

    def _local_names(self, resume_index: int, unbound: frozenset = frozenset()) -> tuple:
        live = self._live_at(resume_index) - unbound
        return tuple(name for name in self.locals if name in live)

    def _emit_resume_function(self, cg, code) -> None:
        """Push the resume function running ``code``: made here over the frame's cells when
        it has any (NOTE: [cells across graph breaks])."""
        if not self.closure:
            cg.load_const(bind(code, self.f_globals, ()))
            return

        def emit_args():
            cg.load_const(code)
            cg.load_const(self.f_globals)
            for cell in self.closure:
                cg.reconstruct(cell)
            cg.build(tuple, len(self.closure))

        cg.call_const(bind, emit_args, 3)

    # -- emission --------------------------------------------------------------------------
    def emit(self, cg, hook) -> None:
        {"eager": self._emit_eager, "branch": self._emit_branch, "resume": self._emit_resume,
         "raise": self._emit_raise, "loop": self._emit_loop}[self.mode](cg, hook)

    def _emit_raise(self, cg, hook) -> None:
        exception = self.exception
        variable = getattr(self.reason, "variable", None)
        if isinstance(variable, CaughtExceptionVariable) or getattr(variable, "context", None) is not None:
            cg.reconstruct(variable)  # the very object raised again, or one raised while handling another
            cg.emit("RAISE_VARARGS", 1)
            return

        def emit_args():
            cg.load_const(type(exception))
            cg.load_const(tuple(exception.args))

        cg.call_const(_raise_new, emit_args, 2)
        cg.emit("RETURN_VALUE")  # never reached

    def call_resume(self, cg, hook, resume_index: int, below: list, temps: list, exits: tuple | None = None,
                    lasti: bool = False, unbound: frozenset = frozenset()) -> None:
        """Call the resume function with the stack items ``below`` (variables), then (with
        ``lasti``) the offset of the breaking instruction in it, then the values stored in
        the temporaries ``temps``, then the live locals (but not those ``unbound``); return
        its value. With ``exits`` the function is a loop's (NOTE: [graph breaks in loops]):
        it is never translated, and leaves through ``exits``."""
        layout = self.layout(below) + ("value",) * (len(temps) + lasti)
        names = self._local_names(resume_index, unbound)
        resume_code = self.resume.get(self.original_code, resume_index, layout, names, exits or ())
        self.resume_codes.append(resume_code)
        running = hook.instrument_code(resume_code) if hook is not None and exits is None else None
        running = running or resume_code  # (with the hook's prologue when it compiles)

        def emit_args():
            for slot, (variable, kind) in enumerate(zip(below, layout)):
                if kind == "iter":  # the items, which the prologue turns back into an iterator the translator sees through
                    variable.reconstruct_items(cg)
                elif kind != "null":
                    cg.reconstruct(self.passed_value(slot, variable))
            if lasti:  # where the interpreter's handler stack says the exception came from
                cg.load_const(self.resume.offset_in(resume_code, self.original_index, running))
            for name in temps:
                cg.load_fast(name)
            for name in names:
                cg.reconstruct(self.locals[name])

        nargs = sum(1 for kind in layout if kind != "null") + len(names)
        cg.call_pushed(lambda: self._emit_resume_function(cg, running), emit_args, nargs)
        cg.emit("RETURN_VALUE")

    def _first_of_call(self) -> int:
        """The breaking instruction's index, or that of the first CALL companion before it."""
        first = self.original_index
        while first > 0 and self.original_instructions[first - 1].name in compat.CALL_COMPANIONS:
            first -= 1
        return first

    def _original(self, index: int) -> Instr:
        return self.original_instructions[index].copy()

    def _emit_eager(self, cg, hook) -> None:
        pops, pushes = compat.EAGER_STACK_EFFECTS[self.instruction.opname](self.instruction.arg or 0)
        stack = self.snapshot.stack
        below, operands = stack[: len(stack) - pops], stack[len(stack) - pops:]
        route = self.route or NO_ROUTE
        route.enter(cg, below)
        for variable in operands:
            cg.reconstruct(variable)
        for index in range(self._first_of_call(), self.original_index + 1):
            cg.instructions.append(self._original(index))
        route.leave(cg)
        results = [f"{TEMP_PREFIX}{i}" for i in range(pushes)]
        for name in reversed(results):
            cg.store_fast(name)
        route.restore(cg)
        self.call_resume(cg, hook, self.original_index + 1, below, results)
        route.emit_handler(cg, hook)

    def _emit_branch(self, cg, hook) -> None:
        mode, _ = compat.CONDITIONAL_JUMPS[self.instruction.opname]
        stack = self.snapshot.stack
        below, condition = stack[:-1], stack[-1]
        route = self.route or NO_ROUTE
        route.enter(cg, below)
        cg.reconstruct(condition)
        if compat.BRANCH_NEEDS_TO_BOOL:
            cg.emit("TO_BOOL")
        taken = Label()
        jump = self._original(self.original_index)
        jump.name = compat.FORWARD_SPELLING.get(jump.name, jump.name)  # the target now lies below
        jump.arg = taken
        cg.instructions.append(jump)
        route.leave(cg)
        route.restore(cg)
        self.call_resume(cg, hook, self.original_index + 1, below, [])
        cg.instructions.append(taken)
        if mode == "keep_if_jump":  # the jump kept the tested value on the stack
            cg.store_fast(f"{TEMP_PREFIX}0")
            route.restore(cg)
            self.call_resume(cg, hook, self.jump_target, below, [f"{TEMP_PREFIX}0"])
        else:
            route.restore(cg)
            self.call_resume(cg, hook, self.jump_target, below, [])
        route.emit_handler(cg, hook)

    def _emit_resume(self, cg, hook) -> None:
        self.call_resume(cg, hook, self.targets[0], self.snapshot.stack, [])

    def _emit_loop(self, cg, hook) -> None:
        """Call the loop's resume function; the code after the loop gets resume functions
        of its own when it can (a stack below the loop, or an exit inside a try, keeps
        it in the loop's function, running eagerly)."""
        stack = self.snapshot.stack
        below = self.layout(stack[:-1])  # (under the iterable: what the code after the loop gets back)
        exits = loop_exits(self.original_code, self.original_index) if set(below) <= {"value", "null"} else None
        # What a comprehension keeps: its collection, and the loop variables it saved (NULL if unbound).
        kept = below + tuple("null" if name and self.snapshot.locals.get(name) is None else "value"
                             for name in loop_kept(self.original_code, self.original_index))
        cells = set(closure_names(self.original_code))
        handovers = []
        for at, resume_index, pops in exits or ():
            names = tuple(sorted(self._live_at(resume_index) - cells))
            handover = LoopExit(self.resume, hook, self.original_code, resume_index, names, self.f_globals, kept)
            handovers.append((at, pops, kept, handover))
        self.call_resume(cg, hook, self.targets[0], stack, [], tuple(handovers))


def _raise_new(exception_type, args):
    """Raise a fresh ``exception_type(*args)`` (the error the eager program raises here)."""
    raise exception_type(*args)


def log_break(code, reason) -> None:
    """Log a break once (each translation happens once) with the user's call stack."""
    stack = "".join(f"\n    called from {fn} at {file}:{line}" for file, line, fn in reason.user_stack)
    graph_breaks_log.info("graph break in %s: %s\n    at %s:%s%s", code.co_qualname, reason.reason,
                          reason.filename, reason.lineno, stack)
