"""CPython 3.11–3.13 bytecode differences, as tables read off the running interpreter.

The frame hook's tables come first, the symbolic translator's after them (calling
convention, loop exits, conditional jumps, instructions a graph break can run eagerly).

Every choice here is made once, at import, from what the running interpreter's opcode
table holds; callers never look at ``sys.version_info``. Pseudo-instructions (numbered
from 256 in 3.12+, e.g. ``LOAD_METHOD`` or 3.13's ``LOAD_CLOSURE``) do not count as
available: the ``bytecode`` library accepts only real opcodes.
"""
from __future__ import annotations

import dis
import inspect
import opcode
import operator
from dataclasses import dataclass

from bytecode import FreeVar, Instr

_FIRST_PSEUDO_OPCODE = 256


def has_opcode(name: str) -> bool:
    """True if ``name`` is a real (not pseudo) opcode of the running interpreter."""
    return opcode.opmap.get(name, _FIRST_PSEUDO_OPCODE) < _FIRST_PSEUDO_OPCODE


def first_opcode(*names: str) -> str:
    """The first of ``names`` that is a real opcode here (candidates listed oldest first)."""
    for name in names:
        if has_opcode(name):
            return name
    raise RuntimeError(f"none of the opcodes {names} exists in this Python")


# Instructions that set up a frame before its first line runs; the prologue goes after them.
SETUP_OPCODES = frozenset(name for name in ("COPY_FREE_VARS", "MAKE_CELL", "RESUME") if has_opcode(name))

# Code flags of functions whose call creates a generator-like object instead of running the
# body: the hook never instruments them.
GENERATOR_FLAGS = (
    inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE
)

# 3.11 has direction-specific conditional jumps; 3.12+ only the plain names.
POP_JUMP_IF_NONE = first_opcode("POP_JUMP_FORWARD_IF_NONE", "POP_JUMP_IF_NONE")
POP_JUMP_IF_TRUE = first_opcode("POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_IF_TRUE")

# Loading a cell object itself (not its contents): LOAD_CLOSURE up to 3.12; in 3.13 it is a
# pseudo-instruction and LOAD_FAST on the cell's slot does the same.
LOAD_CELL = first_opcode("LOAD_CLOSURE", "LOAD_FAST")

# 3.12 folded LOAD_METHOD into LOAD_ATTR, whose argument became (is_method, name).
LOAD_ATTR_HAS_METHOD_FLAG = not has_opcode("LOAD_METHOD")
# Zero-argument super() before LOAD_SUPER_ATTR (3.11) finds __class__ and self by position in
# the calling frame's locals, which a resume function lays out differently.
SUPER_READS_THE_FRAME = not has_opcode("LOAD_SUPER_ATTR")


def load_attr(name: str, *, location=None) -> Instr:
    """``LOAD_ATTR name`` (plain attribute load, not the method form)."""
    arg = (False, name) if LOAD_ATTR_HAS_METHOD_FLAG else name
    return Instr("LOAD_ATTR", arg, location=location)


def load_cell(name: str, *, location=None) -> Instr:
    """Push the cell object of free variable ``name``."""
    return Instr(LOAD_CELL, FreeVar(name), location=location)


@dataclass(frozen=True)
class CallConvention:
    """How a call of a callable with positional arguments is spelled.

    Attributes:
        marker: an opcode that exists exactly in the versions using this convention.
        null_after_callable: 3.13 pushes the callable, then NULL; 3.11/3.12 NULL first.
        precall: 3.11 needs ``PRECALL n`` before ``CALL n``.
    """

    marker: str
    null_after_callable: bool
    precall: bool


# Most specific marker first; the last row is the fallback every supported version has.
CALL_CONVENTIONS = (
    CallConvention(marker="PRECALL", null_after_callable=False, precall=True),  # 3.11
    CallConvention(marker="CALL_KW", null_after_callable=True, precall=False),  # 3.13
    CallConvention(marker="CALL", null_after_callable=False, precall=False),  # 3.12
)
CALL_CONVENTION = next(conv for conv in CALL_CONVENTIONS if has_opcode(conv.marker))


def call_const(fn, arg_instrs: list[Instr], nargs: int, *, location=None) -> list[Instr]:
    """Instructions calling the constant ``fn`` with the ``nargs`` values ``arg_instrs`` push."""
    return call_pushed([Instr("LOAD_CONST", fn, location=location)], arg_instrs, nargs, location=location)


