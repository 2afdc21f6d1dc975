"""Class objects read or made while tracing: calling one makes an instance (a plain class,
an exception, a namedtuple) or is a graph break."""
from __future__ import annotations

import types

from ...errors import Unsupported
from .. import trace_rules
from ..sources import AttrSource
from .base import ConstantVariable, VariableTracker
from .named_tuples import NamedTupleVariable
from .custom_function import FunctionApplyVariable, is_traceable_function
from .functions import UserFunctionVariable
from .exceptions import ExceptionVariable, is_plain_exception
from .frame_modules import construct_module, is_module_class
from .instances import construct, is_plain_class
from .library import call_special, has_special_handling
from .objects import ObjectVariable
from .type_info import TYPE_INFO_CLASSES, make_type_info


class ClassVariable(ObjectVariable):
    """A class object (used by isinstance, attribute reads of class constants)."""

    def call(self, tx, args, kwargs) -> VariableTracker:
        cls = self.value
        if has_special_handling(cls):
            return call_special(tx, cls, args, kwargs)
        if cls in TYPE_INFO_CLASSES:
            return make_type_info(cls, args, kwargs)
        if is_plain_class(cls):
            return construct(tx, self, args, kwargs)
        if is_module_class(cls):  # NOTE: [modules made in forward]
            return construct_module(tx, cls, args, kwargs)
        if issubclass(cls, BaseException) and not kwargs and all(a.is_python_constant() for a in args):
            if is_plain_exception(cls):
                return ExceptionVariable(cls, list(args))
        if issubclass(cls, tuple) and hasattr(cls, "_fields") and hasattr(cls, "_make"):
            if _generated_new(cls):
                return _make_namedtuple(cls, args, kwargs)
            own_new = _own_new(cls)
            if own_new is not None:  # a subclass's own __new__ (defaults ...), reaching the generated one by super()
                return UserFunctionVariable(own_new, None).call(tx, [self, *args], kwargs)
        raise Unsupported(f"creating an instance of {cls.__qualname__} inside the compiled region")

    def base_slot(self, klass: type, name: str):
        """``super().__new__(cls, ...)`` reaching a namedtuple's generated ``__new__``."""
        if name == "__new__" and "_make" in klass.__dict__ and issubclass(klass, tuple):
            return NamedTupleNewVariable()
        return None

    def var_getattr(self, tx, name: str) -> VariableTracker:
        if name == "apply" and is_traceable_function(self.value):  # NOTE: [custom autograd.Function in the graph]
            return FunctionApplyVariable(self.value, AttrSource(self.source, name) if self.source is not None else None)
        # (a classmethod read here is a new bound method each time: the builder guards its __func__
        # and __self__, and a graph break can rebuild it from the class's source)
        return tx.wrap(getattr(self.value, name), AttrSource(self.source, name) if self.source is not None else None)


class NamedTupleNewVariable(VariableTracker):
    """A namedtuple's generated ``__new__``: ``(cls, *fields)`` makes the tuple."""

    def call(self, tx, args, kwargs) -> VariableTracker:
        if not args or not isinstance(args[0], ClassVariable):
            raise Unsupported("a namedtuple's __new__ without its class")
        return _make_namedtuple(args[0].value, list(args[1:]), kwargs)


def _own_new(cls):
    """The Python ``__new__`` a namedtuple subclass defines (user code, no ``__init__``), or None."""
    owner = next(klass for klass in cls.__mro__ if "__new__" in klass.__dict__)
    new = owner.__dict__["__new__"]
    new = new.__func__ if isinstance(new, staticmethod) else new
    if "_make" in owner.__dict__ or cls.__init__ is not object.__init__ or not isinstance(new, types.FunctionType):
        return None
    return new if trace_rules.rule_for_function(new) == trace_rules.INLINE else None


def _generated_new(cls) -> bool:
    """Whether constructing ``cls`` runs the namedtuple's own ``__new__`` and no ``__init__``
    of a subclass (a subclass adding only methods)."""
    owner = next(klass for klass in cls.__mro__ if "__new__" in klass.__dict__)
    return "_make" in owner.__dict__ and cls.__init__ is object.__init__


def _make_namedtuple(cls, args, kwargs) -> VariableTracker:
    """``cls(*args, **kwargs)`` for a namedtuple class, with its field defaults."""
    fields = cls._fields
    values = dict(zip(fields, args))
    for name, value in kwargs.items():
        if name not in fields or name in values:
            raise Unsupported(f"{cls.__name__}() got a bad or duplicate argument {name!r} (raises in eager)")
        values[name] = value
    defaults = getattr(cls, "_field_defaults", {})
    items = []
    for name in fields:
        if name in values:
            items.append(values[name])
        elif name in defaults:
            items.append(ConstantVariable(defaults[name]))
        else:
            raise Unsupported(f"{cls.__name__}() missing argument {name!r} (raises in eager)")
    if len(args) > len(fields):
        raise Unsupported(f"{cls.__name__}() takes {len(fields)} arguments (raises in eager)")
    return NamedTupleVariable(items, cls)
