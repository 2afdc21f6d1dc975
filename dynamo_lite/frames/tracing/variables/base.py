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
        raise Unsupported("the type of a value the compiler does not model")  # (describe() asks this)

    def is_python_constant(self) -> bool:
        try:
            self.as_python_constant()
        except Unsupported:
            return False
        return True

    def as_python_constant(self):
        raise Unsupported(f"{self.describe()} is not a Python constant")

    def as_traceable(self):
        """The value handed to library code traced on proxies (tensors become proxies)."""
        return self.as_python_constant()

    def var_getattr(self, tx, name: str) -> "VariableTracker":
        raise Unsupported(f"attribute {name!r} of {self.describe()}")

    def call(self, tx, args: list, kwargs: dict) -> "VariableTracker":
        raise Unsupported(f"calling {self.describe()}")

    def unpack(self, tx) -> list:
        raise Unsupported(f"iterating over {self.describe()}")

    def formats_at_run_time(self) -> bool:
        """Whether ``str()``/``format()`` of this non-constant value can wait until the code
        runs (what a caught exception says: exceptions.RuntimeValueVariable)."""
        return False

    def run_time_operand(self) -> "VariableTracker":
        """What formatting at run time formats (``formats_at_run_time``): the value itself,
        rebuilt when the code runs (a lifted float: its graph value, not its traced one)."""
        return self

    def enter_with(self, tx) -> tuple:
        """BEFORE_WITH: ``(the __exit__ to call on leaving, the value of ``as``)``."""
        raise Unsupported(f"a with block over {self.describe()}")

    def truth(self, tx) -> bool:
        return bool(self.as_python_constant())

    def reconstruct(self, cg) -> None:
        if self.source is None:
            raise Unsupported(f"cannot rebuild {self.describe()} in compiled code")
        self.source.reconstruct(cg)

    def children(self) -> list:
        """Variables this one is built from (what rebuilding it will need)."""
        return []

    def filled_later(self) -> list:
        """Children put into this one after it is built (``fill``), not before: a cell of
        the frame, so that a function whose closure holds the cell holding it can be built."""
        return []

    def reconstruct_unfilled(self, cg) -> None:
        """Build this one without its ``filled_later`` children."""
        raise NotImplementedError

    def fill(self, cg, load_self) -> None:
        """Put the ``filled_later`` children into this one, which ``load_self()`` pushes."""
        raise NotImplementedError

    def save_state(self):
        """What ``restore_state`` needs to undo an in-place change (see SideEffects.mutation)."""
        raise Unsupported(f"changing {self.describe()} in place")

    def restore_state(self, state) -> None:
        raise NotImplementedError

    def describe(self) -> str:
        """What this value is in the user's words, for break reasons (never the translator's
        own class names): ``numpy.sum``, ``an object of class Foo``, ``a tuple``."""
        for attribute in ("value", "fn"):
            value = getattr(self, attribute, _ABSENT)
            if value is None and attribute == "value" and not self.is_python_constant():
                continue  # a value computed in the graph (a tensor): described by its type
            if value is not _ABSENT:
                return describe_value(value)
        try:
            kind = self.python_type()
        except Unsupported:
            return "a value the compiler does not model"
        return f"a {kind.__qualname__}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


_ABSENT = object()


def describe_value(value) -> str:
    """A Python object in a user's words: a function or class by its dotted name, a module
    by its name, a context manager or any other object by its class (``dl.no_grad()``)."""
    if isinstance(value, types.ModuleType):
        return f"module {value.__name__}"
    if isinstance(value, type):
        return f"class {value.__module__}.{value.__qualname__}" if value.__module__ != "builtins" \
            else f"class {value.__qualname__}"
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if callable(value) and isinstance(name, str):
        module = getattr(value, "__module__", None)
        return f"{module}.{name}()" if module and module != "builtins" else f"{name}()"
    kind = type(value)
    if isinstance(value, (int, float, str, bool, bytes, type(None))):
        return repr(value) if len(repr(value)) < 60 else f"a {kind.__qualname__}"
    owner = kind.__module__
    spelled = kind.__qualname__ if owner in ("builtins", None) else f"{owner}.{kind.__qualname__}"
    return f"an object of class {spelled}"


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
    """A Python constant (number, string, None, dtype, device, shape tuple ...).

    A constant holding symbolic sizes is made as a ``SymIntVariable`` or a
    ``SymbolicSizesVariable`` (NOTE: [observing a symbolic int]), wherever it is created.
    """

    rebuilt_once = False  # immutable: every load is as good as the first

    def __new__(cls, value=None, source=None):
        if cls is ConstantVariable and symbolic_sizes(value):
            cls = SymIntVariable if type(value) is SymInt else SymbolicSizesVariable
        return super().__new__(cls)

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
    """The SymInts in a constant (a size, a shape tuple/list or a slice holding some)."""
    if type(value) is SymInt:
        return [value]
    if isinstance(value, slice):
        value = (value.start, value.stop, value.step)
    if isinstance(value, (tuple, list)):
        return [v for v in value if type(v) is SymInt]
    return []