def call_pushed(callee_instrs: list[Instr], arg_instrs: list[Instr], nargs: int, *, location=None) -> list[Instr]:
    """Instructions calling the one value ``callee_instrs`` push (a function made at run
    time) with the ``nargs`` values ``arg_instrs`` push."""
    null = [Instr("PUSH_NULL", location=location)]
    callee = list(callee_instrs) + null if CALL_CONVENTION.null_after_callable else null + list(callee_instrs)
    call = [Instr("CALL", nargs, location=location)]
    if CALL_CONVENTION.precall:
        call.insert(0, Instr("PRECALL", nargs, location=location))
    return callee + list(arg_instrs) + call


def call_with_receiver(fn, arg_instrs: list[Instr], nargs: int, *, location=None) -> list[Instr]:
    """Call ``fn`` (a constant, or the instruction that loads it) as ``fn(receiver, *args)``
    where ``receiver`` is on the stack.

    Every supported version reads ``[callable, self, args...]`` under CALL as a method
    call (3.11/3.12: a non-NULL slot below the callable is the method; 3.13: the slot
    above the callable is self), so pushing ``fn`` and swapping it under the receiver
    needs no version-specific order.
    """
    call = [Instr("CALL", nargs, location=location)]
    if CALL_CONVENTION.precall:
        call.insert(0, Instr("PRECALL", nargs, location=location))
    load = fn if isinstance(fn, Instr) else Instr("LOAD_CONST", fn, location=location)
    swap = [load, Instr("SWAP", 2, location=location)]
    return swap + list(arg_instrs) + call


def _available(names) -> tuple:
    """The names among ``names`` that are real opcodes here."""
    return tuple(name for name in names if has_opcode(name))


def _available_rows(table: dict) -> dict:
    """The rows of ``table`` (keyed by opcode name) whose opcode exists here."""
    return {name: row for name, row in table.items() if has_opcode(name)}

# ---------------------------------------------------------------------------------------
# Tables of the symbolic translator (handlers/, graph_break.py).

#: How CALL finds its callable: "null_first" = [NULL|callable, callable|self, args...]
#: (3.11, 3.12), "callable_first" = [callable, self|NULL, args...] (3.13).
CALL_LAYOUT = "callable_first" if CALL_CONVENTION.null_after_callable else "null_first"


def _for_iter_exit_skip() -> int:
    """Instructions the interpreter skips at an exhausted FOR_ITER's target: none (3.11),
    END_FOR (3.12), END_FOR + POP_TOP (3.13). Read off a compiled loop, not the version."""
    instructions = [ins.opname for ins in dis.get_instructions(compile("for a in b: pass", "", "exec"))]
    if "END_FOR" not in instructions:
        return 0
    after = instructions[instructions.index("END_FOR") + 1]
    return 2 if after == "POP_TOP" else 1


FOR_ITER_EXIT_SKIP = _for_iter_exit_skip()

#: LOAD_GLOBAL / LOAD_ATTR encode "also push NULL / load a method" in the low bit of arg.
LOAD_ATTR_METHOD_FLAG = LOAD_ATTR_HAS_METHOD_FLAG

#: Conditional jumps, by name: (pops the value, jump when this is true of it).
#: 3.11 spells them with FORWARD/BACKWARD; JUMP_IF_*_OR_POP keep the value when jumping.
CONDITIONAL_JUMPS = _available_rows({
        "POP_JUMP_IF_TRUE": ("pop", "truthy"),
        "POP_JUMP_IF_FALSE": ("pop", "falsy"),
        "POP_JUMP_IF_NONE": ("pop", "none"),
        "POP_JUMP_IF_NOT_NONE": ("pop", "not_none"),
        "POP_JUMP_FORWARD_IF_TRUE": ("pop", "truthy"),
        "POP_JUMP_FORWARD_IF_FALSE": ("pop", "falsy"),
        "POP_JUMP_FORWARD_IF_NONE": ("pop", "none"),
        "POP_JUMP_FORWARD_IF_NOT_NONE": ("pop", "not_none"),
        "POP_JUMP_BACKWARD_IF_TRUE": ("pop", "truthy"),
        "POP_JUMP_BACKWARD_IF_FALSE": ("pop", "falsy"),
        "POP_JUMP_BACKWARD_IF_NONE": ("pop", "none"),
        "POP_JUMP_BACKWARD_IF_NOT_NONE": ("pop", "not_none"),
        "JUMP_IF_TRUE_OR_POP": ("keep_if_jump", "truthy"),
        "JUMP_IF_FALSE_OR_POP": ("keep_if_jump", "falsy"),
})

#: A conditional jump copied into new code whose target lies after it (a graph break's
#: branch): 3.11's backward spellings cannot jump forward, so they become forward ones.
FORWARD_SPELLING = {name: name.replace("BACKWARD", "FORWARD")
                    for name in CONDITIONAL_JUMPS if "BACKWARD" in name and has_opcode(name.replace("BACKWARD", "FORWARD"))}

