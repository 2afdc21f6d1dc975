"""Dict variables (dict, OrderedDict, defaultdict) with constant keys, their live views and methods."""
from __future__ import annotations

import collections
import operator

from ...errors import Unsupported, UserError
from .base import BoundMethodVariable, ConstantVariable, VariableTracker
from .containers import TupleVariable
from .identity_keys import IdentityKey, emit_key, hashed_by_identity, identity_key, key_variable
from .iterators import DictIteratorVariable

#: What ``DictVariable.lookup`` gives for an absent key.
MISSING = object()


def checked_key(tx, d, variable):
    """``constant_key`` of a key used on the dict variable ``d`` (see ``check_identity_lookup``)."""
    key = constant_key(variable, tx)
    if isinstance(key, IdentityKey):
        check_identity_lookup(d.items if d._items is not None or d.source is None else None)
    return key


def constant_key(variable, tx=None):
    """The Python value of a dict key or set element, checked hashable: a constant, or (with
    ``tx``) an IdentityKey for a value hashed by identity (NOTE: [keys by identity])."""
    if not variable.is_python_constant():
        key = identity_key(tx, variable) if tx is not None else None
        if key is not None:
            return key
        raise Unsupported(f"a dict key that is not a constant: {variable.describe()}")
    key = variable.as_python_constant()
    try:
        hash(key)
    except TypeError as exc:
        raise UserError(TypeError(str(exc))) from None
    return key


class DictVariable(VariableTracker):
    """A dict with constant keys (``dict_type``: dict, OrderedDict or defaultdict).

    ``default_factory`` is the variable of a defaultdict's factory (None otherwise).

    NOTE: [dicts read key by key] A dict read from the frame (``cfg``, an optimizer's param
    group) starts unrealized: ``read_key(key)`` gives the variable of one key (or MISSING),
    guarding that key's presence and its value only, so ``cfg["lr"]`` costs the same
    guards whatever else ``cfg`` holds. Anything that needs every key (iteration, ``len``,
    a mutation, a use as a constant) realizes it: ``realize(read)`` guards the keys, in
    order, and wraps each value (those read already are kept).
    """

    def __init__(self, items: dict, source=None, dict_type: type = dict, default_factory=None,
                 read_key=None, realize=None):
        self._items = None if realize is not None else dict(items)
        self._read: dict = {}  # key -> variable (or MISSING) read before realizing
        self._read_key, self._realize = read_key, realize
        self.source = source
        self.dict_type = dict_type
        self.default_factory = default_factory

    @property
    def items(self) -> dict:
        """Key -> variable, every key (realizes an unrealized dict)."""
        if self._items is None:
            self._items = self._realize({k: v for k, v in self._read.items() if v is not MISSING})
        return self._items

    @items.setter
    def items(self, items: dict) -> None:
        self._items = items

    def lookup(self, key):
        """The variable at the constant ``key``, or MISSING; an unrealized dict reads that key only."""
        if isinstance(key, IdentityKey):
            check_identity_lookup(self.items if self._items is not None or self.source is None else None)
        if self._items is not None:
            return self._items.get(key, MISSING)
        if key not in self._read:
            self._read[key] = self._read_key(key)
        return self._read[key]

    def python_type(self) -> type:
        return self.dict_type

    def save_state(self):
        return None if self._items is None else dict(self._items), dict(self._read)

    def restore_state(self, state) -> None:
        self._items, self._read = state

    def is_python_constant(self) -> bool:
        # (an unrealized dict is not known to be one: asking must not guard every key)
        return self._items is not None and self.dict_type is dict and \
            all(isinstance(v, ConstantVariable) for v in self._items.values()) and \
            not any(isinstance(k, IdentityKey) for k in self._items)

    def as_python_constant(self):
        if self.dict_type is not dict:
            raise Unsupported(f"a {self.dict_type.__name__} is not a constant")
        return {k: v.as_python_constant() for k, v in self.items.items()}

    def as_traceable(self):
        return {k.variable.as_traceable() if isinstance(k, IdentityKey) else k: v.as_traceable()
                for k, v in self.items.items()}

    def truth(self, tx) -> bool:
        return bool(self.items)

    def length(self, tx) -> int:
        return len(self.items)

    def unpack(self, tx) -> list:
        return [key_variable(k) for k in self.items]

    def iterate(self, tx):
        return DictIteratorVariable(DictViewVariable(self, "keys"))

    def children(self) -> list:
        values = self._items.values() if self._items is not None else \
            [v for v in self._read.values() if v is not MISSING]
        keys = [k.variable for k in (self._items or ()) if isinstance(k, IdentityKey)]
        return list(values) + keys + ([self.default_factory] if self.default_factory is not None else [])

    def getitem(self, tx, key: VariableTracker) -> VariableTracker:
        k = constant_key(key, tx)
        value = self.lookup(k)
        if value is not MISSING:
            return value
        if self.default_factory is not None and not _is_none(self.default_factory):
            value = self.default_factory.call(tx, [], {})
            self.store_item(tx, key, value)
            return value
        raise missing_key(k)

    def store_item(self, tx, key, value) -> None:
        k = checked_key(tx, self, key)
        tx.output.side_effects.mutation(self)
        self.items[k] = value

    def delete_item(self, tx, key) -> None:
        k = checked_key(tx, self, key)
        if k not in self.items:
            raise missing_key(k)
        tx.output.side_effects.mutation(self)
        del self.items[k]

    def contains(self, tx, item) -> bool:
        return self.lookup(constant_key(item, tx)) is not MISSING

    def var_getattr(self, tx, name: str) -> VariableTracker:
        if name in DICT_METHODS:
            return DictMethodVariable(self, name)
        if name == "default_factory" and self.default_factory is not None:
            return self.default_factory
        raise Unsupported(f"{self.dict_type.__name__}.{name}")

    def reconstruct(self, cg) -> None:
        if self.source is not None:
            self.source.reconstruct(cg)
            return

        def emit_items():
            for key, value in self.items.items():
                emit_key(cg, key)
                cg.reconstruct(value)
            cg.build(dict, len(self.items))

        if self.dict_type is dict:
            emit_items()
        elif self.dict_type is collections.defaultdict:
            def emit_args():
                cg.reconstruct(self.default_factory)
                emit_items()

            cg.call_const(collections.defaultdict, emit_args, 2)
        else:
            cg.call_const(self.dict_type, emit_items, 1)

    def __repr__(self) -> str:
        return f"DictVariable({self.items!r})"


