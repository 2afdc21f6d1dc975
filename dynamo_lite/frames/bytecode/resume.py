"""Resume functions: continue an original code object at an instruction after a graph break."""
from __future__ import annotations

import dis
import types
from dataclasses import dataclass

from bytecode import Bytecode, CellVar, FreeVar, Instr, Label

from . import compat
from ..errors import Unsupported

STACK_PREFIX = "__dl_stack"
EXIT_STACK_PREFIX = "__dl_exit_stack"
_STUB_STACK = 4  # stack slots a loop exit's stub and PUSH_EXC_INFO use beyond the original's

#: What the prologue does to an argument after loading it: an iterator's rest is a tuple
#: again made an iterator; inside an except clause, the exception it handles becomes the
#: current one again, which pushes the one current before (the slot's value) on top of it.
_AFTER_LOAD = {"iter": ("GET_ITER",), "exc_prev": ("PUSH_EXC_INFO", "POP_TOP")}


@dataclass(frozen=True)
class ResumeOrigin:
    """Where a resume function's instructions come from: ``code``'s instruction ``index``
    is the resume function's instruction ``index + index_shift``."""

    code: types.CodeType
    index_shift: int
    offset: int  # bytecode offset of the resume instruction in ``code``


def closure_names(code) -> tuple:
    """The free variables of every resume function of ``code``: its own free variables,
    then its cell variables (NOTE: [cells across graph breaks])."""
    return code.co_freevars + code.co_cellvars


def bind(code, f_globals: dict, closure: tuple) -> types.FunctionType:
    """The resume function running ``code`` over the cells ``closure`` (the running
    frame's, in ``closure_names`` order): made when it is called, per call."""
    return types.FunctionType(code, f_globals, code.co_name, None, closure or None)


def _cells_made_free(bc: Bytecode) -> int:
    """Turn ``bc``'s cell variables into free variables (after its own), in place.

    NOTE: [cells across graph breaks] A resume function must share the frame's cells, not
    copies: a closure made before the break and called after it sees later assignments,
    one made after it sees earlier ones, and a ``nonlocal`` write on either side reaches
    the other. The interpreter can only put an existing cell into a frame as a free
    variable (MAKE_CELL always makes a new one), so a resume function has no cell
    variables: the original's become free variables, and the code calling it makes the
    function at run time (``bind``) over the running frame's cells, the transformed
    code's own (its free variables' cells arrive as arguments; its cell variables' cells
    are made once, holding their contents, and shared with every closure rebuilt there).
    Returns how many setup instructions the change added (negative: removed).
    """
    cells = set(bc.cellvars)
    if not cells:
        return 0
    if any(isinstance(item, Instr) and item.name == "LOAD_FAST_AND_CLEAR" and _names_cell(item.arg, cells)
           for item in bc):
        # (3.12+ inlined comprehensions whose variable a closure captures save the outer cell
        # and make a fresh one per run of their body: a free variable cannot be replaced)
        raise Unsupported("a graph break in a frame whose comprehension makes cells as it runs "
                          "(a closure over its loop variable)")
    for item in bc:
        if not isinstance(item, Instr):
            continue
        arg = item.arg
        if isinstance(arg, CellVar):
            item.arg = FreeVar(arg.name)
        elif isinstance(arg, str) and arg in cells and (item.opcode in dis.haslocal or item.opcode in dis.hasfree):
            item.arg = FreeVar(arg)  # 3.13 spells an argument's cell by the argument's name
        elif isinstance(arg, tuple) and cells.intersection(a for a in arg if isinstance(a, str)) \
                and item.opcode in dis.haslocal:
            raise Unsupported(f"a graph break in code whose {item.name} reads a cell")
    made = [i for i, item in enumerate(bc) if isinstance(item, Instr) and item.name == "MAKE_CELL"]
    if made != list(range(made[0], made[0] + len(made))) or len(made) != len(cells):
        # (3.12's inlined comprehensions make a fresh cell per run of their body)
        raise Unsupported("a graph break in code that makes cells as it runs (a comprehension's closure)")
    location = bc[made[0]].location
    for i in reversed(made):
        del bc[i]
    bc.freevars = list(bc.freevars) + list(bc.cellvars)
    bc.cellvars = []
    copy = next((item for item in bc if isinstance(item, Instr) and item.name == "COPY_FREE_VARS"), None)
    if copy is not None:
        copy.arg = len(bc.freevars)
        return -len(made)
    bc.insert(0, Instr("COPY_FREE_VARS", len(bc.freevars), location=location))
    return 1 - len(made)


