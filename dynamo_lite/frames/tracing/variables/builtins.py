"""Python builtins during tracing: a table from builtin to handler."""
from __future__ import annotations

import abc
import builtins
import inspect
import operator
import types
import typing

from ...errors import Unsupported, UserError
from .. import trace_rules
from ..guards import ID_MATCH
from ..sources import ConstSource
from .base import ConstantVariable, ValueVariable, VariableTracker
from .classes import ClassVariable
from .objects import ObjectVariable
from .containers import ContainerMethodVariable, ListVariable, TupleVariable
from .dicts import DictVariable, constant_key, make_dict
from .exceptions import RuntimeValueVariable
from .functions import SuperVariable, zero_argument_super
from .iterators import IteratorVariable, LazyIteratorVariable, iterate
from .user_iteration import user_iterator
from .scan_values import symbolic_range
from .sets import SetVariable
from . import lifted_float, symbolic, user_protocols
from .tensor import TensorVariable, TracedCallableVariable

# Builtins that are pure functions of constant arguments: called directly on constants.
PURE_ON_CONSTANTS = {
    abs, all, any, bool, callable, chr, divmod, float, format, hash, int, isinstance, issubclass,
    len, max, min, ord, pow, repr, round, sorted, str, sum, tuple, range, slice, hex, oct, bin,
}


def _constants(args, kwargs):
    return [a.as_python_constant() for a in args], {k: v.as_python_constant() for k, v in kwargs.items()}


def _all_constant(args, kwargs) -> bool:
    return all(a.is_python_constant() for a in [*args, *kwargs.values()])


def _len(tx, obj):
    if isinstance(obj, TensorVariable):
        if not obj.proxy.ndim:
            raise UserError(TypeError("len() of a 0-d tensor"))
        return ConstantVariable(obj.proxy.shape[0])
    if hasattr(obj, "length"):
        return ConstantVariable(obj.length(tx))
    return ConstantVariable(len(obj.as_python_constant()))


def _isinstance(tx, obj, classes):
    cls = classes.as_python_constant()
    for klass in _flatten_classes(cls):
        check = inspect.getattr_static(type(klass), "__instancecheck__", None)
        if check in _TYPE_INSTANCECHECKS:
            if issubclass(obj.python_type(), klass):
                return ConstantVariable(True)
        elif isinstance(check, types.FunctionType) and trace_rules.rule_for_function(check) == trace_rules.INLINE:
            # a metaclass's own __instancecheck__ (user code) decides, as in eager Python
            if tx.wrap(check, None).call(tx, [tx.wrap(klass, None), obj], {}).truth(tx):
                return ConstantVariable(True)
        else:
            raise Unsupported(f"isinstance() against {klass.__qualname__}, whose metaclass "
                              f"{type(klass).__qualname__} decides instances in library code")
    return ConstantVariable(False)


#: ``__instancecheck__``s that agree with ``issubclass(type(obj), cls)`` for objects whose
#: ``__class__`` is their type (abc's checks subclasses and registrations the same way).
_TYPE_INSTANCECHECKS = (type.__dict__["__instancecheck__"], abc.ABCMeta.__dict__["__instancecheck__"])


def _flatten_classes(classes) -> list:
    """The classes of isinstance's second argument (a class, or nested tuples of them)."""
    pending, flat = [classes], []
    while pending:
        item = pending.pop(0)
        if isinstance(item, tuple):
            pending[:0] = list(item)
        elif isinstance(item, type):
            flat.append(item)
        elif isinstance(item, types.UnionType) or typing.get_origin(item) is typing.Union:
            pending[:0] = list(typing.get_args(item))
        else:
            raise UserError(TypeError("isinstance() arg 2 must be a type, a tuple of types, or a union"))
    return flat


def _issubclass(tx, cls, classes):
    # (a tuple of classes is not a constant container: TupleVariable folds only constants)
    try:
        return ConstantVariable(issubclass(cls.as_python_constant(), classes.as_python_constant()))
    except TypeError as exc:
        raise UserError(exc) from None