def missing_key(key) -> Exception:
    """What looking up the absent ``key`` raises: KeyError(key), a graph break for a key known
    only by identity (the message is its repr, made when the code runs)."""
    if isinstance(key, IdentityKey):
        return Unsupported(f"looking up a missing key that is {key.variable.describe()} (KeyError in eager)")
    return UserError(KeyError(key))


def check_identity_lookup(keys) -> None:
    """A key hashed by identity is looked up only where every key is a constant or one of
    those: a dict or set from outside the frame holding real objects breaks the graph."""
    if keys is None or any(not isinstance(k, IdentityKey) and hashed_by_identity(k) for k in keys):
        raise Unsupported("a lookup by a tensor or object in a dict or set that holds objects from outside "
                          "the compiled function")


def _is_none(variable) -> bool:
    return variable.is_python_constant() and variable.as_python_constant() is None


class DictViewVariable(VariableTracker):
    """``d.keys()``/``d.values()``/``d.items()``: a live view of the dict variable."""

    def __init__(self, dict_var: DictVariable, kind: str):
        self.dict_var, self.kind = dict_var, kind

    def python_type(self) -> type:
        return type(getattr({}, self.kind)())

    def element(self, key):
        if self.kind == "keys":
            return key_variable(key)
        if self.kind == "values":
            return self.dict_var.items[key]
        return TupleVariable([key_variable(key), self.dict_var.items[key]])

    def unpack(self, tx) -> list:
        return [self.element(k) for k in self.dict_var.items]

    def iterate(self, tx):
        return DictIteratorVariable(self)

    def length(self, tx) -> int:
        return len(self.dict_var.items)

    def truth(self, tx) -> bool:
        return bool(self.dict_var.items)

    def contains(self, tx, item) -> bool:
        if self.kind == "keys":
            return self.dict_var.contains(tx, item)
        raise Unsupported(f"'in' on dict.{self.kind}()")

    def children(self) -> list:
        return [self.dict_var]

    def reconstruct(self, cg) -> None:
        cg.call_const(operator.methodcaller(self.kind), lambda: cg.reconstruct(self.dict_var), 1)


def _get(tx, d, key, default=None):
    value = d.lookup(constant_key(key, tx))
    if value is not MISSING:
        return value
    return default if default is not None else ConstantVariable(None)


def _pop(tx, d, key, default=None):
    k = checked_key(tx, d, key)
    if k not in d.items:
        if default is None:
            raise missing_key(k)
        return default
    tx.output.side_effects.mutation(d)
    return d.items.pop(k)


