"""Namedtuples (``collections.namedtuple``, ``typing.NamedTuple`` and their subclasses):
fields by name, the generated helpers, and the subclass's own Python methods inlined."""
from __future__ import annotations

import inspect
import types

from ...errors import Unsupported, UserError
from .. import trace_rules
from .base import ConstantVariable, VariableTracker
from .containers import ContainerMethodVariable, TupleVariable
from .functions import UserMethodVariable


class NamedTupleVariable(TupleVariable):
    """A namedtuple: a ``max(dim=...)`` result, an argument, or one built in the frame."""

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
        if name in fields and _field_property(self.tuple_type, name):
            return self.items[fields.index(name)]
        if name in ("_fields", "_field_defaults"):
            return ConstantVariable(getattr(self.tuple_type, name))
        if name == "_asdict":
            return ContainerMethodVariable(self, name)
        if name == "_replace":
            return ReplaceMethodVariable(self)
        static = inspect.getattr_static(self.tuple_type, name, None)
        if _user_function(static):
            return UserMethodVariable(static, self)
        if isinstance(static, property) and _user_function(static.fget):
            return UserMethodVariable(static.fget, self).call(tx, [], {})
        if isinstance(static, staticmethod) and _user_function(static.__func__):
            return tx.wrap(static.__func__, None)
        if isinstance(static, classmethod) and _user_function(static.__func__):
            return UserMethodVariable(static.__func__, tx.wrap(self.tuple_type, None))
        if static is not None and type(static) in (int, float, str, bool, type(None)) and name not in fields:
            return ConstantVariable(static)  # a class constant of the subclass
        return super().var_getattr(tx, name)

    def getitem(self, tx, key: VariableTracker) -> VariableTracker:
        own = inspect.getattr_static(self.tuple_type, "__getitem__", None)
        if own is tuple.__getitem__:
            return super().getitem(tx, key)
        if _user_function(own):
            return UserMethodVariable(own, self).call(tx, [key], {})
        raise Unsupported(f"{self.tuple_type.__qualname__}[...] through a __getitem__ the compiler does not model")

    def base_slot(self, klass: type, name: str):
        """What ``super().name`` reaches past the subclass when ``klass`` (a base in the MRO)
        holds ``tuple``'s own slot: ``super().__getitem__(i)`` in an override, or None."""
        if klass is tuple and name == "__getitem__":
            return TupleSlotVariable(self, name)
        return None

    def reconstruct(self, cg) -> None:
        if self.source is not None:
            self.source.reconstruct(cg)
            return
        cg.call_const_on(self.tuple_type, self.items)


class ReplaceMethodVariable(VariableTracker):
    """``nt._replace(field=value, ...)``: a new namedtuple of the same class."""

    def __init__(self, target: NamedTupleVariable):
        self.target = target

    def call(self, tx, args, kwargs) -> VariableTracker:
        target = self.target
        fields = target.tuple_type._fields
        if args:
            raise UserError(TypeError(f"{target.tuple_type.__name__}._replace() takes 1 positional argument but "
                                      f"{len(args) + 1} were given"))
        unknown = [name for name in kwargs if name not in fields]
        if unknown:
            raise UserError(ValueError(f"Got unexpected field names: {unknown!r}"))
        return NamedTupleVariable([kwargs.get(name, item) for name, item in zip(fields, target.items)],
                                  target.tuple_type)

    def children(self) -> list:
        return [self.target]

    def reconstruct(self, cg) -> None:
        cg.reconstruct(self.target)
        cg.load_attr("_replace")


def _field_property(cls, name: str) -> bool:
    """Whether ``cls.name`` is still the namedtuple's field accessor (not overridden)."""
    static = inspect.getattr_static(cls, name, None)
    return type(static).__name__ in ("_tuplegetter", "property") and not (
        isinstance(static, property) and _user_function(static.fget))


def _user_function(value) -> bool:
    return isinstance(value, types.FunctionType) and trace_rules.rule_for_function(value) == trace_rules.INLINE


class TupleSlotVariable(VariableTracker):
    """``tuple.__getitem__`` bound to a namedtuple variable, past the subclass's override."""

    def __init__(self, target: NamedTupleVariable, name: str):
        self.target, self.name = target, name

    def call(self, tx, args, kwargs) -> VariableTracker:
        if kwargs or len(args) != 1:
            raise UserError(TypeError(f"expected 1 argument, got {len(args)}"))
        return TupleVariable.getitem(self.target, tx, args[0])

    def children(self) -> list:
        return [self.target]
