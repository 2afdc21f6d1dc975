"""``yield from`` inside a generator being inlined: the sub-iterator is driven one item at a time."""
from __future__ import annotations

from ...bytecode import compat
from ...errors import Unsupported
from ...tracing.variables.base import ConstantVariable
from ...tracing.variables.builtins import BUILTIN_HANDLERS
from ...tracing.variables.iterators import GeneratorVariable, IteratorVariable
from .registry import handles


@handles("GET_YIELD_FROM_ITER")
def get_yield_from_iter(tx, ins):
    value = tx.stack[-1]
    if not isinstance(value, IteratorVariable):  # a generator or iterator is delegated to as it is
        tx.stack[-1] = BUILTIN_HANDLERS[iter](tx, value)


@handles("SEND")
def send(tx, ins):
    """Resume the sub-iterator with the value on top (only ``None``, as ``next()`` sends):
    its next item replaces that value; once it is done, its return value is pushed and the
    code jumps past the loop (3.12+ leaves the sub-iterator for END_SEND to drop)."""
    sent = tx.stack[-1]
    iterator = tx.stack[-2]
    if not (sent.is_python_constant() and sent.as_python_constant() is None):
        raise Unsupported("gen.send() of a value into a generator that delegates with 'yield from'")
    if not isinstance(iterator, IteratorVariable):
        raise Unsupported("'yield from' over a value the translator cannot iterate")
    item = iterator.next_item(tx)
    if item is not None:
        tx.stack[-1] = item
        return
    returned = iterator.child.returned if isinstance(iterator, GeneratorVariable) else None
    tx.pop()
    if not compat.SEND_KEEPS_ITERATOR_ON_RETURN:
        tx.pop()
    tx.push(returned if returned is not None else ConstantVariable(None))
    tx.jump_to(ins.argval)


@handles(*compat.YIELD_FROM_END)
def end_send(tx, ins):
    value = tx.pop()
    tx.pop()
    tx.push(value)
