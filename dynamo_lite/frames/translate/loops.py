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
from functools import lru_cache

from ..bytecode import compat
from ..bytecode.liveness import live_locals
from ..bytecode.resume import bind, indexed_instructions
from .exceptions import in_try_block

_JUMPS = frozenset(compat.UNCONDITIONAL_JUMPS) | frozenset(compat.CONDITIONAL_JUMPS)
_STOPS = ("RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE")


@lru_cache(maxsize=512)
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
    """Where the loop starting at ``get_iter`` (with nothing on the stack below its
    iterable) hands over to the code after it: ``(index, resume index, pops)`` for the
    target of an exhausted ``FOR_ITER`` and of each jump out of the body; ``pops`` is 1
    where the loop's iterator is still on the stack (3.12+ pop it at a ``break``'s target),
    and the code after the loop resumes past that ``POP_TOP``. None when the code after
    the loop must stay in the loop's resume function: an exit inside a try or with block
    (an error there would meet the handler twice), or another stack at an exit."""
    instructions, index_of_offset = indexed_instructions(code)
    _, for_iter, last = next(loop for loop in for_loops(code) if loop[0] == get_iter)
    exhausted = index_of_offset[instructions[for_iter].argval] + compat.FOR_ITER_EXIT_SKIP
    entries = getattr(dis.Bytecode(code), "exception_entries", ())
    depths = _stack_depths(instructions, index_of_offset, entries, for_iter, last)
    exits = {exhausted: 0}
    exits.update((index, depth) for index, depth in depths.items() if index > last and index != exhausted)
    protected = [(index_of_offset[e.start], index_of_offset.get(e.end, len(instructions))) for e in entries]
    found = []
    for index, depth in sorted(exits.items()):
        pops = 1 if depth == 1 and instructions[index].opname == "POP_TOP" else 0
        if depth != pops or any(start <= index < end for start, end in protected):
            return None
        found.append((index, index + pops, pops))
    return tuple(found)


def _stack_depths(instructions, index_of_offset, entries, for_iter: int, last: int) -> dict:
    """Stack depth before each instruction reachable from a loop's body (the iterator
    counts one), not following paths past the loop."""
    depths: dict[int, int] = {}
    pending = [(for_iter + 1, 2)]  # the iterator and the item FOR_ITER pushed
    while pending:
        index, depth = pending.pop()
        if index in depths or index >= len(instructions):
            continue
        depths[index] = depth
        if index > last:
            continue  # an exit
        ins = instructions[index]
        for entry in entries:
            if index_of_offset[entry.start] <= index < index_of_offset.get(entry.end, len(instructions)):
                pending.append((index_of_offset[entry.target], entry.depth + 1 + int(entry.lasti)))
        if ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs:
            if index != for_iter:
                pending.append((index_of_offset[ins.argval], depth + dis.stack_effect(ins.opcode, ins.arg, jump=True)))
            if ins.opname in compat.UNCONDITIONAL_JUMPS:
                continue
        if ins.opname not in _STOPS:
            pending.append((index + 1, depth + dis.stack_effect(ins.opcode, ins.arg, jump=False)))
    return depths


class LoopExit:
    """Called where a loop's resume function leaves the loop, with the frame's
    ``locals()`` and cells: continues in the resume function of the code after the loop,
    made for the locals that are bound at that point (a local the loop may or may not have
    assigned stays unbound, as it is in the eager frame), over the same cells."""

    def __init__(self, resume_functions, hook, code, index: int, names: tuple, f_globals):
        self.resume_functions, self.hook = resume_functions, hook
        self.code, self.index, self.names = code, index, names
        self.f_globals = f_globals

    def __call__(self, frame_locals: dict, cells: tuple):
        names = tuple(name for name in self.names if name in frame_locals)
        code = self.resume_functions.get(self.code, self.index, (), names)
        running = self.hook.instrument_code(code) if self.hook is not None else None
        return bind(running or code, self.f_globals, cells)(*[frame_locals[name] for name in names])