def _names_cell(arg, cells: set) -> bool:
    return isinstance(arg, CellVar) or (isinstance(arg, str) and arg in cells)


def exit_stack_names(layout: tuple) -> list:
    """The locals a loop's exit stores the stack of ``layout`` in (not its NULLs)."""
    return [f"{EXIT_STACK_PREFIX}{i}" for i, kind in enumerate(layout) if kind != "null"]


def _stored_stack(layout: tuple, location) -> list:
    """Instructions storing a stack of ``layout`` in ``exit_stack_names(layout)``, top
    first. A NULL cannot be stored: each one stays on top (``SWAP`` brings the value under
    them up), and the function returns over them, which frees the stack as it is."""
    code, nulls = [], 0
    for i in reversed(range(len(layout))):
        if layout[i] == "null":
            nulls += 1
            continue
        if nulls:
            code.append(Instr("SWAP", nulls + 1, location=location))
        code.append(Instr("STORE_FAST", f"{EXIT_STACK_PREFIX}{i}", location=location))
    return code


def real_instructions(bc: Bytecode) -> list:
    """The Instr objects of ``bc`` in order (labels and try markers left out)."""
    return [item for item in bc if isinstance(item, Instr)]


def indexed_instructions(code) -> tuple:
    """``dis`` instructions without EXTENDED_ARG/CACHE, and offset -> index (a jump
    aimed at an EXTENDED_ARG lands on the instruction it extends)."""
    instructions, index_of_offset, pending = [], {}, []
    for ins in dis.get_instructions(code):
        if ins.opname in ("EXTENDED_ARG", "CACHE"):
            pending.append(ins.offset)
            continue
        for offset in pending:
            index_of_offset[offset] = len(instructions)
        pending.clear()
        index_of_offset[ins.offset] = len(instructions)
        instructions.append(ins)
    return instructions, index_of_offset


def dis_instructions(code) -> list:
    """``dis`` instructions matching ``real_instructions`` one to one."""
    return indexed_instructions(code)[0]


