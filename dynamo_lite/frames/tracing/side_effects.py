"""Side effects recorded while tracing, undone on rollback, and replayed by the transformed code.

NOTE: [the side-effect model] Every mutable object the frame touches is one variable
with a stable identity (``OutputGraph.objects`` maps a Python object to it; objects made
in the frame are variables from the start). Tracing changes the variables in place, so
a read after a store sees the store. Before each in-place change the variable's state
is saved in a journal, so a rollback (a graph break, a failed speculative inline)
restores every tracked object exactly. What the outside world must see is kept as
entries in program order (attribute and global stores, final contents of containers
from outside the frame); the transformed code rebuilds every value it needs first
(NOTE: [rebuild once, before the replay] in codegen.py) and then replays the entries.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import Unsupported
from .variables.identity_keys import emit_key

#: The value of an attribute that the frame deleted (``del obj.name``).
DELETED = object()


def _replace_dict(target: dict, contents: dict) -> None:
    """Make ``target`` hold exactly ``contents`` (keeps the dict object, like the eager run).

    With the same keys in the same order, only the values that changed are stored: a dict
    counting its edits (an optimizer's state, NOTE: [optimizer edit count]) sees none when
    a step stored back the objects it held (``state["step"] += 1`` on a tensor).
    """
    if target.keys() == contents.keys() and list(target) == list(contents):
        for key, value in contents.items():
            if target[key] is not value:
                target[key] = value
        return
    target.clear()
    target.update(contents)


def _replace_set(target: set, contents: set) -> None:
    target.clear()
    target.update(contents)


@dataclass
class AttributeStore:
    """``obj.name = value`` (or ``del obj.name`` when ``value`` is DELETED) on an object
    from outside the frame."""

    target: object
    name: str
    value: object

    def replay(self, cg) -> None:
        if self.value is DELETED:
            cg.reconstruct(self.target)
            cg.emit("DELETE_ATTR", self.name)
            return
        cg.reconstruct(self.value)
        cg.reconstruct(self.target)
        cg.emit("STORE_ATTR", self.name)

    def variables(self) -> list:
        return [self.target] + ([] if self.value is DELETED else [self.value])


@dataclass
class ItemStore:
    """``container[key] = value`` on a container from outside the frame whose key is not a
    constant (a tensor-keyed dict: an optimizer's per-parameter state)."""

    container: object
    key: object
    value: object

    def replay(self, cg) -> None:
        cg.reconstruct(self.value)
        cg.reconstruct(self.container)
        cg.reconstruct(self.key)
        cg.emit("STORE_SUBSCR")

    def variables(self) -> list:
        return [self.container, self.key, self.value]


@dataclass
class GlobalStore:
    """``global name; name = value`` (``globals_source`` None: the frame's own globals)."""

    name: str
    value: object
    globals_source: object = None

    def replay(self, cg) -> None:
        cg.reconstruct(self.value)
        if self.globals_source is None:
            cg.emit("STORE_GLOBAL", self.name)
        else:
            self.globals_source.reconstruct(cg)
            cg.load_const(self.name)
            cg.emit("STORE_SUBSCR")

    def variables(self) -> list:
        return [self.value]


@dataclass
class CellStore:
    """``nonlocal name; name = value`` on a cell of a function outside the frame."""

    cell_source: object
    value: object

    def replay(self, cg) -> None:
        cg.reconstruct(self.value)
        self.cell_source.reconstruct(cg)
        cg.emit("STORE_ATTR", "cell_contents")

    def variables(self) -> list:
        return [self.value]


@dataclass
class ContainerReplace:
    """A list, dict or set from outside the frame was mutated: give it its final contents."""

    container: object

    def replay(self, cg) -> None:
        container = self.container
        kind = container.python_type()
        if issubclass(kind, list):
            for item in container.items:
                cg.reconstruct(item)
            cg.build(list, len(container.items))
            cg.reconstruct(container)
            cg.load_const(slice(None))
            cg.emit("STORE_SUBSCR")
            return
        replace, values = (_replace_set, container.set_items()) if issubclass(kind, (set, frozenset)) \
            else (_replace_dict, None)

        def emit_args():
            cg.reconstruct(container)
            if values is not None:
                for item in values:
                    cg.reconstruct(item)
                cg.build(set, len(values))
                return
            for key, value in container.items.items():
                emit_key(cg, key)
                cg.reconstruct(value)
            cg.build(dict, len(container.items))

        cg.call_const(replace, emit_args, 2)
        cg.emit("POP_TOP")

    def variables(self) -> list:
        return [self.container, *self.container.children()]


@dataclass
class ContainerExtend:
    """Items appended to a list from outside the frame whose contents were never read."""

    container: object
    added: list

    def replay(self, cg) -> None:
        def emit_args():
            cg.reconstruct(self.container)
            for item in self.added:
                cg.reconstruct(item)
            cg.build(list, len(self.added))

        cg.call_const(list.extend, emit_args, 2)
        cg.emit("POP_TOP")

    def variables(self) -> list:
        return [self.container, *self.added]


class SideEffects:
    """What the traced code did to tracked objects and to the world outside the graph.

    Later reads during tracing see the new values (``attribute``, ``global_value``);
    ``checkpoint``/``rollback`` undo everything after a point; the transformed code
    replays ``entries`` after the graph has run (see NOTE: [the side-effect model]).
    """

    def __init__(self):
        self.entries: list = []
        self.journal: list = []  # (variable, its state before an in-place change)
        self._reindex()

    def __len__(self) -> int:
        return len(self.entries)

    # -- checkpoints -------------------------------------------------------------------------
    def checkpoint(self) -> tuple:
        return len(self.entries), len(self.journal)

    def rollback(self, checkpoint: tuple) -> None:
        """Forget entries after ``checkpoint`` and restore every variable changed since."""
        n_entries, n_journal = checkpoint
        for variable, state in reversed(self.journal[n_journal:]):
            variable.restore_state(state)
        del self.journal[n_journal:]
        del self.entries[n_entries:]
        self._reindex()

    def _reindex(self) -> None:
        self._attributes: dict = {}  # (id(obj), name) -> value variable (or DELETED)
        self._globals: dict = {}  # (id(globals dict), name) -> value variable
        self._replaced: set = set()  # ids of containers whose final contents are replayed
        for entry in self.entries:
            self._index(entry)

    def _index(self, entry) -> None:
        if isinstance(entry, AttributeStore):
            self._attributes[(id(entry.target.value), entry.name)] = entry.value
        elif isinstance(entry, GlobalStore):
            self._globals[(entry.globals_id, entry.name)] = entry.value
        elif isinstance(entry, ContainerReplace):
            self._replaced.add(id(entry.container))

    def _add(self, entry) -> None:
        self.entries.append(entry)
        self._index(entry)

    # -- recording -----------------------------------------------------------------------------
    def journal_state(self, variable) -> None:
        """Save ``variable``'s state before it changes in place (``rollback`` restores it)."""
        self.journal.append((variable, variable.save_state()))

    def mutation(self, variable) -> None:
        """``variable`` is about to change in place: journal its state; a container from
        outside the frame gets its final contents replayed."""
        self.journal_state(variable)
        if variable.source is not None and id(variable) not in self._replaced and hasattr(variable, "items"):
            self._add(ContainerReplace(variable))

    def store_attribute(self, target, name: str, value) -> None:
        if target.source is None:
            raise Unsupported(f"assignment to attribute {name!r} of an object without a known origin")
        self._add(AttributeStore(target, name, value))

    def record(self, entry) -> None:
        """Add an entry made elsewhere (it has ``replay(cg)`` and ``variables()``), in program order."""
        self._add(entry)

    def store_item(self, container, key, value) -> None:
        """``container[key] = value`` (see ItemStore); the container's state is journaled."""
        self.journal_state(container)
        self._add(ItemStore(container, key, value))

    def attribute(self, obj, name: str):
        """The value the frame stored into ``obj.name`` (DELETED after a del), or None."""
        return self._attributes.get((id(obj), name))

    def store_global(self, f_globals: dict, name: str, value, globals_source=None) -> None:
        entry = GlobalStore(name, value, globals_source)
        entry.globals_id = id(f_globals)
        self._add(entry)

    def global_value(self, f_globals: dict, name: str):
        return self._globals.get((id(f_globals), name))

    def store_cell(self, cell, value) -> None:
        """A write to the cell of a function outside the frame (``nonlocal``)."""
        if cell.source is None:
            raise Unsupported(f"assignment to nonlocal {cell.name!r} of a function outside the compiled region")
        self.journal_state(cell)
        cell.contents = value
        self._add(CellStore(cell.source, value))

    def extend_container(self, container, added: list) -> None:
        """Items appended to a sourced list that was never read (see BaseListVariable)."""
        self.journal_state(container)
        container.pending.extend(added)
        self._add(ContainerExtend(container, list(added)))

    # -- the transformed code -------------------------------------------------------------------
    def values(self) -> list:
        """Every variable the replay uses (rebuilt before it; graph outputs include their tensors)."""
        return [variable for entry in self.entries for variable in entry.variables()]

    def replay(self, cg) -> None:
        for entry in self.entries:
            if isinstance(entry, ContainerExtend) and id(entry.container) in self._replaced:
                continue  # the final contents, written by a ContainerReplace, include these
            entry.replay(cg)
