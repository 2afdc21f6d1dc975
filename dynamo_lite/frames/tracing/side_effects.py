"""Side effects recorded while tracing and replayed by the transformed code, in order."""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import Unsupported


def _replace_dict(target: dict, contents: dict) -> None:
    """Make ``target`` hold exactly ``contents`` (keeps the dict object, like the eager run)."""
    target.clear()
    target.update(contents)


@dataclass
class AttributeStore:
    """``obj.name = value`` on an object from outside the frame."""

    target: object
    name: str
    value: object

    def replay(self, cg) -> None:
        self.value.reconstruct(cg)
        self.target.reconstruct(cg)
        cg.emit("STORE_ATTR", self.name)


@dataclass
class GlobalStore:
    """``global name; name = value`` (``globals_source`` None: the frame's own globals)."""

    name: str
    value: object
    globals_source: object = None

    def replay(self, cg) -> None:
        self.value.reconstruct(cg)
        if self.globals_source is None:
            cg.emit("STORE_GLOBAL", self.name)
        else:
            self.globals_source.reconstruct(cg)
            cg.load_const(self.name)
            cg.emit("STORE_SUBSCR")


@dataclass
class ContainerReplace:
    """A list or dict from outside the frame was mutated: give it its final contents."""

    container: object

    def replay(self, cg) -> None:
        from .variables.containers import ListVariable

        container = self.container
        if isinstance(container, ListVariable):
            for item in container.items:
                item.reconstruct(cg)
            cg.build(list, len(container.items))
            container.source.reconstruct(cg)
            cg.load_const(slice(None))
            cg.emit("STORE_SUBSCR")
            return

        def emit_args():
            container.source.reconstruct(cg)
            for key, value in container.items.items():
                cg.load_const(key)
                value.reconstruct(cg)
            cg.build(dict, len(container.items))

        cg.call_const(_replace_dict, emit_args, 2)
        cg.emit("POP_TOP")


@dataclass
class ContainerExtend:
    """Items appended to a list from outside the frame whose contents were never read."""

    container: object
    added: list

    def replay(self, cg) -> None:
        if self.container.replaced:
            return  # a later ContainerReplace writes the final contents, these included

        def emit_args():
            self.container.source.reconstruct(cg)
            for item in self.added:
                item.reconstruct(cg)
            cg.build(list, len(self.added))

        cg.call_const(list.extend, emit_args, 2)
        cg.emit("POP_TOP")


class SideEffects:
    """What the traced code did to the world outside the graph, in program order.

    Later reads during tracing see the new values (``attribute``, ``global_value``);
    the transformed code replays every entry after the graph has run.
    """

    def __init__(self):
        self.entries: list = []
        self._attributes: dict = {}  # (id(obj), name) -> value variable
        self._globals: dict = {}  # (id(globals dict), name) -> value variable
        self._mutated: set = set()  # ids of container variables already replayed

    def __len__(self) -> int:
        return len(self.entries)

    def truncate(self, length: int) -> None:
        """Forget entries after ``length`` (a graph break rolls the failed instruction back)."""
        for entry in self.entries[length:]:
            if isinstance(entry, AttributeStore):
                self._attributes.pop((id(entry.target.value), entry.name), None)
            elif isinstance(entry, ContainerReplace):
                self._mutated.discard(id(entry.container))
                entry.container.replaced = False
        del self.entries[length:]

    def store_attribute(self, target, name: str, value) -> None:
        if target.source is None:
            raise Unsupported(f"assignment to attribute {name!r} of an object without a known origin")
        self._attributes[(id(target.value), name)] = value
        self.entries.append(AttributeStore(target, name, value))

    def attribute(self, obj, name: str):
        return self._attributes.get((id(obj), name))

    def store_global(self, f_globals: dict, name: str, value, globals_source=None) -> None:
        self._globals[(id(f_globals), name)] = value
        self.entries.append(GlobalStore(name, value, globals_source))

    def global_value(self, f_globals: dict, name: str):
        return self._globals.get((id(f_globals), name))

    def mutate_container(self, container) -> None:
        """Record that a sourced list/dict is about to change; replayed as its final contents."""
        if container.source is None:
            return
        if id(container) not in self._mutated:
            self._mutated.add(id(container))
            if hasattr(container, "replaced"):
                container.replaced = True
            self.entries.append(ContainerReplace(container))

    def extend_container(self, container, added: list) -> None:
        """Items appended to a sourced list that was never read (see BaseListVariable)."""
        self.entries.append(ContainerExtend(container, list(added)))

    def values(self) -> list:
        """Every variable the replay reconstructs (graph outputs must include their tensors)."""
        result = []
        for entry in self.entries:
            if isinstance(entry, ContainerReplace):
                container = entry.container
                result.extend(container.items if isinstance(container.items, list) else container.items.values())
            elif isinstance(entry, ContainerExtend):
                result.extend(entry.added)
            else:
                result.append(entry.value)
        return result

    def replay(self, cg) -> None:
        for entry in self.entries:
            entry.replay(cg)
