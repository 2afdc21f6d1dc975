"""Instances of user classes created inside the traced frame (``__init__`` inlined)."""
from __future__ import annotations

import inspect
import types

from ...errors import Unsupported, UserError
from .. import trace_rules
from ..side_effects import DELETED
from ..sources import AttrSource, ConstSource
from .functions import UserMethodVariable
from .objects import UserObjectVariable


def is_plain_class(cls) -> bool:
    """A class whose instances the translator can make: created by ``object.__new__``,
    attributes in a plain ``__dict__`` (no slots, no custom ``__setattr__``), no builtin
    base but ``object``, an ``__init__`` that is user code (or none)."""
    if type(cls) is not type or cls.__new__ is not object.__new__ or cls.__setattr__ is not object.__setattr__:
        return False
    if any(k is not object and (k.__module__ == "builtins" or "__slots__" in vars(k)) for k in cls.__mro__):
        return False
    init = inspect.getattr_static(cls, "__init__")
    return init is object.__init__ or (isinstance(init, types.FunctionType)
                                       and trace_rules.rule_for_function(init) == trace_rules.INLINE)


def _new_object(cls, attributes: dict):
    """Rebuild a frame-made instance: ``object.__new__`` plus its attributes (no __init__)."""
    obj = object.__new__(cls)
    obj.__dict__.update(attributes)
    return obj


class FrameObjectVariable(UserObjectVariable):
    """An instance made in the frame: its attributes live in this variable (journaled),
    not in side effects; rebuilt once (with its final attributes) where it escapes."""

    def __init__(self, cls):
        super().__init__(object.__new__(cls), None)  # a stand-in for class lookups; no __init__ runs
        self.attributes: dict = {}

    def stored_attribute(self, tx, name: str):
        return self.attributes.get(name)

    def attribute_source(self, name: str):
        return AttrSource(ConstSource(type(self.value), type(self.value).__qualname__), name)

    def record_store(self, tx, name: str, value) -> None:
        tx.output.side_effects.journal_state(self)
        if value is DELETED:
            self.attributes.pop(name, None)
        else:
            self.attributes[name] = value

    def save_state(self):
        return dict(self.attributes)

    def restore_state(self, state) -> None:
        self.attributes = state

    def as_traceable(self):
        raise Unsupported(f"passing an instance of {type(self.value).__qualname__} made in the frame to library code")

    def children(self) -> list:
        return list(self.attributes.values())

    def reconstruct(self, cg) -> None:
        def emit_args():
            cg.load_const(type(self.value))
            for name, value in self.attributes.items():
                cg.load_const(name)
                cg.reconstruct(value)
            cg.build(dict, len(self.attributes))

        cg.call_const(_new_object, emit_args, 2)


def construct(tx, cls_var, args: list, kwargs: dict) -> FrameObjectVariable:
    """``cls(*args, **kwargs)`` for a plain class: a new instance, ``__init__`` inlined."""
    cls = cls_var.value
    obj = FrameObjectVariable(cls)
    init = inspect.getattr_static(cls, "__init__")
    if init is object.__init__:
        if args or kwargs:
            raise UserError(TypeError(f"{cls.__name__}() takes no arguments"))
        return obj
    result = UserMethodVariable(init, obj).call(tx, args, kwargs)
    if not (result.is_python_constant() and result.as_python_constant() is None):
        raise UserError(TypeError(f"__init__() should return None, not '{result.python_type().__name__}'"))
    return obj