def _text_at_run_time(convert):
    """``str(e)``/``repr(e)`` of a caught exception or a lifted float: computed when the code runs."""
    def handler(tx, *args, **kwargs):
        if len(args) == 1 and not kwargs and args[0].formats_at_run_time():
            return RuntimeValueVariable(convert, [args[0].run_time_operand()], str)
        raise Unsupported(f"builtin {convert.__name__}() with these arguments")

    return handler


def _format(tx, value, spec=None):
    """``format(value, spec)`` of a value formatted when the code runs (``_text_at_run_time``)."""
    spec = spec if spec is not None else ConstantVariable("")
    if value.formats_at_run_time() and spec.is_python_constant():
        return RuntimeValueVariable(format, [value.run_time_operand(), spec], str)
    raise Unsupported("builtin format() with these arguments")


def _tuple(tx, value=None):
    return TupleVariable([] if value is None else iterate(tx, value).unpack(tx))


def _list(tx, value=None):
    return ListVariable([] if value is None else iterate(tx, value).unpack(tx))


def _zip(tx, *iterables, strict=None):
    checked = strict is not None and bool(strict.as_python_constant())
    return LazyIteratorVariable("zip", [iterate(tx, it) for it in iterables], strict=checked)


def _enumerate(tx, iterable, start=None):
    first = 0 if start is None else start.as_python_constant()
    return LazyIteratorVariable("enumerate", [iterate(tx, iterable)], start=first)


def _map(tx, fn, *iterables):
    if not iterables:
        raise UserError(TypeError("map() must have at least two arguments."))
    return LazyIteratorVariable("map", [iterate(tx, it) for it in iterables], fn=fn)


def _filter(tx, fn, iterable):
    return LazyIteratorVariable("filter", [iterate(tx, iterable)], fn=fn)


def _reversed(tx, value):
    return IteratorVariable(list(reversed(value.unpack(tx))))


def _iter(tx, value):
    return iterate(tx, value)


def _next(tx, iterator, default=None):
    iterator = user_iterator(iterator) or iterator  # an object with a Python __next__
    if not isinstance(iterator, IteratorVariable):
        raise Unsupported("next() on a non-iterator")
    item = iterator.next_item(tx)
    if item is None:
        if default is None:
            raise UserError(StopIteration())
        return default
    return item


def _dict(tx, *args, **kwargs):
    return make_dict(tx, dict, list(args), kwargs)


def _sorted(tx, iterable, **kwargs):
    result = ListVariable(iterate(tx, iterable).unpack(tx))
    ContainerMethodVariable(result, "sort").call(tx, [], kwargs)
    return result


def _set_of(set_type):
    def handler(tx, iterable=None):
        return SetVariable.of([] if iterable is None else iterate(tx, iterable).unpack(tx), set_type, tx)

    return handler


def _getattr(tx, obj, name, default=None):
    try:
        with tx.output.speculate():
            return obj.var_getattr(tx, name.as_python_constant())
    except UserError as exc:
        if default is None or not isinstance(exc.exception, AttributeError):
            raise
        return default


def _hasattr(tx, obj, name):
    value = getattr(obj, "value", None)
    if isinstance(value, (type, types.ModuleType)) and obj.source is not None:
        return ConstantVariable(hasattr(value, name.as_python_constant()))  # guarded by identity
    try:
        with tx.output.speculate():
            obj.var_getattr(tx, name.as_python_constant())
    except UserError as exc:
        if not isinstance(exc.exception, AttributeError):
            raise
        return ConstantVariable(False)
    except Unsupported:
        if obj.is_python_constant():
            return ConstantVariable(hasattr(obj.as_python_constant(), name.as_python_constant()))
        raise
    return ConstantVariable(True)


def _min_max(pick):
    def handler(tx, *args, **kwargs):
        items = iterate(tx, args[0]).unpack(tx) if len(args) == 1 else list(args)
        if items and not kwargs and all(item.is_python_constant() for item in items):
            return tx.wrap_constant(pick(item.as_python_constant() for item in items))
        # Anything else compares values with __bool__ (tensors: data-dependent).
        raise Unsupported(f"{pick.__name__}() over values that are not constants (data-dependent)",
                          hint="use dl.minimum/dl.maximum for tensors")

    return handler


def _abs(tx, value):
    return TracedCallableVariable(operator.abs, "abs").call(tx, [value], {})


