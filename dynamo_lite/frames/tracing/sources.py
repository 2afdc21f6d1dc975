"""Sources: where a traced value came from, how to guard it and how to reload it."""
from __future__ import annotations

import keyword
from dataclasses import dataclass


class Source:
    """The origin of a value in the frame (a local, a global, an attribute of one ...).

    ``expr()`` is the Python expression that reloads it inside guard functions (frame
    values are unpacked into locals of their own names; globals come from ``__dl_G``);
    ``name()`` is the text people read; ``reconstruct(cg)`` emits bytecode loading it.
    """

    def expr(self) -> str:
        raise NotImplementedError

    def name(self) -> str:
        return self.expr()

    def reconstruct(self, cg) -> None:
        raise NotImplementedError

    def constants(self) -> dict:
        """Objects the guard expression refers to by name (see ConstSource)."""
        base = getattr(self, "base", None)
        return base.constants() if base is not None else {}

    def __hash__(self) -> int:
        return hash(self.expr())

    def __eq__(self, other) -> bool:
        return isinstance(other, Source) and self.expr() == other.expr()


def local_identifier(name: str) -> str:
    """``name`` as an identifier guard code can bind: locals such as pytest's
    ``@py_assert1`` are not identifiers, so they get a spelled-out one."""
    if name.isidentifier() and not keyword.iskeyword(name):
        return name
    return "__dl_local_" + name.encode().hex()


@dataclass(eq=False)
class LocalSource(Source):
    """A value the frame received: an argument or a free variable's contents."""

    local_name: str

    def expr(self) -> str:
        return local_identifier(self.local_name)

    def reconstruct(self, cg) -> None:
        cg.load_fast(self.local_name)


#: The transformed code of a frame with free variables gets their cells as arguments named so.
CELL_ARGUMENT_PREFIX = "__dl_cell_"


def cell_argument(name: str) -> str:
    """The transformed code's argument holding the cell of free variable ``name``."""
    return CELL_ARGUMENT_PREFIX + name


@dataclass(eq=False)
class FrameCellSource(Source):
    """The cell object of one of the frame's free variables (passed to the transformed
    code as an argument of its own: NOTE: [cells across graph breaks])."""

    cell_name: str

    def expr(self) -> str:
        return local_identifier(cell_argument(self.cell_name))

    def name(self) -> str:
        return f"the cell of {self.cell_name}"

    def reconstruct(self, cg) -> None:
        cg.load_fast(cell_argument(self.cell_name))


@dataclass(eq=False)
class GlobalSource(Source):
    global_name: str

    def expr(self) -> str:
        return f"__dl_G[{self.global_name!r}]"

    def name(self) -> str:
        return self.global_name

    def reconstruct(self, cg) -> None:
        cg.load_global(self.global_name)


@dataclass(eq=False)
class BuiltinSource(Source):
    builtin_name: str

    def expr(self) -> str:
        return f"__dl_B[{self.builtin_name!r}]"

    def name(self) -> str:
        return self.builtin_name

    def reconstruct(self, cg) -> None:
        cg.load_global(self.builtin_name)


@dataclass(eq=False)
class AttrSource(Source):
    """Attribute ``attr`` of ``base``; ``label`` is how people read it when that is not
    ``base.attr`` (``dl.is_grad_enabled()`` for the grad mode's flag)."""

    base: Source
    attr: str
    label: str | None = None

    def expr(self) -> str:
        return f"{self.base.expr()}.{self.attr}"

    def name(self) -> str:
        return self.label if self.label is not None else f"{self.base.name()}.{self.attr}"

    def reconstruct(self, cg) -> None:
        self.base.reconstruct(cg)
        cg.load_attr(self.attr)


@dataclass(eq=False)
class ItemSource(Source):
    base: Source
    key: object  # an int or a str (constants only)

    def expr(self) -> str:
        return f"{self.base.expr()}[{self.key!r}]"

    def name(self) -> str:
        return f"{self.base.name()}[{self.key!r}]"

    def reconstruct(self, cg) -> None:
        self.base.reconstruct(cg)
        cg.load_const(self.key)
        cg.binary_subscr()


@dataclass(eq=False)
class ConstSource(Source):
    """A fixed object the translator already knows (e.g. the globals of a method found on
    a guarded class, the holder of the default dtype): reloaded as a constant.

    ``label`` is how people read it (default: what it is)."""

    value: object
    label: str | None = None

    def expr(self) -> str:
        return f"__dl_K{id(self.value)}"

    def name(self) -> str:
        if self.label is not None:
            return self.label
        if isinstance(self.value, dict) and "__name__" in self.value:
            return f"<globals of {self.value['__name__']}>"
        return f"<{type(self.value).__name__} constant>"

    def constants(self) -> dict:
        return {self.expr(): self.value}

    def reconstruct(self, cg) -> None:
        cg.load_const(self.value)


def iterator_state(iterator) -> tuple:
    """``(what it walks, position)`` of a list iterator or an ``enumerate`` object, read
    without advancing it (from ``__reduce__``; an exhausted list iterator walks ``[]``)."""
    reduced = iterator.__reduce__()
    if type(iterator) is enumerate:
        return reduced[1]
    return reduced[1][0], reduced[2] if len(reduced) > 2 else 0


@dataclass(eq=False)
class IteratorStateSource(Source):
    """Part ``part`` of ``iterator_state(base)``: the list an iterator walks (0) or its
    position (1) — how a resume function reads the loop iterator a graph break passed it."""

    base: Source
    part: int

    def expr(self) -> str:
        return f"__dl_iterator_state({self.base.expr()})[{self.part}]"

    def name(self) -> str:
        return f"{self.base.name()}.<{('iterated', 'position')[self.part]}>"

    def constants(self) -> dict:
        return {"__dl_iterator_state": iterator_state, **self.base.constants()}

    def reconstruct(self, cg) -> None:
        cg.call_const(iterator_state, lambda: self.base.reconstruct(cg), 1)
        cg.load_const(self.part)
        cg.binary_subscr()



@dataclass(eq=False)
class KeyPresentSource(Source):
    """Whether the dict at ``base`` has ``key``: a dict read key by key is guarded on the
    keys it read, not on all of them (NOTE: [dicts read key by key])."""

    base: Source
    key: object

    def expr(self) -> str:
        return f"({self.key!r} in {self.base.expr()})"

    def name(self) -> str:
        return f"({self.key!r} in {self.base.name()})"

    def reconstruct(self, cg) -> None:
        raise NotImplementedError("a key's presence is only guarded, never reloaded")


@dataclass(eq=False)
class TensorKeySource(Source):
    """The value a dict keyed by tensors holds for the tensor at ``key`` (an optimizer's
    ``state[param]``). Guards read it with ``.get``: a guard never inserts a key, even in a
    defaultdict, and an absent key reads as None."""

    base: Source
    key: Source

    def expr(self) -> str:
        return f"{self.base.expr()}.get({self.key.expr()})"

    def name(self) -> str:
        return f"{self.base.name()}[{self.key.name()}]"

    def constants(self) -> dict:
        return {**self.base.constants(), **self.key.constants()}

    def reconstruct(self, cg) -> None:
        self.base.reconstruct(cg)
        self.key.reconstruct(cg)
        cg.binary_subscr()