class ResumeFunctions:
    """Builds and caches resume functions, always from the original code object.

    A resume function takes the values that were on the stack (``__dl_stack0``...) and
    the live locals, pushes the stack values back and jumps to the resume instruction;
    the rest is the original bytecode. Cached by (code, instruction, stack layout, locals),
    so paths that rejoin share one function.
    """

    def __init__(self):
        self._cache: dict = {}
        self.origins: dict = {}  # resume code object -> ResumeOrigin

    def clear(self) -> None:
        self._cache.clear()
        self.origins.clear()

    def original_position(self, code, index: int) -> tuple:
        """Map instruction ``index`` of ``code`` (maybe a resume function) to the original."""
        origin = self.origins.get(code)
        if origin is None:
            return code, index
        return origin.code, index - origin.index_shift

    def offset_in(self, resume_code, index: int, running_code=None) -> int:
        """The bytecode offset of the original's instruction ``index`` in ``resume_code``,
        or in ``running_code``: the same code behind a prologue of the frame hook's."""
        own = dis_instructions(resume_code)
        running = dis_instructions(running_code) if running_code is not None else own
        return running[len(running) - len(own) + index + self.origins[resume_code].index_shift].offset

    def get(self, code, index: int, stack_layout: tuple, local_names: tuple, exits: tuple = ()) -> types.CodeType:
        """The code of ``code``'s resume function at instruction ``index``; ``bind`` makes
        the function, over the cells ``closure_names(code)`` names.

        Args:
            stack_layout: one entry per stack slot, bottom first: "value" (passed as an
                argument), "iter" (the rest of a loop's iterator, passed as a tuple and
                turned back into an iterator), "null" (a call's NULL; pushed again), or
                "exc_prev" (inside an except clause, what its POP_EXCEPT restores: the
                exception the clause handles is passed and made current again, which
                pushes the exception current before).
            local_names: the locals passed after the stack values.
            exits: ``(instruction index, pops, kept layout, handover)``: reaching that
                instruction pops ``pops`` values, stores the stack left (of that layout)
                in the locals ``exit_stack_names(kept layout)``, and returns
                ``handover(locals(), cells)`` instead (NOTE: [graph breaks in loops]).
        """
        key = (code, index, stack_layout, local_names,
               tuple((at, pops, kept, id(handover)) for at, pops, kept, handover in exits))
        entry = self._cache.get(key)
        if entry is None:
            entry = self._cache[key] = (self._build(code, index, stack_layout, local_names, exits), exits)
            # (the entry keeps the handovers the key names by id alive)
        return entry[0]

    def _build(self, code, index, stack_layout, local_names, exits=()) -> types.CodeType:
        if compat.SUPER_READS_THE_FRAME and "__class__" in code.co_freevars:
            raise Unsupported("a graph break in a method that uses zero-argument super() (on this Python, "
                              "super() reads the frame's locals by position; a resume function's differ)")
        bc = Bytecode.from_code(code, conserve_exception_block_stackdepth=True)
        instructions = real_instructions(bc)
        target = instructions[index]
        cells = closure_names(code)
        for at, pops, kept_layout, handover in exits:
            exit_instruction = instructions[at]
            location = exit_instruction.location
            # handover(locals(), (cell, ...)): the code after the loop shares the cells too
            handover_args = compat.call_const(locals, [], 0, location=location)
            handover_args += [compat.load_cell(name, location=location) for name in cells]
            handover_args.append(Instr("BUILD_TUPLE", len(cells), location=location))
            stub = [Instr("POP_TOP", location=location)] * pops + _stored_stack(kept_layout, location)
            stub += compat.call_const(handover, handover_args, 2, location=location)
            position = next(i for i, item in enumerate(bc) if item is exit_instruction)
            bc[position:position] = stub + [Instr("RETURN_VALUE", location=location)]
        label = Label()
        position = next(i for i, item in enumerate(bc) if item is target)
        bc.insert(position, label)
        stack_args = [f"{STACK_PREFIX}{i}" for i, kind in enumerate(stack_layout) if kind != "null"]
        line = target.location.lineno if target.location and target.location.lineno else code.co_firstlineno
        prologue = []
        for i, kind in enumerate(stack_layout):
            if kind == "null":
                prologue.append(Instr("PUSH_NULL", lineno=line))
            else:
                prologue.append(Instr("LOAD_FAST", f"{STACK_PREFIX}{i}", lineno=line))
                prologue.extend(Instr(name, lineno=line) for name in _AFTER_LOAD.get(kind, ()))
        prologue.append(Instr(compat.first_opcode("JUMP_FORWARD"), label, lineno=line))
        setup = 0  # the prologue goes after MAKE_CELL / COPY_FREE_VARS / RESUME
        while setup < len(instructions) and instructions[setup].name in compat.SETUP_OPCODES:
            setup += 1
        position = next(i for i, item in enumerate(bc) if item is instructions[setup])
        bc[position:position] = prologue
        added = _cells_made_free(bc)
        offset = dis_instructions(code)[index].offset
        name = f"__resume_at_{offset}_{code.co_name}"
        bc.name = name
        bc.argnames = stack_args + list(local_names)
        bc.argcount = len(bc.argnames)
        bc.kwonlyargcount = 0
        bc.posonlyargcount = 0
        bc.flags = bc.flags & ~(0x04 | 0x08)  # no *args / **kwargs in the resume signature
        # The handlers keep the stack depths of the original code: the prologue rebuilds that
        # stack, and a depth recomputed from the prologue's jump into a try block is wrong.
        try:
            new_code = bc.to_code(compute_exception_stack_depths=False)
        except RuntimeError:
            # Jumping into a handler's own protected region (a finally body run for an
            # exception), the library sizes that handler from the jump's depth, not the
            # table's. The original code's size, plus what the prologue and stubs add, fits.
            new_code = bc.to_code(stacksize=code.co_stacksize + len(stack_layout) + _STUB_STACK,
                                  compute_exception_stack_depths=False)
        # (Without recomputed depths the library sizes the stack from the normal flow only:
        # the handlers, reached through the exception table, need the original's size.)
        new_code = new_code.replace(co_qualname=f"{code.co_qualname}.<resume@{offset}>",
                                    co_stacksize=max(new_code.co_stacksize, code.co_stacksize))
        if new_code.co_freevars != cells:
            raise RuntimeError(f"resume function of {code.co_qualname}: free variables {new_code.co_freevars}, "
                               f"expected {cells}")
        self.origins[new_code] = ResumeOrigin(code, len(prologue) + added, offset)  # setup stays in front
        return new_code
