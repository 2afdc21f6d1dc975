"""Tuple and list variables: one variable per object, changed in place through the journal."""
from __future__ import annotations

import operator

from ...errors import Unsupported, UserError
from .base import BoundMethodVariable, ConstantVariable, VariableTracker
from .iterators import ContainerIteratorVariable


class BaseListVariable(VariableTracker):
    """Shared behaviour of tuples and lists of variables.

    A list read from outside the frame is realized lazily: its length and items are
    guarded only once something reads them, so code that only appends to it (a log, a
    cache of results) does not recompile every time the list grows.
    """

    container_type: type = tuple

    def __init__(self, items, source=None, realize=None, python_class=None):
        self._items = None if realize is not None else list(items)
        # the object's own class when it is a subclass read from outside (an optimizer's
        # TrackedList): what ``type()`` sees; copies and slices are plain ``container_type``
        self.python_class = python_class or self.container_type
        self._realize = realize
        self._realized_length = None  # items read from outside when realized
        self.pending: list = []  # appended before the contents were realized
        self.source = source

    @property
    def items(self) -> list:
        if self._items is None:
            outside = self._realize()
            self._realized_length = len(outside)
            self._items = outside + self.pending
            self._realize = None
        return self._items

    @items.setter
    def items(self, value) -> None:
        self._items = list(value)

    @property
    def realized(self) -> bool:
        return self._items is not None

    def save_state(self):
        return (list(self._items) if self._items is not None else None), list(self.pending)

    def restore_state(self, state) -> None:
        items, pending = state
        if items is None and self._items is not None:  # realized since: keep what was read
            items = self._items[:self._realized_length] + pending
        self._items = items
        self.pending = pending

    def python_type(self) -> type:
        return self.python_class

    def is_python_constant(self) -> bool:
        """Only a container of immutable constants: folding works on a copy of it, so it
        must not matter that the copy is another object."""
        if not self.realized:  # reading it would guard its contents
            return False
        return all(isinstance(item, ConstantVariable) or (isinstance(item, TupleVariable) and item.is_python_constant())
                   for item in self.items)

    def as_python_constant(self):
        return self.container_type(item.as_python_constant() for item in self.items)

    def as_traceable(self):
        return self.container_type(item.as_traceable() for item in self.items)

    def unpack(self, tx) -> list:
        return list(self.items)

    def iterate(self, tx):
        return ContainerIteratorVariable(self)

    def truth(self, tx) -> bool:
        return bool(self.items)

    def length(self, tx) -> int:
        return len(self.items)

    def children(self) -> list:
        return list(self.items) if self.realized else list(self.pending)

    def getitem(self, tx, key: VariableTracker) -> VariableTracker:
        index = key.as_python_constant()
        if isinstance(index, slice):  # a plain tuple/list, whatever the subclass
            return (TupleVariable if self.container_type is tuple else ListVariable)(self.items[index])
        try:
            return self.items[index]
        except IndexError:
            raise UserError(IndexError(f"{self.container_type.__name__} index out of range")) from None
        except TypeError as exc:
            raise UserError(TypeError(f"{self.container_type.__name__} indices must be integers or slices, "
                                      f"not {type(index).__name__}")) from exc

    def reconstruct(self, cg) -> None:
        if self.source is not None:  # the caller's own object; replayed effects update it
            self.source.reconstruct(cg)
            return
        for item in self.items:
            cg.reconstruct(item)
        cg.build(self.container_type, len(self.items))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.items!r})" if self.realized else f"{type(self).__name__}(lazy)"


class TupleVariable(BaseListVariable):
    container_type = tuple

    def var_getattr(self, tx, name: str) -> VariableTracker:
        if name in ("index", "count"):
            return ContainerMethodVariable(self, name)
        raise Unsupported(f"tuple.{name}")


class ListVariable(BaseListVariable):
    """A list (made in the frame, or read from it and then tracked by identity)."""

    container_type = list

    def var_getattr(self, tx, name: str) -> VariableTracker:
        if name in LIST_METHODS:
            return ContainerMethodVariable(self, name)
        raise Unsupported(f"list.{name}")

    def store_item(self, tx, key, value) -> None:
        index = key.as_python_constant()
        items = self.items
        if isinstance(index, slice):
            values = value.unpack(tx)
            tx.output.side_effects.mutation(self)
            items[index] = values
            return
        if not isinstance(index, int) or not -len(items) <= index < len(items):
            raise UserError(IndexError("list assignment index out of range"))
        tx.output.side_effects.mutation(self)
        items[index] = value

    def delete_item(self, tx, key) -> None:
        index = key.as_python_constant()
        if not isinstance(index, slice) and not -len(self.items) <= index < len(self.items):
            raise UserError(IndexError("list assignment index out of range"))
        tx.output.side_effects.mutation(self)
        del self.items[index]


def _index_of(items, tx, value, start=None, stop=None):
    bounds = slice(*(None if b is None else b.as_python_constant() for b in (start, stop)))
    for position in range(len(items))[bounds]:
        if _equal(tx, items[position], value):
            return ConstantVariable(position)
    raise UserError(ValueError(f"{_describe(value)} is not in list"))