def specialized(value):
    """``value`` with each symbolic size made the int it stands for (guarded: NOTE: [observing a symbolic int])."""
    if type(value) is SymInt:
        return int(value)
    if isinstance(value, slice):
        return slice(*(specialized(v) for v in (value.start, value.stop, value.step)))
    if isinstance(value, (tuple, list)):
        items = [int(v) if type(v) is SymInt else v for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    return value


class SymIntVariable(ConstantVariable):
    """An int computed from symbolic sizes (``n = x.shape[0]``): to the program, an int.

    NOTE: [observing a symbolic int] Tracing keeps such an int an expression (``s0``) as
    long as the program only computes with it: int arithmetic and comparisons (a
    comparison that decides a branch records its relation, ``s0 > 4``, as a guard: NOTE:
    [shape guards]), ``min``/``max``/``abs``/``int``/``bool``, tensor op arguments and
    shape tuples. ``isinstance``/``type()`` answer ``int`` without a guard. Every other
    observation (``is``, hashing and dict keys, str/repr/format, int methods, float or
    bitwise arithmetic, indexing a Python sequence, ``range`` bounds, any library call)
    reads ``as_python_constant()``, which is the concrete int and specializes the
    expression (guard ``s0 == 5``): the compiled code is then only reused for that size.
    So Python code never sees a SymInt where it expects an int: it gets eager's answer
    for every size the code is reused for.
    """

    def python_type(self) -> type:
        return int

    def is_python_constant(self) -> bool:
        return True  # without reading it (that would specialize)

    def as_python_constant(self):
        return int(self.value)

    def as_traceable(self):
        return self.value

    def truth(self, tx) -> bool:
        return bool(self.value)  # ``s0 != 0``: decided by the ranges, or guarded

    def var_getattr(self, tx, name: str) -> VariableTracker:
        return ConstantVariable(self.as_python_constant()).var_getattr(tx, name)

    def reconstruct(self, cg) -> None:
        if self.source is not None:
            self.source.reconstruct(cg)  # the frame's own int (NOTE: [symbolic int inputs]): reloaded
        else:
            cg.load_symbolic(self.value)

    def __repr__(self) -> str:
        return f"SymIntVariable({self.value!r})"


class SymbolicSizesVariable(ConstantVariable):
    """A shape tuple (``x.shape``), list or slice holding symbolic sizes: indexing and
    unpacking it give SymIntVariables; anything else sees its specialized value (NOTE:
    [observing a symbolic int])."""

    def is_python_constant(self) -> bool:
        return True

    def as_python_constant(self):
        return specialized(self.value)

    def as_traceable(self):
        return self.value

    def truth(self, tx) -> bool:
        return bool(self.value) if not isinstance(self.value, slice) else True

    def getitem(self, tx, key) -> VariableTracker:
        if isinstance(self.value, slice):
            raise Unsupported("subscript of a slice")
        index = key.as_python_constant()
        try:
            item = self.value[index]
        except Exception as exc:
            raise Unsupported(f"subscript raised {type(exc).__name__}: {exc}") from None
        return tx.wrap_constant(item)

    def length(self, tx) -> int:
        return len(self.value)

    def var_getattr(self, tx, name: str) -> VariableTracker:
        if name == "numel" and hasattr(self.value, "numel"):
            return ConstantMethodVariable(self.value, name)  # a product of sizes stays symbolic
        return ConstantVariable(self.as_python_constant()).var_getattr(tx, name)

    def reconstruct(self, cg) -> None:
        if isinstance(self.value, slice):
            parts = (self.value.start, self.value.stop, self.value.step)
            cg.call_const_on(slice, [ConstantVariable(v) for v in parts])
        else:
            cg.load_symbolic(self.value)

    def __repr__(self) -> str:
        return f"SymbolicSizesVariable({self.value!r})"


def traceable_value(variable):
    """A constant variable's value for symbolic computation: SymInts stay symbolic."""
    return variable.as_traceable() if isinstance(variable, (SymIntVariable, SymbolicSizesVariable)) \
        else variable.as_python_constant()


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

    def filled_later(self) -> list:
        return [] if self.contents is None or self.source is not None else [self.contents]

    def reconstruct(self, cg) -> None:
        """The cell object: reloaded from its source, or, a cell of the frame, a new cell
        holding the contents (built once: NOTE: [cells across graph breaks])."""
        if self.source is not None:
            self.source.reconstruct(cg)
        elif self.contents is None:  # unbound at the break (assigned later, or deleted)
            cg.call_const(types.CellType, lambda: None, 0)
        else:
            cg.call_const_on(types.CellType, [self.contents])

    def reconstruct_unfilled(self, cg) -> None:
        """A new cell, empty until ``fill`` (a recursive inner function's cell holds the
        function made over it)."""
        cg.call_const(types.CellType, lambda: None, 0)

    def fill(self, cg, load_self) -> None:
        """Give the new cell ``load_self()`` pushes its contents."""
        cg.reconstruct(self.contents)
        load_self()
        cg.emit("STORE_ATTR", "cell_contents")

    def __repr__(self) -> str:
        return f"CellVariable({self.name}={self.contents!r})"
