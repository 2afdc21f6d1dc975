"""Set variables: sets of constants, their methods and operators (changed in place through the journal)."""
from __future__ import annotations

import operator

from ...errors import Unsupported, UserError
from .base import BoundMethodVariable, ConstantVariable, VariableTracker
from .dicts import check_identity_lookup, constant_key, missing_key
from .identity_keys import IdentityKey, emit_key, key_variable
from .iterators import IteratorVariable


class SetVariable(VariableTracker):
    """A set (or frozenset) of constants, kept in insertion order of the traced program."""

    def __init__(self, values, source=None, set_type: type = set):
        self.values = dict.fromkeys(values)
        self.source = source
        self.set_type = set_type

    @classmethod
    def of(cls, variables, set_type: type = set, tx=None) -> "SetVariable":
        return cls([constant_key(v, tx) for v in variables], set_type=set_type)

    # The side-effect model treats a set like a container of its elements.
    @property
    def items(self) -> dict:
        return self.values

    def set_items(self) -> list:
        return [key_variable(v) for v in self.values]

    def python_type(self) -> type:
        return self.set_type

    def save_state(self):
        return dict(self.values)

    def restore_state(self, state) -> None:
        self.values = state

    def is_python_constant(self) -> bool:
        return self.set_type is frozenset and not self.has_identity_keys()

    def has_identity_keys(self) -> bool:
        return any(isinstance(v, IdentityKey) for v in self.values)

    def as_python_constant(self):
        return self.set_type(self.values)

    def truth(self, tx) -> bool:
        return bool(self.values)

    def length(self, tx) -> int:
        return len(self.values)

    def unpack(self, tx) -> list:
        if self.has_identity_keys():  # NOTE: [keys by identity]
            raise Unsupported("iterating over a set of tensors or objects (its order follows their addresses)")
        return [ConstantVariable(v) for v in self.set_type(self.values)]  # Python's iteration order

    def iterate(self, tx):
        return IteratorVariable(self.unpack(tx))

    def contains(self, tx, item) -> bool:
        return _element(item, tx, self) in self.values

    def children(self) -> list:
        return [v.variable for v in self.values if isinstance(v, IdentityKey)]

    def var_getattr(self, tx, name: str) -> VariableTracker:
        if name not in SET_METHODS or (self.set_type is frozenset and SET_METHODS[name][0]):
            raise Unsupported(f"{self.set_type.__name__}.{name}")
        return SetMethodVariable(self, name)

    def reconstruct(self, cg) -> None:
        if self.source is not None:
            self.source.reconstruct(cg)
            return
        if self.set_type is frozenset and not self.has_identity_keys():
            cg.load_const(frozenset(self.values))
            return

        def emit_items():
            for value in self.values:
                emit_key(cg, value)
            cg.build(set, len(self.values))

        if self.set_type is frozenset:
            cg.call_const(frozenset, emit_items, 1)
        else:
            emit_items()

    def __repr__(self) -> str:
        return f"SetVariable({set(self.values)!r})"


def _element(item, tx, target):
    """The element ``item`` stands for in ``target`` (a key by identity only among constants and its kind)."""
    key = constant_key(item, tx)
    if isinstance(key, IdentityKey):
        check_identity_lookup(None if target.source is not None else target.values)
    return key


def _other(tx, value) -> list:
    if isinstance(value, SetVariable):
        return list(value.values)
    return [constant_key(v, tx) for v in value.unpack(tx)]


def _new(target, values) -> SetVariable:
    return SetVariable(values, set_type=target.set_type)


def _remove(tx, target, item):
    key = _element(item, tx, target)
    if key not in target.values:
        raise missing_key(key)
    del target.values[key]


def _pop(tx, target):
    if not target.values:
        raise UserError(KeyError("pop from an empty set"))
    if target.has_identity_keys():
        raise Unsupported("set.pop() of a set of tensors or objects (the element popped follows their addresses)")
    key = next(iter(set(target.values)))  # the element Python's set would pop
    del target.values[key]
    return ConstantVariable(key)


def _combine(op):
    def method(tx, target, *others):
        result = set(target.values)
        for other in others:
            result = op(result, set(_other(tx, other)))
        return _new(target, result)

    return method


def _update(op):
    def method(tx, target, *others):
        combined = _combine(op)(tx, target, *others)
        target.values = combined.values

    return method


#: name -> (changes the set?, handler(tx, target, *args) -> variable or None).
SET_METHODS = {
    "add": (True, lambda tx, s, item: s.values.setdefault(_element(item, tx, s))),
    "discard": (True, lambda tx, s, item: s.values.pop(_element(item, tx, s), None)),
    "remove": (True, _remove),
    "pop": (True, _pop),
    "clear": (True, lambda tx, s: s.values.clear()),
    "update": (True, _update(operator.or_)),
    "intersection_update": (True, _update(operator.and_)),
    "difference_update": (True, _update(operator.sub)),
    "symmetric_difference_update": (True, _update(operator.xor)),
    "union": (False, _combine(operator.or_)),
    "intersection": (False, _combine(operator.and_)),
    "difference": (False, _combine(operator.sub)),
    "symmetric_difference": (False, _combine(operator.xor)),
    "copy": (False, lambda tx, s: _new(s, s.values)),
    "issubset": (False, lambda tx, s, o: ConstantVariable(set(s.values) <= set(_other(tx, o)))),
    "issuperset": (False, lambda tx, s, o: ConstantVariable(set(s.values) >= set(_other(tx, o)))),
    "isdisjoint": (False, lambda tx, s, o: ConstantVariable(set(s.values).isdisjoint(_other(tx, o)))),
}


class SetMethodVariable(BoundMethodVariable):
    """A bound method of a set variable (``SET_METHODS``)."""

    def call(self, tx, args, kwargs):
        if kwargs:
            raise UserError(TypeError(f"set.{self.name}() takes no keyword arguments"))
        changes, method = SET_METHODS[self.name]
        if changes:
            tx.output.side_effects.mutation(self.target)
        result = method(tx, self.target, *args)
        return result if isinstance(result, VariableTracker) else ConstantVariable(None)



def _binary(name: str, in_place: bool):
    def handler(tx, left, right):
        if not isinstance(right, SetVariable):
            raise UserError(TypeError(f"unsupported operand type(s) for set operation: "
                                      f"'{left.python_type().__name__}' and '{right.python_type().__name__}'"))
        if in_place and left.set_type is set:
            SetMethodVariable(left, name + "_update" if name != "union" else "update").call(tx, [right], {})
            return left
        return SetMethodVariable(left, name).call(tx, [right], {})

    return handler


def _compare(op):
    def handler(tx, left, right):
        if not isinstance(right, SetVariable):
            return ConstantVariable(op is operator.ne)
        return ConstantVariable(op(set(left.values), set(right.values)))

    return handler


#: operator -> handler(tx, left, right) when ``left`` is a set variable.
SET_OPERATORS = {
    **{op: _compare(op) for op in (operator.eq, operator.ne, operator.le, operator.ge, operator.lt, operator.gt)},
    operator.or_: _binary("union", False), operator.ior: _binary("union", True),
    operator.and_: _binary("intersection", False), operator.iand: _binary("intersection", True),
    operator.sub: _binary("difference", False), operator.isub: _binary("difference", True),
    operator.xor: _binary("symmetric_difference", False), operator.ixor: _binary("symmetric_difference", True),
}
