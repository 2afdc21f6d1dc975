"""``collections.deque`` made in the frame: a list variable with deque's methods and ``maxlen``."""
from __future__ import annotations

import collections

from ...errors import Unsupported, UserError
from .base import BoundMethodVariable, ConstantVariable, VariableTracker
from .containers import ListVariable
from .iterators import iterate


class DequeVariable(ListVariable):
    """A deque built by the compiled code (one from outside the frame is not modelled)."""

    def __init__(self, items, maxlen=None):
        super().__init__(items, python_class=collections.deque)
        self.maxlen = maxlen
        self._trim(from_left=True)

    def var_getattr(self, tx, name: str) -> VariableTracker:
        if name == "maxlen":
            return ConstantVariable(self.maxlen)
        if name in DEQUE_METHODS:
            return DequeMethodVariable(self, name)
        raise Unsupported(f"deque.{name}")

    def getitem(self, tx, key: VariableTracker) -> VariableTracker:
        index = key.as_python_constant()
        if not isinstance(index, int):
            raise UserError(TypeError(f"sequence index must be integer, not '{type(index).__name__}'"))
        if not -len(self.items) <= index < len(self.items):
            raise UserError(IndexError("deque index out of range"))
        return self.items[index]

    def store_item(self, tx, key, value) -> None:
        index = key.as_python_constant()
        if not isinstance(index, int) or not -len(self.items) <= index < len(self.items):
            raise UserError(IndexError("deque index out of range"))
        tx.output.side_effects.mutation(self)
        self.items[index] = value

    def _trim(self, from_left: bool) -> None:
        if self.maxlen is not None and len(self.items) > self.maxlen:
            excess = len(self.items) - self.maxlen
            self.items = self.items[excess:] if from_left else self.items[:self.maxlen]

    def reconstruct(self, cg) -> None:
        cg.call_const_on(collections.deque, [ListVariable(self.items), ConstantVariable(self.maxlen)])


def _append(tx, deque, value):
    deque.items.append(value)
    deque._trim(from_left=True)


def _appendleft(tx, deque, value):
    deque.items.insert(0, value)
    deque._trim(from_left=False)


def _extend(tx, deque, values):
    deque.items.extend(iterate(tx, values).unpack(tx))
    deque._trim(from_left=True)


def _extendleft(tx, deque, values):
    deque.items[:0] = list(reversed(iterate(tx, values).unpack(tx)))
    deque._trim(from_left=False)


def _pop(tx, deque):
    if not deque.items:
        raise UserError(IndexError("pop from an empty deque"))
    return deque.items.pop()


def _popleft(tx, deque):
    if not deque.items:
        raise UserError(IndexError("pop from an empty deque"))
    return deque.items.pop(0)


def _rotate(tx, deque, steps=None):
    n = 1 if steps is None else steps.as_python_constant()
    if deque.items and n % len(deque.items):
        n %= len(deque.items)
        deque.items[:] = deque.items[-n:] + deque.items[:-n]


def _clear(tx, deque):
    deque.items.clear()


#: deque method -> handler(tx, deque, *args) (each may change the deque).
DEQUE_METHODS = {
    "append": _append, "appendleft": _appendleft, "extend": _extend, "extendleft": _extendleft,
    "pop": _pop, "popleft": _popleft, "rotate": _rotate, "clear": _clear,
}


class DequeMethodVariable(BoundMethodVariable):
    """A bound method of a deque variable."""

    def call(self, tx, args, kwargs):
        if kwargs:
            raise UserError(TypeError(f"deque.{self.name}() takes no keyword arguments"))
        tx.output.side_effects.mutation(self.target)
        result = DEQUE_METHODS[self.name](tx, self.target, *args)
        return result if isinstance(result, VariableTracker) else ConstantVariable(None)


def make_deque(tx, iterable=None, maxlen=None):
    """``collections.deque(iterable, maxlen)``."""
    items = iterate(tx, iterable).unpack(tx) if iterable is not None else []
    limit = maxlen.as_python_constant() if maxlen is not None else None
    if limit is not None and (not isinstance(limit, int) or limit < 0):
        raise UserError(ValueError("maxlen must be non-negative"))
    return DequeVariable(list(items), limit)