def _type(tx, value):
    cls = value.python_type()  # guarded already: the value's type is part of its guards
    return ClassVariable(cls, ConstSource(cls, f"type({cls.__qualname__})"))


def _sum(tx, iterable, start=None):
    items = iterate(tx, iterable).unpack(tx)
    total = start if start is not None else ConstantVariable(0)
    for item in items:
        total = tx.binary_operation(operator.add, total, item)
    return total


def _setattr(tx, obj, name, value):
    """``setattr(obj, "name", value)``: the attribute store STORE_ATTR makes."""
    if not name.is_python_constant() or not isinstance(obj, (ObjectVariable, TensorVariable)) or isinstance(
            getattr(obj, "value", None), type):
        raise Unsupported(f"setattr() on {obj.describe()} with a name that is not a constant")
    attribute = name.as_python_constant()
    if not isinstance(attribute, str):
        raise UserError(TypeError(f"attribute name must be string, not '{type(attribute).__name__}'"))
    obj.store_attribute(tx, attribute, value)
    return ConstantVariable(None)


def _any_all(pick):
    """``any(...)``/``all(...)`` over an iterable whose items' truth is known while tracing
    (``any(p.requires_grad for p in m.parameters())``); a tensor's truth is data-dependent."""
    def handler(tx, iterable):
        iterator = iterate(tx, iterable)
        while True:
            item = iterator.next_item(tx)
            if item is None:
                return ConstantVariable(pick is all)
            if isinstance(item, TensorVariable):
                raise Unsupported(f"{pick.__name__}() over tensors needs their values (data-dependent)")
            if item.truth(tx) is (pick is any):
                return ConstantVariable(pick is any)  # stops early, as Python does

    return handler


def _id(tx, obj):
    """``id(obj)`` of an object read from the frame: a constant under the identity guard."""
    value = getattr(obj, "value", None)
    if value is None:  # a list or dict read from the frame: its variable is tracked by identity
        value = next((real for real, variable in tx.output.objects.values() if variable is obj), None)
    if obj.source is None or value is None or isinstance(obj, TensorVariable):
        raise Unsupported("id() of an object made in the compiled region (or a tensor)")
    tx.output.guards.add(obj.source, ID_MATCH, value)
    return ConstantVariable(id(value))


def _print(tx, *args, **kwargs):
    raise Unsupported("print() has a side effect outside the graph",
                      hint="move the print out of the hot path, or accept the graph break")


def _super(tx, cls=None, obj=None):
    if cls is None:
        return zero_argument_super(tx)
    return SuperVariable(cls.as_python_constant(), obj)


def _bool(tx, value=None):
    """``bool(value)`` of a value that is not a constant: its truth (a user object's __bool__/__len__)."""
    if value is None:
        return ConstantVariable(False)
    if isinstance(value, TensorVariable):
        raise Unsupported("bool() of a tensor needs its value (data-dependent)",
                          hint="keep the tensor in the graph, or move the conversion out of the compiled region")
    return ConstantVariable(bool(value.truth(tx)))


BUILTIN_HANDLERS = {
    callable: lambda tx, obj: user_protocols.is_callable(obj),
    bool: _bool,
    super: _super,
    len: _len,
    isinstance: _isinstance,
    issubclass: _issubclass,
    tuple: _tuple,
    list: _list,
    zip: _zip,
    enumerate: _enumerate,
    map: _map,
    filter: _filter,
    dict: _dict,
    sorted: _sorted,
    set: _set_of(set),
    frozenset: _set_of(frozenset),
    reversed: _reversed,
    iter: _iter,
    next: _next,
    getattr: _getattr,
    setattr: _setattr,
    any: _any_all(any),
    all: _any_all(all),
    id: _id,
    hasattr: _hasattr,
    min: _min_max(min),
    max: _min_max(max),
    abs: _abs,
    type: _type,
    sum: _sum,
    print: _print,
    str: _text_at_run_time(str),
    repr: _text_at_run_time(repr),
    format: _format,
}


def _dict_fromkeys(tx, keys, value=None):
    """``dict.fromkeys(keys, value)``: every key maps to the same value object."""
    value = value if value is not None else ConstantVariable(None)
    return DictVariable({constant_key(key, tx): value for key in iterate(tx, keys).unpack(tx)})


