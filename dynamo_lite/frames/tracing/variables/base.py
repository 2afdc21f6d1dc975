"""VariableTracker: what lives on the symbolic stack, plus constants, NULL and cells."""
from __future__ import annotations

import types

from ....tensor.symint import SymInt
from ...errors import Unsupported


class VariableTracker:
    """A value during symbolic execution, with the source it was read from (if any).

    Subclasses answer the questions the opcode handlers ask: is it a Python constant,
    what is its attribute, what does calling it give, how is it rebuilt in bytecode.
    """

    source = None
    #: Rebuild this value once into a temporary (NOTE: [rebuild once, before the replay]).
    rebuilt_once = True

    def python_type(self) -> type:
        raise Unsupported(f"type of {self}")

    def is_python_constant(self) -> bool:
        try:
            self.as_python_constant()
        except Unsupported:
            return False
        return True

    def as_python_constant(self):
        raise Unsupported(f"{self} is not a Python constant")

    def as_traceable(self):
        """The value handed to library code traced on proxies (tensors become proxies)."""
        return self.as_python_constant()

    def var_getattr(self, tx, name: str) -> "VariableTracker":
        raise Unsupported(f"attribute {name!r} of {self}")

    def call(self, tx, args: list, kwargs: dict) -> "VariableTracker":
        raise Unsupported(f"calling {self}")

    def unpack(self, tx) -> list:
        raise Unsupported(f"iterating over {self}")

    def truth(self, tx) -> bool:
        return bool(self.as_python_constant())

    def reconstruct(self, cg) -> None:
        if self.source is None:
            raise Unsupported(f"cannot rebuild {self} in compiled code")
        self.source.reconstruct(cg)

    def children(self) -> list:
        """Variables this one is built from (what rebuilding it will need)."""
        return []

    def save_state(self):
        """What ``restore_state`` needs to undo an in-place change (see SideEffects.mutation)."""
        raise Unsupported(f"changing {self} in place")

    def restore_state(self, state) -> None:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


#: Python values that are constants to the translator (folded, guarded by value).
CONSTANT_TYPES = (int, float, bool, str, bytes, type(None), complex, type(Ellipsis), slice, range,
                  types.NotImplementedType)


class ValueVariable(VariableTracker):
    """A variable that holds one concrete Python object (and the source it came from)."""

    def __init__(self, value, source=None):
        self.value = value
        self.source = source

    def python_type(self) -> type:
        return type(self.value)

    def as_python_constant(self):
        return self.value

    @property
    def fn(self):
        """The object, for variables that hold something callable."""
        return self.value


class ConstantVariable(ValueVariable):
    """A Python constant (number, string, None, dtype, device, shape tuple ...)."""

    rebuilt_once = False  # immutable: every load is as good as the first

    def var_getattr(self, tx, name: str) -> VariableTracker:
        try:
            attr = getattr(self.value, name)
        except AttributeError as exc:
            raise Unsupported(f"{type(self.value).__name__} has no attribute {name!r}") from exc
        if isinstance(attr, (types.BuiltinMethodType, types.MethodType)):
            return ConstantMethodVariable(self.value, name)
        return tx.wrap_constant(attr)

    def unpack(self, tx) -> list:
        try:
            items = list(self.value)
        except TypeError as exc:
            raise Unsupported(f"iterating over {type(self.value).__name__}") from exc
        return [ConstantVariable(v) for v in items]

    def reconstruct(self, cg) -> None:
        if symbolic_sizes(self.value):  # sizes known only at run time come out of the graph
            cg.load_symbolic(self.value)
        else:
            cg.load_const(self.value)

    def __repr__(self) -> str:
        return f"ConstantVariable({self.value!r})"


def symbolic_sizes(value) -> list:
    """The SymInts in a constant (a size, or a shape tuple/list holding some)."""
    if type(value) is SymInt:
        return [value]
    if isinstance(value, (tuple, list)):
        return [v for v in value if type(v) is SymInt]
    return []


class ConstantMethodVariable(VariableTracker):
    """A method of a constant, e.g. ``"a,b".split`` or ``x.shape.numel``; called on constants."""

    def __init__(self, obj, name: str):
        self.obj, self.name = obj, name

    def call(self, tx, args, kwargs):
        values = [a.as_python_constant() for a in args]
        kw = {k: v.as_python_constant() for k, v in kwargs.items()}
        if isinstance(self.obj, (list, dict, set)):
            raise Unsupported(f"mutating method {self.name} of a constant container")
        return tx.wrap_constant(getattr(self.obj, self.name)(*values, **kw))


class BoundMethodVariable(VariableTracker):
    """A bound method of a container variable (``xs.append``); calling it acts on the variable."""

    def __init__(self, target: VariableTracker, name: str):
        self.target, self.name = target, name

    def children(self) -> list:
        return [self.target]

    def reconstruct(self, cg) -> None:
        cg.reconstruct(self.target)
        cg.load_attr(self.name)


class NullVariable(VariableTracker):
    """The NULL the interpreter pushes before a callable (CALL's calling convention)."""

    rebuilt_once = False

    def reconstruct(self, cg) -> None:
        cg.push_null()

    def __repr__(self) -> str:
        return "NULL"


NULL = NullVariable()


class CellVariable(VariableTracker):
    """A closure cell; LOAD_DEREF/STORE_DEREF read and write ``contents``.

    ``external`` cells exist outside the traced region (a closure of a function defined
    elsewhere, or the compiled frame's own free variables): writing one is a side effect.
    """

    def __init__(self, contents: VariableTracker | None = None, name: str = "", external: bool = False,
                 source=None):
        self.contents = contents
        self.name = name
        self.external = external
        self.source = source  # the cell object itself (``fn.__closure__[i]``), for nonlocal writes

    def save_state(self):
        return self.contents

    def restore_state(self, state) -> None:
        self.contents = state

    def children(self) -> list:
        return [] if self.contents is None else [self.contents]

    def __repr__(self) -> str:
        return f"CellVariable({self.name}={self.contents!r})"