def _equal(tx, left, right) -> bool:
    if left is right:
        return True
    return tx.binary_operation(operator.eq, left, right).truth(tx)


def _describe(value) -> str:
    return repr(value.as_python_constant()) if value.is_python_constant() else "value"


def _count(items, tx, value):
    return ConstantVariable(sum(1 for item in items if _equal(tx, item, value)))


def _remove(items, tx, value):
    for position, item in enumerate(items):
        if _equal(tx, item, value):
            del items[position]
            return None
    raise UserError(ValueError("list.remove(x): x not in list"))


def _pop(items, tx, index=None):
    position = -1 if index is None else index.as_python_constant()
    if not items:
        raise UserError(IndexError("pop from empty list"))
    if not -len(items) <= position < len(items):
        raise UserError(IndexError("pop index out of range"))
    return items.pop(position)


def _sort(items, tx, key=None, reverse=None):
    if key is not None and not _is_none(key):
        keys = [key.call(tx, [item], {}) for item in items]
    else:
        keys = list(items)
    if not all(k.is_python_constant() for k in keys):
        raise Unsupported("list.sort() of values that are not constants (needs their values)")
    flip = bool(reverse.as_python_constant()) if reverse is not None else False
    try:
        order = sorted(range(len(items)), key=lambda i: keys[i].as_python_constant(), reverse=flip)
    except TypeError as exc:
        raise UserError(exc) from None
    items[:] = [items[i] for i in order]


def _is_none(variable) -> bool:
    return variable.is_python_constant() and variable.as_python_constant() is None


#: List methods: name -> (changes the list?, handler(items, tx, *args) -> variable or None).
LIST_METHODS = {
    "append": (True, lambda items, tx, value: items.append(value)),
    "extend": (True, lambda items, tx, values: items.extend(values.unpack(tx))),
    "insert": (True, lambda items, tx, index, value: items.insert(index.as_python_constant(), value)),
    "pop": (True, _pop),
    "remove": (True, _remove),
    "clear": (True, lambda items, tx: items.clear()),
    "reverse": (True, lambda items, tx: items.reverse()),
    "sort": (True, _sort),
    "copy": (False, lambda items, tx: ListVariable(items)),
    "index": (False, _index_of),
    "count": (False, _count),
}

TUPLE_METHODS = {"index": LIST_METHODS["index"], "count": LIST_METHODS["count"]}


class ContainerMethodVariable(BoundMethodVariable):
    """A bound method of a list or tuple variable (changes the variable in place)."""

    def call(self, tx, args, kwargs):
        target = self.target
        if self.name == "_asdict":
            return tx.build_dict(dict(zip(target.tuple_type._fields, target.items)))
        if kwargs and self.name != "sort":
            raise UserError(TypeError(f"{target.container_type.__name__}.{self.name}() takes no keyword arguments"))
        if not target.realized and self.name in ("append", "extend"):
            added = [args[0]] if self.name == "append" else args[0].unpack(tx)
            tx.output.side_effects.extend_container(target, added)
            return ConstantVariable(None)
        table = LIST_METHODS if target.container_type is list else TUPLE_METHODS
        changes, method = table[self.name]
        if changes:
            tx.output.side_effects.mutation(target)
            result = method(target.items, tx, *args, **kwargs)
        else:
            result = method(target.items, tx, *args)
        return result if isinstance(result, VariableTracker) else ConstantVariable(None)



def _concatenate(tx, left, right):
    if type(left).container_type is not getattr(right, "container_type", None):
        name = left.container_type.__name__
        raise UserError(TypeError(f'can only concatenate {name} (not "{right.python_type().__name__}") to {name}'))
    return (TupleVariable if left.container_type is tuple else ListVariable)(left.items + right.items)


def _extend_in_place(tx, left, right):
    if left.container_type is tuple:
        return _concatenate(tx, left, right)
    values = right.unpack(tx)
    tx.output.side_effects.mutation(left)
    left.items.extend(values)
    return left


def _repeat(tx, left, right):
    sequence, count = (left, right) if isinstance(left, BaseListVariable) else (right, left)
    times = count.as_python_constant()
    if not isinstance(times, int):
        raise UserError(TypeError(f"can't multiply sequence by non-int of type '{type(times).__name__}'"))
    kind = TupleVariable if sequence.container_type is tuple else ListVariable
    return kind(sequence.items * times)


def _repeat_in_place(tx, left, right):
    if left.container_type is tuple:
        return _repeat(tx, left, right)
    times = right.as_python_constant()
    tx.output.side_effects.mutation(left)
    left.items[:] = left.items * times
    return left


#: operator -> handler(tx, left, right) for lists and tuples (``left`` or ``right`` is one).
SEQUENCE_OPERATORS = {
    operator.add: _concatenate, operator.iadd: _extend_in_place,
    operator.mul: _repeat, operator.imul: _repeat_in_place,
}
