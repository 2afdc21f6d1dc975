"""Translator-side CPython 3.11/3.12/3.13 differences, as data (merged into compat later)."""
from __future__ import annotations

import sys

from .compat import has_opcode


class _RealOpcodes:
    """``name in _OPS``: a real (not pseudo) opcode of this interpreter."""

    def __contains__(self, name) -> bool:
        return has_opcode(name)


_OPS = _RealOpcodes()

#: How CALL finds its callable: "null_first" = [NULL|callable, callable|self, args...]
#: (3.11, 3.12), "callable_first" = [callable, self|NULL, args...] (3.13).
CALL_LAYOUT = "callable_first" if sys.version_info >= (3, 13) else "null_first"

#: Instructions to skip at a FOR_ITER target when the iterator is exhausted: the
#: interpreter jumps over END_FOR (3.12) or END_FOR + POP_TOP (3.13) by itself.
FOR_ITER_EXIT_SKIP = 0 if "END_FOR" not in _OPS else (2 if sys.version_info >= (3, 13) else 1)

#: LOAD_GLOBAL / LOAD_ATTR encode "also push NULL / load a method" in the low bit of arg.
LOAD_ATTR_METHOD_FLAG = "LOAD_METHOD" not in _OPS

#: Conditional jumps, by name: (pops the value, jump when this is true of it).
#: 3.11 spells them with FORWARD/BACKWARD; JUMP_IF_*_OR_POP keep the value when jumping.
CONDITIONAL_JUMPS = {
    name: spec
    for name, spec in {
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
    }.items()
    if name in _OPS
}

UNCONDITIONAL_JUMPS = tuple(
    name
    for name in ("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP")
    if name in _OPS
)

#: Instructions that only set up a frame or do nothing observable to the translator.
NO_OPS = tuple(
    name for name in ("NOP", "RESUME", "CACHE", "EXTENDED_ARG", "MAKE_CELL", "COPY_FREE_VARS")
    if name in _OPS
)

#: CALL_INTRINSIC_1 operands (3.12+) the translator understands.
INTRINSIC_1 = {3: "UNARY_POSITIVE", 6: "LIST_TO_TUPLE"}

#: Names of 3.13's combined load/store instructions and their parts.
SUPERINSTRUCTIONS = {
    name: parts
    for name, parts in {
        "LOAD_FAST_LOAD_FAST": ("LOAD_FAST", "LOAD_FAST"),
        "STORE_FAST_STORE_FAST": ("STORE_FAST", "STORE_FAST"),
        "STORE_FAST_LOAD_FAST": ("STORE_FAST", "LOAD_FAST"),
    }.items()
    if name in _OPS
}

#: Instructions a graph break can run eagerly on their own inside transformed code:
#: name -> (arg -> (values popped, values pushed)). Calls pop the NULL/self slot too.
EAGER_STACK_EFFECTS = {
    name: effect
    for name, effect in {
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
    }.items()
    if name in _OPS
}

#: Instructions that only prepare the CALL that follows them (run together with it).
CALL_COMPANIONS = tuple(name for name in ("KW_NAMES", "PRECALL") if name in _OPS)

#: 3.13's conditional jumps need an exact bool: TO_BOOL converts the tested value first.
BRANCH_NEEDS_TO_BOOL = "TO_BOOL" in _OPS