def _popitem(tx, d, last=None):
    if not d.items:
        raise UserError(KeyError("popitem(): dictionary is empty"))
    tx.output.side_effects.mutation(d)
    from_end = True if last is None else bool(last.as_python_constant())
    key = next(reversed(d.items)) if from_end else next(iter(d.items))
    return TupleVariable([key_variable(key), d.items.pop(key)])


def _setdefault(tx, d, key, default=None):
    k = checked_key(tx, d, key)
    if k not in d.items:
        tx.output.side_effects.mutation(d)
        d.items[k] = default if default is not None else ConstantVariable(None)
    return d.items[k]


def _update(tx, d, other=None, **kwargs):
    pairs = [] if other is None else pairs_of(tx, other)
    pairs += [(k, v) for k, v in kwargs.items()]
    if any(isinstance(k, IdentityKey) for k, _ in pairs):
        check_identity_lookup(d.items if d._items is not None or d.source is None else None)
    tx.output.side_effects.mutation(d)
    for k, v in pairs:
        d.items[k] = v
    return None


def _clear(tx, d):
    tx.output.side_effects.mutation(d)
    d.items.clear()


def _made_type(dict_type: type) -> type:
    """The type ``copy()`` and ``|`` make from a ``dict_type``: dict's own methods give a plain
    dict for a subclass (an optimizer's TrackedDict); OrderedDict's and defaultdict's keep the type."""
    return dict if dict_type.copy is dict.copy else dict_type


def _copy(tx, d):
    return DictVariable(d.items, dict_type=_made_type(d.dict_type), default_factory=d.default_factory)


def _move_to_end(tx, d, key, last=None):
    k = checked_key(tx, d, key)
    if k not in d.items:
        raise missing_key(k)
    tx.output.side_effects.mutation(d)
    value = d.items.pop(k)
    if last is None or last.as_python_constant():
        d.items[k] = value
    else:
        d.items = {k: value, **d.items}


DICT_METHODS = {
    "keys": lambda tx, d: DictViewVariable(d, "keys"),
    "values": lambda tx, d: DictViewVariable(d, "values"),
    "items": lambda tx, d: DictViewVariable(d, "items"),
    "get": _get, "pop": _pop, "popitem": _popitem, "setdefault": _setdefault, "update": _update,
    "clear": _clear, "copy": _copy, "move_to_end": _move_to_end,
}


def pairs_of(tx, value) -> list:
    """(key, value variable) pairs of a dict variable or of an iterable of pairs (``dict(x)``)."""
    if isinstance(value, DictVariable):
        return list(value.items.items())
    pairs = []
    for pair in value.unpack(tx):
        items = pair.unpack(tx)
        if len(items) != 2:
            raise UserError(ValueError(f"dictionary update sequence element #{len(pairs)} has length "
                                       f"{len(items)}; 2 is required"))
        pairs.append((constant_key(items[0], tx), items[1]))
    return pairs


class DictMethodVariable(BoundMethodVariable):
    """A bound method of a dict variable (``DICT_METHODS``)."""

    def call(self, tx, args, kwargs):
        if kwargs and self.name != "update":
            raise Unsupported(f"dict.{self.name} with keyword arguments")
        if self.name == "move_to_end" and self.target.dict_type is not collections.OrderedDict:
            raise UserError(AttributeError("'dict' object has no attribute 'move_to_end'"))
        result = DICT_METHODS[self.name](tx, self.target, *args, **kwargs)
        return ConstantVariable(None) if result is None else result



def make_dict(tx, dict_type, args: list, kwargs: dict, default_factory=None) -> DictVariable:
    """``dict(...)``/``OrderedDict(...)``: a new dict from a mapping or pairs, plus keywords."""
    if len(args) > 1:
        raise UserError(TypeError(f"{dict_type.__name__} expected at most 1 argument, got {len(args)}"))
    pairs = pairs_of(tx, args[0]) if args else []
    items = dict(pairs)
    items.update(kwargs)
    return DictVariable(items, dict_type=dict_type, default_factory=default_factory)


def _union(tx, left, right):
    if not isinstance(right, DictVariable):
        raise UserError(TypeError(f"unsupported operand type(s) for |: '{left.python_type().__name__}' and "
                                  f"'{right.python_type().__name__}'"))
    return DictVariable({**left.items, **right.items}, dict_type=_made_type(left.dict_type),
                        default_factory=left.default_factory)


def _update_in_place(tx, left, right):
    _update(tx, left, right)
    return left


#: operator -> handler(tx, left, right) when ``left`` is a dict variable.
DICT_OPERATORS = {operator.or_: _union, operator.ior: _update_in_place}