#: (builtin, attribute) -> handler(tx, *args, **kwargs) of the attribute's call.
BUILTIN_ATTRIBUTES = {
    (dict, "fromkeys"): _dict_fromkeys,
}


class BuiltinAttributeVariable(ValueVariable):
    """A modelled attribute of a builtin (``dict.fromkeys``): calling it runs its handler."""

    def __init__(self, value, handler):
        super().__init__(value)
        self.handler = handler

    def call(self, tx, args, kwargs) -> VariableTracker:
        return self.handler(tx, *args, **kwargs)

    def reconstruct(self, cg) -> None:
        cg.load_const(self.value)


class BuiltinVariable(ValueVariable):
    """A Python builtin such as ``len``, ``isinstance``, ``range`` or ``zip``."""

    def var_getattr(self, tx, name: str) -> VariableTracker:
        handler = BUILTIN_ATTRIBUTES.get((self.fn, name))
        if handler is not None:
            return BuiltinAttributeVariable(getattr(self.fn, name), handler)
        return super().var_getattr(tx, name)

    def call(self, tx, args, kwargs) -> VariableTracker:
        if self.fn is range:  # a loop over it may be scanned (NOTE: [loops traced once])
            scanned_range = symbolic_range(tx, args, kwargs)
            if scanned_range is not None:
                return scanned_range
        kept_symbolic = symbolic.call(tx, self.fn, args, kwargs)  # NOTE: [observing a symbolic int]
        if kept_symbolic is None:
            kept_symbolic = lifted_float.builtin_call(self.fn, args, kwargs)  # NOTE: [lifted floats]
        if kept_symbolic is not None:
            return kept_symbolic
        if self.fn in PURE_ON_CONSTANTS and _all_constant(args, kwargs):
            values, kw = _constants(args, kwargs)
            try:
                result = self.fn(*values, **kw)
            except Exception as exc:
                raise Unsupported(f"{self.fn.__name__}() raised {type(exc).__name__}: {exc}") from None
            return tx.wrap_constant(result)
        handler = BUILTIN_HANDLERS.get(self.fn)
        if handler is not None:
            return handler(tx, *args, **kwargs)
        if self.fn in (float, int, bool) and len(args) == 1 and isinstance(args[0], TensorVariable):
            raise Unsupported(f"{self.fn.__name__}() of a tensor needs its value (data-dependent)",
                              hint="keep the tensor in the graph, or move the conversion out of the compiled region")
        raise Unsupported(f"builtin {getattr(self.fn, '__name__', self.fn)}() with these arguments")

    def __repr__(self) -> str:
        return f"BuiltinVariable({getattr(self.fn, '__name__', self.fn)})"


#: C modules whose functions are pure: called directly when every argument is a constant.
PURE_MODULES = ("math", "cmath", "operator", "_operator")


def is_builtin(value) -> bool:
    name = getattr(value, "__name__", None)
    return name is not None and getattr(builtins, name, None) is value


def is_pure_library_function(value) -> bool:
    return isinstance(value, types.BuiltinFunctionType) and getattr(value, "__module__", None) in PURE_MODULES


class PureFunctionVariable(ValueVariable):
    """A function of ``math``/``operator``: folded when its arguments are constants."""

    def call(self, tx, args, kwargs) -> VariableTracker:
        kept_symbolic = symbolic.call(tx, self.fn, args, kwargs)
        if kept_symbolic is not None:
            return kept_symbolic
        if not _all_constant(args, kwargs):
            if any(isinstance(a, TensorVariable) for a in args) and self.fn.__module__ in ("operator", "_operator"):
                return TracedCallableVariable(self.fn, self.fn.__name__).call(tx, args, kwargs)
            raise Unsupported(f"{self.fn.__module__}.{self.fn.__name__}() of values that are not constants")
        values, kw = _constants(args, kwargs)
        try:
            return tx.wrap_constant(self.fn(*values, **kw))
        except Exception as exc:
            raise Unsupported(f"{self.fn.__name__}() raised {type(exc).__name__}: {exc}") from None

    def reconstruct(self, cg) -> None:
        cg.load_const(self.fn)
