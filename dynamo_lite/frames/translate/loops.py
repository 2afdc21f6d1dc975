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

NOTE: [graph breaks in comprehensions] 3.12+ inline a comprehension into the frame: its
``GET_ITER`` and ``FOR_ITER`` have the loop variables' saved values and the collection
being built between them (``for_loops`` reads which). It is a loop like the others: a
break inside rewinds to its ``GET_ITER``, the comprehension runs eagerly in the loop's
resume function, and at its end (the exhausted ``FOR_ITER``) the stack it leaves (the
values below the iterable, the saved loop variables, a NULL for one that was unbound,
and the collection) is stored in locals and handed to the resume function of the code
after it, which puts the loop variables back and compiles. Resuming inside the
comprehension instead would guard the iterator's position and the list's length: a
recompile per item. (3.11 calls the comprehension's own function: a break inside is a
break at that call.)
"""
from __future__ import annotations

import dis
from functools import lru_cache

from ..bytecode import compat
from ..bytecode.liveness import live_locals
from ..bytecode.resume import bind, exit_stack_names, indexed_instructions
from .exceptions import in_try_block

_JUMPS = frozenset(compat.UNCONDITIONAL_JUMPS) | frozenset(compat.CONDITIONAL_JUMPS)
_STOPS = ("RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE")


#: What 3.12+ put between the ``GET_ITER`` and the ``FOR_ITER`` of an inlined
#: comprehension: save the loop variables (``LOAD_FAST_AND_CLEAR``), then build the
#: collection under the iterator (NOTE: [graph breaks in comprehensions]).
_COMPREHENSION_SETUP = frozenset(("LOAD_FAST_AND_CLEAR", "SWAP", "BUILD_LIST", "BUILD_SET", "BUILD_MAP"))


@lru_cache(maxsize=512)
def for_loops(code) -> tuple:
    """``(get_iter, for_iter, last, kept)`` of each for-loop of ``code`` whose iterator is
    made right before it: instruction indices (``last``: its last backward jump), and the
    values it keeps below its iterator, bottom first: none for a for-statement; for an
    inlined comprehension, the names of the loop variables it saved and "" for the
    collection it builds."""
    instructions, index_of_offset = indexed_instructions(code)
    last_jump: dict[int, int] = {}
    for index, instruction in enumerate(instructions):
        if instruction.opname in _JUMPS:
            target = index_of_offset[instruction.argval]
            if target < index:
                last_jump[target] = index
    loops = []
    for index, instruction in enumerate(instructions):
        if instruction.opname != "FOR_ITER" or index not in last_jump:
            continue
        get_iter = index - 1
        while get_iter > 0 and instructions[get_iter].opname in _COMPREHENSION_SETUP:
            get_iter -= 1
        if get_iter >= 0 and instructions[get_iter].opname == "GET_ITER":
            loops.append((get_iter, index, last_jump[index], _kept(instructions[get_iter + 1:index])))
    return tuple(loops)


def _kept(setup: list) -> tuple:
    """What a comprehension's ``setup`` instructions leave below its iterator (see for_loops)."""
    stack = [None]  # the iterator
    for ins in setup:
        if ins.opname == "SWAP":
            stack[-1], stack[-ins.arg] = stack[-ins.arg], stack[-1]
        else:
            stack.append(ins.argval if ins.opname == "LOAD_FAST_AND_CLEAR" else "")
    return tuple(stack[:-1])


def loop_entry(tx, index: int, reason):
    """The snapshot at the head of the outermost for-loop around instruction ``index`` of
    ``tx``'s code that the translation went through, or None (also for an error of the
    program: the frame ends there, whatever loop it is in)."""
    if getattr(reason, "user_error", False) and not in_try_block(tx.exception_handlers, index):
        return None
    for get_iter, for_iter, last, _ in for_loops(tx.code):
        if for_iter <= index <= last and get_iter in tx.loop_heads:
            return tx.loop_heads[get_iter]
    return None


def loop_kept(code, get_iter: int) -> tuple:
    """What the loop starting at ``get_iter`` keeps below its iterator (see for_loops)."""
    return next(loop for loop in for_loops(code) if loop[0] == get_iter)[3]


def loop_exits(code, get_iter: int) -> tuple | None:
    """Where the loop starting at ``get_iter`` hands over to the code after it: ``(index,
    resume index, pops)`` for the target of an exhausted ``FOR_ITER`` and of each jump out
    of the body; ``pops`` is 1 where the loop's iterator is still on the stack (3.12+ pop
    it at a ``break``'s target), and the code after the loop resumes past that
    ``POP_TOP``. What the loop keeps on the stack (``for_loops``) goes to the code after
    it: an inlined comprehension's collection and the loop variables it saved, which that
    code restores. None when the code after the loop must stay in the loop's resume function:
    an exit inside a try or with block (an error there would meet the handler twice), or
    another stack at an exit."""
    instructions, index_of_offset = indexed_instructions(code)
    loops = for_loops(code)
    _, for_iter, last, kept = next(loop for loop in loops if loop[0] == get_iter)
    exhausted = index_of_offset[instructions[for_iter].argval] + compat.FOR_ITER_EXIT_SKIP
    entries = getattr(dis.Bytecode(code), "exception_entries", ())
    # A comprehension's cleanup handler (its own or a nested one's) restores the loop
    # variables and raises again: it never leads to the code after the loop.
    cleanups = {i for g, f, _, k in loops if k and get_iter <= g <= last for i in range(g + 1, f)}
    entries = [e for e in entries if index_of_offset[e.start] not in cleanups]
    depths = _stack_depths(instructions, index_of_offset, entries, for_iter, last, len(kept))
    exits = {exhausted: len(kept)}
    exits.update((index, depth) for index, depth in depths.items() if index > last and index != exhausted)
    protected = [(index_of_offset[e.start], index_of_offset.get(e.end, len(instructions))) for e in entries]
    found = []
    for index, depth in sorted(exits.items()):
        pops = 1 if not kept and depth == 1 and instructions[index].opname == "POP_TOP" else 0
        if depth - pops != len(kept) or any(start <= index < end for start, end in protected):
            return None
        found.append((index, index + pops, pops))
    return tuple(found)


def _stack_depths(instructions, index_of_offset, entries, for_iter: int, last: int, kept: int) -> dict:
    """Stack depth before each instruction reachable from a loop's body (the ``kept``
    values below the iterator, and the iterator, count), not following paths past the loop."""
    depths: dict[int, int] = {}
    pending = [(for_iter + 1, kept + 2)]  # the iterator and the item FOR_ITER pushed
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
    assigned stays unbound, as it is in the eager frame), over the same cells; the stack
    left at the exit (of ``stack_layout``) arrives in the locals ``exit_stack_names``."""

    def __init__(self, resume_functions, hook, code, index: int, names: tuple, f_globals, stack_layout: tuple = ()):
        self.resume_functions, self.hook = resume_functions, hook
        self.code, self.index, self.names = code, index, names
        self.f_globals = f_globals
        self.stack_layout = stack_layout

    def __call__(self, frame_locals: dict, cells: tuple):
        names = tuple(name for name in self.names if name in frame_locals)
        code = self.resume_functions.get(self.code, self.index, self.stack_layout, names)
        running = self.hook.instrument_code(code) if self.hook is not None else None
        stack = [frame_locals[name] for name in exit_stack_names(self.stack_layout)]
        return bind(running or code, self.f_globals, cells)(*stack, *[frame_locals[name] for name in names])
