"""User functions and methods (inlined by the translator) and functions made while tracing."""
from __future__ import annotations

import functools
import types

from ...errors import Unsupported
from ...runtime.cache import original_code
from ..sources import AttrSource, ConstSource, ItemSource
from .base import CellVariable, ConstantVariable, VariableTracker
from .containers import TupleVariable
from .dicts import DictVariable


class UserFunctionVariable(VariableTracker):
    """A plain Python function of the user's; calling it inlines its bytecode."""

    def __init__(self, fn: types.FunctionType, source=None):
        self.fn = fn
        self.source = source

    def python_type(self) -> type:
        return types.FunctionType

    def as_python_constant(self):
        return self.fn

    def var_getattr(self, tx, name: str) -> VariableTracker:
        if name in ("__name__", "__qualname__", "__module__", "__doc__"):
            return ConstantVariable(getattr(self.fn, name))
        raise Unsupported(f"attribute {name!r} of function {self.fn.__qualname__}")

    def call(self, tx, args, kwargs) -> VariableTracker:
        return tx.inline_user_function(self, args, kwargs)

    def closure_cells(self, tx) -> list:
        """One CellVariable per real cell (shared by every call that reads it, so a
        ``nonlocal`` write is seen by the next call); its source is the cell object."""
        cells = []
        for i, (name, cell) in enumerate(zip(self.fn.__code__.co_freevars, self.fn.__closure__ or ())):
            known = tx.output.objects.get(id(cell))
            if known is not None:
                cells.append(known[1])
                continue
            cell_source = ItemSource(AttrSource(self.source, "__closure__"), i) if self.source is not None \
                else ConstSource(cell, f"{self.fn.__qualname__}.__closure__[{i}]")
            try:
                contents = cell.cell_contents
            except ValueError:
                raise Unsupported(f"free variable {name!r} referenced before assignment") from None
            variable = CellVariable(tx.wrap(contents, AttrSource(cell_source, "cell_contents")), name,
                                    external=True, source=cell_source)
            tx.output.objects[id(cell)] = (cell, variable)
            cells.append(variable)
        return cells

    def defaults(self, tx) -> tuple:
        """The default values, each with its source (``fn.__defaults__[i]``): they are
        guarded like any other input, and a mutable default is tracked like an argument."""
        base = self.source if self.source is not None else ConstSource(self.fn, self.fn.__qualname__)
        positional = tuple(tx.wrap(v, ItemSource(AttrSource(base, "__defaults__"), i))
                           for i, v in enumerate(self.fn.__defaults__ or ()))
        keyword = {k: tx.wrap(v, ItemSource(AttrSource(base, "__kwdefaults__"), k))
                   for k, v in (self.fn.__kwdefaults__ or {}).items()}
        return positional, keyword

    @property
    def code(self):
        """The code inlined: the original, never the dispatch prologue of an instrumented one."""
        return original_code(self.fn.__code__)

    @property
    def f_globals(self):
        return self.fn.__globals__

    def __repr__(self) -> str:
        return f"UserFunctionVariable({self.fn.__qualname__})"


class ClosureFunctionVariable(UserFunctionVariable):
    """A user function closing over a cell of the frame, read from the frame: guarded by
    its code, not by its identity. A resume function gets the closures its frame made
    before the break as arguments, new ones at each call (NOTE: [cells across graph
    breaks]), so their identity is no constant (``g is h`` runs eagerly), and guarding it
    would recompile at every call; its cells' contents are guarded where they are read."""

    def as_python_constant(self):
        raise Unsupported(f"the identity of the closure {self.fn.__qualname__} (a new object at each call)")

    def __repr__(self) -> str:
        return f"ClosureFunctionVariable({self.fn.__qualname__})"


class UserMethodVariable(UserFunctionVariable):
    """A user function bound to an object variable (``self`` is passed first)."""

    def __init__(self, fn, self_var: VariableTracker, source=None):
        super().__init__(fn, source)
        self.self_var = self_var

    def call(self, tx, args, kwargs) -> VariableTracker:
        return tx.inline_user_function(self, [self.self_var, *args], kwargs)

    def children(self) -> list:
        return [self.self_var]

    def reconstruct(self, cg) -> None:
        if self.source is not None:
            self.source.reconstruct(cg)
            return
        cg.reconstruct(self.self_var)
        cg.load_attr(self.fn.__name__)

    def __repr__(self) -> str:
        return f"UserMethodVariable({self.fn.__qualname__})"