UNCONDITIONAL_JUMPS = _available(("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP"))

#: Instructions that only set up a frame or do nothing observable to the translator.
NO_OPS = _available(("NOP", "RESUME", "CACHE", "EXTENDED_ARG", "MAKE_CELL", "COPY_FREE_VARS"))

#: CALL_INTRINSIC_1 operands (3.12+) by name without the ``INTRINSIC_`` prefix, read from
#: the interpreter's own table (the numbering is not ours to guess: 5 is UNARY_POSITIVE).
INTRINSIC_1 = {index: name.removeprefix("INTRINSIC_")
               for index, name in enumerate(getattr(opcode, "_intrinsic_1_descs", ()))}

#: Names of 3.13's combined load/store instructions and their parts.
SUPERINSTRUCTIONS = _available_rows({
        "LOAD_FAST_LOAD_FAST": ("LOAD_FAST", "LOAD_FAST"),
        "STORE_FAST_STORE_FAST": ("STORE_FAST", "STORE_FAST"),
        "STORE_FAST_LOAD_FAST": ("STORE_FAST", "LOAD_FAST"),
})

#: Instructions a graph break can run eagerly on their own inside transformed code:
#: name -> (arg -> (values popped, values pushed)). Calls pop the NULL/self slot too.
EAGER_STACK_EFFECTS = _available_rows({
        "CALL": lambda arg: (arg + 2, 1),
        "CALL_KW": lambda arg: (arg + 3, 1),
        "CALL_FUNCTION_EX": lambda arg: (3 + (arg & 1), 1),
        "BINARY_OP": lambda arg: (2, 1),
        "BINARY_SUBSCR": lambda arg: (2, 1),
        "COMPARE_OP": lambda arg: (2, 1),
        "CONTAINS_OP": lambda arg: (2, 1),
        "STORE_ATTR": lambda arg: (2, 0),
        "STORE_SUBSCR": lambda arg: (3, 0),
        "STORE_GLOBAL": lambda arg: (1, 0),
        "DELETE_SUBSCR": lambda arg: (2, 0),
        "UNARY_NEGATIVE": lambda arg: (1, 1),
        "UNARY_INVERT": lambda arg: (1, 1),
        "UNARY_NOT": lambda arg: (1, 1),
        "FORMAT_SIMPLE": lambda arg: (1, 1),
        "FORMAT_WITH_SPEC": lambda arg: (2, 1),
        "FORMAT_VALUE": lambda arg: (1 + bool(arg & 0x04), 1),
        "GET_ITER": lambda arg: (1, 1),
        "UNPACK_SEQUENCE": lambda arg: (1, arg),
        "BEFORE_WITH": lambda arg: (1, 2),
})

#: WITH_EXCEPT_START calls the ``__exit__`` this deep in the stack (above it: the offset
#: to restore, the previous exception, the exception).
WITH_EXCEPT_START_EXIT_DEPTH = 4

#: Instructions that only prepare the CALL that follows them (run together with it).
CALL_COMPANIONS = _available(("KW_NAMES", "PRECALL"))

#: SEND of a finished sub-iterator: 3.12+ keeps the iterator below its return value (END_SEND
#: drops it at the jump target); 3.11 pops both.
SEND_KEEPS_ITERATOR_ON_RETURN = has_opcode("END_SEND")

#: The ``yield from`` opcodes that exist here (END_SEND: 3.12+).
YIELD_FROM_END = _available(("END_SEND",))

#: 3.13's conditional jumps need an exact bool: TO_BOOL converts the tested value first.
BRANCH_NEEDS_TO_BOOL = has_opcode("TO_BOOL")

#: BINARY_OP's argument -> (its symbol, the operator it applies). CPython's NB_* order, the
#: same in 3.11-3.13: the plain operators, then their in-place forms (a test checks this
#: table against compiled code).
BINARY_OPERATORS = dict(enumerate((
        ("+", operator.add), ("&", operator.and_), ("//", operator.floordiv), ("<<", operator.lshift),
        ("@", operator.matmul), ("*", operator.mul), ("%", operator.mod), ("|", operator.or_),
        ("**", operator.pow), (">>", operator.rshift), ("-", operator.sub), ("/", operator.truediv),
        ("^", operator.xor),
        ("+=", operator.iadd), ("&=", operator.iand), ("//=", operator.ifloordiv), ("<<=", operator.ilshift),
        ("@=", operator.imatmul), ("*=", operator.imul), ("%=", operator.imod), ("|=", operator.ior),
        ("**=", operator.ipow), (">>=", operator.irshift), ("-=", operator.isub), ("/=", operator.itruediv),
        ("^=", operator.ixor),
)))
