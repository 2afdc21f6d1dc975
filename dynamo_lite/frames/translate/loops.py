"""Graph breaks inside for-loops break at the loop's head, so one resume function serves every iteration.

NOTE: [graph breaks in loops] Resuming right after a break inside a loop body would make
the resume function's translation unroll the rest of the loop and break again in the
next iteration: one translation (and one cache entry, guarded on the iterator's
position) per remaining iteration. Instead the translator remembers its state before
the ``GET_ITER`` of each for-loop of the compiled frame (the first time it gets there),
and a break anywhere inside the loop, nested loops included, rewinds to the outermost
such loop: the graph covers the code before the loop, and the resume function starts
at ``GET_ITER`` with the iterable, so the loop runs over the real object (a dict that
the body resizes raises as in eager code). The resume function's own translation
would break inside the same loop with nothing before it to compile, so it is never
translated: the loop runs eagerly, and where the loop hands over to the code after it,
the loop's resume function calls a second resume function for that code, which
compiles (when it can: see ``loop_exits``). One translation per frame and one for the
code after the loop, whatever the number of iterations. An error of the program
(``UserError``, or a library call that raised at trace time) outside a try block ends
the frame where it happens and is not rewound.
"""
from __future__ import annotations

import dis
from functools import cache

from ..bytecode import compat
from ..bytecode.liveness import live_locals
from ..bytecode.resume import indexed_instructions
from .exceptions import in_try_block

_JUMPS = frozenset(compat.UNCONDITIONAL_JUMPS) | frozenset(compat.CONDITIONAL_JUMPS)


@cache
def for_loops(code) -> tuple:
    """``(get_iter, for_iter, last)`` instruction indices of each for-loop of ``code``
    whose iterator is made right before it (``last``: its last backward jump)."""
    instructions, index_of_offset = indexed_instructions(code)
    last_jump: dict[int, int] = {}
    for index, instruction in enumerate(instructions):
        if instruction.opname in _JUMPS:
            target = index_of_offset[instruction.argval]
            if target < index:
                last_jump[target] = index
    loops = []
    for index, instruction in enumerate(instructions):
        if instruction.opname == "FOR_ITER" and index in last_jump and index > 0 \
                and instructions[index - 1].opname == "GET_ITER":
            loops.append((index - 1, index, last_jump[index]))
    return tuple(loops)


def loop_entry(tx, index: int, reason):
    """The snapshot at the head of the outermost for-loop around instruction ``index`` of
    ``tx``'s code that the translation went through, or None (also for an error of the
    program: the frame ends there, whatever loop it is in)."""
    if getattr(reason, "user_error", False) and not in_try_block(tx.exception_handlers, index):
        return None
    for get_iter, for_iter, last in for_loops(tx.code):
        if for_iter <= index <= last and get_iter in tx.loop_heads:
            return tx.loop_heads[get_iter]
    return None


def loop_exits(code, get_iter: int) -> tuple | None:
    """Where the loop starting at ``get_iter`` hands over to the code after it: the
    instruction indices an exhausted ``FOR_ITER`` and the jumps out of the body land on,
    each with the locals code from there may read. None when the code after the loop
    cannot run in a resume function of its own: an exit inside a try or with block (an
    error there would meet the handler twice)."""
    instructions, index_of_offset = indexed_instructions(code)
    _, for_iter, last = next(loop for loop in for_loops(code) if loop[0] == get_iter)
    exits = {index_of_offset[instructions[for_iter].argval] + compat.FOR_ITER_EXIT_SKIP}
    for index in range(for_iter + 1, last + 1):
        instruction = instructions[index]
        if instruction.opname in _JUMPS and index_of_offset[instruction.argval] > last:
            exits.add(index_of_offset[instruction.argval])
    protected = [(index_of_offset[e.start], index_of_offset.get(e.end, len(instructions)))
                 for e in getattr(dis.Bytecode(code), "exception_entries", ())]
    if any(start <= exit_index < end for start, end in protected for exit_index in exits):
        return None
    return tuple((exit_index, tuple(sorted(live_locals(code, exit_index)))) for exit_index in sorted(exits))


class LoopExit:
    """Called where a loop's resume function leaves the loop, with the frame's
    ``locals()``: continues in the resume function of the code after the loop, made for
    the locals that are bound at that point (a local the loop may or may not have
    assigned stays unbound, as it is in the eager frame)."""

    def __init__(self, resume_functions, hook, code, index: int, names: tuple, f_globals, cells):
        self.resume_functions, self.hook = resume_functions, hook
        self.code, self.index, self.names = code, index, names
        self.f_globals, self.cells = f_globals, cells

    def __call__(self, frame_locals: dict):
        names = tuple(name for name in self.names if name in frame_locals)
        fn = self.resume_functions.get(self.code, self.index, (), names, self.f_globals, self.cells)
        if self.hook is not None:
            self.hook.instrument(fn)
        return fn(*[frame_locals[name] for name in names])
