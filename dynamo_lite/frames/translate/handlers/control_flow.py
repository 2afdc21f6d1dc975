"""Jumps, loops (unrolled), with statements, generators being inlined."""
from __future__ import annotations

from ...bytecode import compat
from ...errors import Unsupported

from ...tracing.variables.base import ConstantVariable
from ...tracing.variables.builtins import BUILTIN_HANDLERS
from ...tracing.variables.iterators import IteratorVariable
from ..scan_loop import try_scan
from .registry import handles

_TESTS = {
    "truthy": lambda tx, value: value.truth(tx),
    "falsy": lambda tx, value: not value.truth(tx),
    "none": lambda tx, value: value.is_python_constant() and value.as_python_constant() is None,
    "not_none": lambda tx, value: not (value.is_python_constant() and value.as_python_constant() is None),
}


@handles(*compat.UNCONDITIONAL_JUMPS)
def jump(tx, ins):
    tx.jump_to(ins.argval)


@handles(*compat.CONDITIONAL_JUMPS)
def conditional_jump(tx, ins):
    mode, test = compat.CONDITIONAL_JUMPS[ins.opname]
    value = tx.stack[-1]
    if test in ("none", "not_none") and not value.is_python_constant():
        taken = test == "not_none"  # a non-constant value (tensor, module ...) is never None
    else:
        taken = _TESTS[test](tx, value)
    if mode == "pop" or not taken:
        tx.pop()
    if taken:
        tx.jump_to(ins.argval)


@handles("GET_ITER")
def get_iter(tx, ins):
    tx.push(BUILTIN_HANDLERS[iter](tx, tx.pop()))


@handles("FOR_ITER")
def for_iter(tx, ins):
    iterator = tx.stack[-1]
    if not isinstance(iterator, IteratorVariable):
        raise Unsupported("a for loop over a value the translator cannot unroll")
    if getattr(iterator, "scan_length", None) is not None and try_scan(tx, ins, iterator):
        return  # NOTE: [loops traced once]
    item = iterator.next_item(tx)
    if item is not None:
        tx.push(item)
        return
    tx.pop()
    tx.jump_to(ins.argval)
    tx.pc += compat.FOR_ITER_EXIT_SKIP


@handles("END_FOR")
def end_for(tx, ins):
    # Reached only by falling through, which FOR_ITER never does; keep the stack honest.
    tx.pop()


@handles("BEFORE_WITH")
def before_with(tx, ins):
    exit_fn, entered = tx.pop().enter_with(tx)  # NOTE: [user context managers]
    tx.push(exit_fn)
    tx.push(entered)


@handles("GET_LEN")
def get_len(tx, ins):
    tx.push(BUILTIN_HANDLERS[len](tx, tx.stack[-1]))




@handles("RETURN_GENERATOR")
def return_generator(tx, ins):
    # A generator being inlined (InstructionTranslator.inline_generator): the POP_TOP
    # that follows discards this value, as it discards the new generator object.
    tx.push(ConstantVariable(None))


@handles("YIELD_VALUE")
def yield_value(tx, ins):
    tx.yielded = tx.pop()  # the generator pauses here (GeneratorVariable.next_item)
    tx.push(ConstantVariable(None))  # what the consumer sends back: next() sends None
