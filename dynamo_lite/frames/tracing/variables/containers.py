"""Tuple, list, dict and iterator variables built or read during tracing."""
from __future__ import annotations

from ...errors import Unsupported
from .base import ConstantVariable, VariableTracker


class BaseListVariable(VariableTracker):
    """Shared behaviour of tuples and lists of variables.

    A list read from outside the frame is realized lazily: its length and items are
    guarded only once something reads them, so code that only appends to it (a log, a
    cache of results) does not recompile every time the list grows.
    """

    container_type: type = tuple

    def __init__(self, items, source=None, realize=None):
        self._items = None if realize is not None else list(items)
        self._realize = realize
        self.pending: list = []  # appended before the contents were realized
        self.replaced = False  # the side effects replay the whole contents
        self.source = source

    @property
    def items(self) -> list:
        if self._items is None:
            self._items = self._realize() + self.pending
            self._realize = None
        return self._items

    @items.setter
    def items(self, value) -> None:
        self._items = list(value)

    @property
    def realized(self) -> bool:
        return self._items is not None

    def python_type(self) -> type:
        return self.container_type

    def as_python_constant(self):
        return self.container_type(item.as_python_constant() for item in self.items)

    def as_traceable(self):
        return self.container_type(item.as_traceable() for item in self.items)

    def unpack(self, tx) -> list:
        return list(self.items)

    def truth(self, tx) -> bool:
        return bool(self.items)

    def children(self) -> list:
        return list(self.items) if self.realized else list(self.pending)

    def getitem(self, tx, key: VariableTracker) -> VariableTracker:
        index = key.as_python_constant()
        if isinstance(index, slice):
            return type(self)(self.items[index])
        try:
            return self.items[index]
        except IndexError:
            raise Unsupported(f"{self.container_type.__name__} index out of range (raises in eager)") from None
        except TypeError as exc:
            raise Unsupported(f"bad index {index!r}: {exc}") from None

    def reconstruct(self, cg) -> None:
        if self.source is not None:  # the caller's own object; replayed effects update it
            self.source.reconstruct(cg)
            return
        for item in self.items:
            item.reconstruct(cg)
        cg.build(self.container_type, len(self.items))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.items!r})"


class TupleVariable(BaseListVariable):
    container_type = tuple


class ListVariable(BaseListVariable):
    """A list built inside the traced frame (mutations stay symbolic)."""

    container_type = list

    def var_getattr(self, tx, name: str) -> VariableTracker:
        if name in _LIST_METHODS:
            return ListMethodVariable(self, name)
        raise Unsupported(f"list.{name}")


class NamedTupleVariable(TupleVariable):
    """A namedtuple result (e.g. ``values, indices`` of ``max(dim=...)``)."""

    def __init__(self, items, tuple_type, source=None):
        super().__init__(items, source)
        self.tuple_type = tuple_type

    def python_type(self) -> type:
        return self.tuple_type

    def as_traceable(self):
        return self.tuple_type(*(item.as_traceable() for item in self.items))

    def as_python_constant(self):
        return self.tuple_type(*(item.as_python_constant() for item in self.items))

    def var_getattr(self, tx, name: str) -> VariableTracker:
        fields = getattr(self.tuple_type, "_fields", ())
        if name in fields:
            return self.items[fields.index(name)]
        raise Unsupported(f"{self.tuple_type.__name__}.{name}")

    def reconstruct(self, cg) -> None:
        def emit_items():
            for item in self.items:
                item.reconstruct(cg)

        cg.call_const(self.tuple_type, emit_items, len(self.items))



_LIST_METHODS = {
    "append": lambda items, tx, value: items.append(value),
    "extend": lambda items, tx, values: items.extend(values.unpack(tx)),
    "insert": lambda items, tx, index, value: items.insert(index.as_python_constant(), value),
    "pop": lambda items, tx, index=None: items.pop(-1 if index is None else index.as_python_constant()),
    "reverse": lambda items, tx: items.reverse(),
    "copy": lambda items, tx: ListVariable(items),
}


class ListMethodVariable(VariableTracker):
    """A bound method of a list built during tracing (it mutates the symbolic list)."""

    def __init__(self, target: ListVariable, name: str):
        self.target, self.name = target, name

    def call(self, tx, args, kwargs):
        if kwargs:
            raise Unsupported(f"list.{self.name} with keyword arguments")
        target = self.target
        if not target.realized and self.name in ("append", "extend"):
            added = [args[0]] if self.name == "append" else args[0].unpack(tx)
            target.pending.extend(added)
            tx.output.side_effects.extend_container(target, added)
            return ConstantVariable(None)
        if self.name != "copy":
            tx.output.side_effects.mutate_container(self.target)
        result = _LIST_METHODS[self.name](self.target.items, tx, *args)
        return result if isinstance(result, VariableTracker) else ConstantVariable(None)


class DictVariable(VariableTracker):
    """A dict with constant keys."""

    def __init__(self, items: dict, source=None):
        self.items = dict(items)
        self.source = source

    def python_type(self) -> type:
        return dict

    def as_python_constant(self):
        return {k: v.as_python_constant() for k, v in self.items.items()}

    def as_traceable(self):
        return {k: v.as_traceable() for k, v in self.items.items()}

    def truth(self, tx) -> bool:
        return bool(self.items)

    def unpack(self, tx) -> list:
        return [ConstantVariable(k) for k in self.items]

    def children(self) -> list:
        return list(self.items.values())

    def getitem(self, tx, key: VariableTracker) -> VariableTracker:
        k = key.as_python_constant()
        if k not in self.items:
            raise Unsupported(f"KeyError {k!r} (raises in eager)")
        return self.items[k]

    def var_getattr(self, tx, name: str) -> VariableTracker:
        if name in ("items", "keys", "values", "get"):
            return DictMethodVariable(self, name)
        raise Unsupported(f"dict.{name}")

    def reconstruct(self, cg) -> None:
        if self.source is not None:
            self.source.reconstruct(cg)
            return
        for key, value in self.items.items():
            cg.load_const(key)
            value.reconstruct(cg)
        cg.build(dict, len(self.items))

    def __repr__(self) -> str:
        return f"DictVariable({self.items!r})"


class DictMethodVariable(VariableTracker):
    """Read-only dict methods: items(), keys(), values(), get()."""

    def __init__(self, target: DictVariable, name: str):
        self.target, self.name = target, name

    def call(self, tx, args, kwargs):
        items = self.target.items
        if self.name == "items":
            return ListVariable([TupleVariable([ConstantVariable(k), v]) for k, v in items.items()])
        if self.name == "keys":
            return ListVariable([ConstantVariable(k) for k in items])
        if self.name == "values":
            return ListVariable(list(items.values()))
        key = args[0].as_python_constant()
        default = args[1] if len(args) > 1 else ConstantVariable(None)
        return items.get(key, default)


class IteratorVariable(VariableTracker):
    """An iterator over a fixed list of variables (loops are unrolled)."""

    def __init__(self, items):
        self.items = list(items)
        self.index = 0

    def next_item(self):
        if self.index >= len(self.items):
            return None
        item = self.items[self.index]
        self.index += 1
        return item

    def unpack(self, tx) -> list:
        rest = self.items[self.index:]
        self.index = len(self.items)
        return rest

    def children(self) -> list:
        return self.items[self.index:]

    def reconstruct(self, cg) -> None:
        """The items not yet consumed, as a tuple (a resume function's prologue turns a
        stack slot of layout "iter" back into an iterator)."""
        for item in self.children():
            item.reconstruct(cg)
        cg.build(tuple, len(self.children()))