class NestedFunctionVariable(UserFunctionVariable):
    """A function created by MAKE_FUNCTION inside the traced code (lambda, comprehension, def)."""

    def __init__(self, code, f_globals, name, defaults=(), kwdefaults=None, closure=()):
        self._code = code
        self._globals = f_globals
        self.name = name
        self._defaults = tuple(defaults)
        self._kwdefaults = dict(kwdefaults or {})
        self._closure = list(closure)
        self.fn = None
        self.source = None

    def python_type(self) -> type:
        return types.FunctionType

    def as_python_constant(self):
        raise Unsupported("a function made inside the compiled frame is not a constant")

    def var_getattr(self, tx, name: str) -> VariableTracker:
        if name in ("__name__", "__qualname__"):
            return ConstantVariable(self.name)
        raise Unsupported(f"attribute {name!r} of nested function {self.name}")

    def closure_cells(self, tx) -> list:
        return self._closure

    def defaults(self, tx) -> tuple:
        return self._defaults, self._kwdefaults

    def children(self) -> list:
        return [*self._defaults, *self._kwdefaults.values(), *self._closure]

    def reconstruct(self, cg) -> None:
        """A new function over the same code (a lambda or comprehension passed on at a
        graph break), closing over the same cells as the frame's code after the break
        (NOTE: [cells across graph breaks])."""

        def emit_args():
            cg.load_const(self._code)
            cg.load_const(self._globals)
            for default in self._defaults:
                cg.reconstruct(default)
            cg.build(tuple, len(self._defaults))
            for name, default in self._kwdefaults.items():
                cg.load_const(name)
                cg.reconstruct(default)
            cg.build(dict, len(self._kwdefaults))
            for cell in self._closure:
                cg.reconstruct(cell)
            cg.build(tuple, len(self._closure))

        cg.call_const(make_function, emit_args, 5)

    @property
    def code(self):
        return self._code

    @property
    def f_globals(self):
        return self._globals

    def __repr__(self) -> str:
        return f"NestedFunctionVariable({self.name})"


def make_function(code, f_globals: dict, defaults: tuple, kwdefaults: dict, closure: tuple):
    """The function MAKE_FUNCTION makes (rebuilds a NestedFunctionVariable)."""
    fn = types.FunctionType(code, f_globals, code.co_name, defaults or None, closure or None)
    fn.__kwdefaults__ = kwdefaults or None
    return fn


class SuperVariable(VariableTracker):
    """``super()`` inside an inlined method: attribute lookups start after ``cls`` in the MRO."""

    def __init__(self, cls, self_var):
        self.cls, self.self_var = cls, self_var

    def var_getattr(self, tx, name: str) -> VariableTracker:
        owner = getattr(self.self_var, "value", None)
        if isinstance(owner, type):  # super() in a classmethod: the MRO of the class itself
            return self._class_attribute(tx, owner, name)
        mro = self.self_var.python_type().__mro__
        if self.cls not in mro:
            raise Unsupported(f"super() with {self.cls.__qualname__}, which is not a base of the object")
        for klass in mro[mro.index(self.cls) + 1:]:
            if name in klass.__dict__:
                attr = klass.__dict__[name]
                if isinstance(attr, types.FunctionType):
                    return UserMethodVariable(attr, self.self_var)
                base_slot = getattr(self.self_var, "base_slot", None)  # a builtin base's slot it models
                slot = base_slot(klass, name) if base_slot is not None else None
                if slot is not None:
                    return slot
                raise Unsupported(f"super().{name} that is not a plain method")
        raise Unsupported(f"super() has no attribute {name!r}")


    def _class_attribute(self, tx, owner: type, name: str) -> VariableTracker:
        mro = owner.__mro__
        if self.cls not in mro:
            raise Unsupported(f"super() with {self.cls.__qualname__}, which is not a base of the class")
        for klass in mro[mro.index(self.cls) + 1:]:
            if name not in klass.__dict__:
                continue
            base_slot = getattr(self.self_var, "base_slot", None)  # what the class variable models itself
            slot = base_slot(klass, name) if base_slot is not None else None
            if slot is not None:
                return slot
            attr = klass.__dict__[name]
            if isinstance(attr, classmethod) and isinstance(attr.__func__, types.FunctionType):
                return UserMethodVariable(attr.__func__, self.self_var)
            if isinstance(attr, staticmethod) and isinstance(attr.__func__, types.FunctionType):
                return tx.wrap(attr.__func__, None)
            if isinstance(attr, types.FunctionType):
                return tx.wrap(attr, None)  # a plain function read from a class: unbound
            raise Unsupported(f"super().{name} in a classmethod, which is not a Python function")
        raise Unsupported(f"super() has no attribute {name!r}")


def zero_argument_super(tx) -> SuperVariable:
    cell = tx.locals.get("__class__")
    if not isinstance(cell, CellVariable) or cell.contents is None or not tx.code.co_argcount:
        raise Unsupported("super() without arguments outside a method")
    self_var = tx.locals.get(tx.code.co_varnames[0])
    if isinstance(self_var, CellVariable):
        self_var = self_var.contents
    return SuperVariable(cell.contents.as_python_constant(), self_var)


class PartialVariable(VariableTracker):
    """A ``functools.partial``: calling it calls ``func`` with the stored arguments first."""

    def __init__(self, func: VariableTracker, args: list, keywords: dict, source=None):
        self.func, self.args, self.keywords = func, list(args), dict(keywords)
        self.source = source

    def python_type(self) -> type:
        return functools.partial

    def var_getattr(self, tx, name: str) -> VariableTracker:
        attributes = {"func": lambda: self.func, "args": lambda: TupleVariable(self.args),
                      "keywords": lambda: DictVariable(self.keywords)}
        if name not in attributes:
            raise Unsupported(f"functools.partial.{name}")
        return attributes[name]()

    def call(self, tx, args, kwargs) -> VariableTracker:
        return self.func.call(tx, [*self.args, *args], {**self.keywords, **kwargs})

    def children(self) -> list:
        return [self.func, *self.args, *self.keywords.values()]

    def reconstruct(self, cg) -> None:
        if self.source is not None:
            self.source.reconstruct(cg)
            return

        if self.keywords:
            raise Unsupported("rebuilding a functools.partial with keyword arguments")

        cg.call_const_on(functools.partial, [self.func, *self.args])
