"""``dataclasses.fields``/``asdict``/``astuple``/``replace``/``is_dataclass`` on traced values: the
class's field table is read while tracing (its class is guarded), field values are variables."""
from __future__ import annotations

import dataclasses

from ...errors import Unsupported, UserError
from .base import ConstantVariable
from .containers import ListVariable, TupleVariable
from .dicts import DictVariable
from .named_tuples import NamedTupleVariable
from .object_copies import deepcopy
from .objects import UserObjectVariable


def _dataclass_type(variable, what: str) -> type:
    """The dataclass of an instance variable (a TypeError like eager's for anything else)."""
    value = getattr(variable, "value", None)
    if isinstance(variable, UserObjectVariable) and dataclasses.is_dataclass(type(value)):
        return type(value)
    if variable.is_python_constant() or isinstance(variable, (ListVariable, TupleVariable, DictVariable)):
        raise UserError(TypeError(f"{what}() should be called on dataclass instances"))
    raise Unsupported(f"dataclasses.{what}() of {variable.describe()}")


def _fields(tx, class_or_instance):
    value = getattr(class_or_instance, "value", None)
    cls = value if isinstance(value, type) else type(value)
    if value is None or not dataclasses.is_dataclass(cls):
        if class_or_instance.is_python_constant():
            raise UserError(TypeError("must be called with a dataclass type or instance"))
        raise Unsupported(f"dataclasses.fields() of {class_or_instance.describe()}")
    return TupleVariable([ConstantVariable(field) for field in dataclasses.fields(cls)])  # the class's own Fields


def _is_dataclass(tx, obj):
    value = getattr(obj, "value", None)
    if obj.is_python_constant():
        return ConstantVariable(dataclasses.is_dataclass(obj.as_python_constant()))
    if isinstance(obj, UserObjectVariable):
        return ConstantVariable(dataclasses.is_dataclass(value))
    if isinstance(obj, (ListVariable, TupleVariable, DictVariable)):
        return ConstantVariable(False)
    raise Unsupported(f"dataclasses.is_dataclass() of {obj.describe()}")


def _converter(kind):
    """``asdict``/``astuple``: fields converted recursively as the dataclasses module does."""
    def inner(tx, value, factory):
        if isinstance(value, UserObjectVariable) and dataclasses.is_dataclass(type(value.value)):
            names = [field.name for field in dataclasses.fields(type(value.value))]
            converted = [inner(tx, value.var_getattr(tx, name), factory) for name in names]
            if kind == "asdict":
                return _made(tx, kind, factory, [TupleVariable([ConstantVariable(n), v]) for n, v in zip(names, converted)])
            return _made(tx, kind, factory, converted)
        if isinstance(value, NamedTupleVariable):
            return NamedTupleVariable([inner(tx, item, factory) for item in value.items], value.tuple_type)
        if type(value) in (ListVariable, TupleVariable):
            return type(value)([inner(tx, item, factory) for item in value.items])
        if type(value) is DictVariable and value.dict_type is dict:
            return DictVariable({key: inner(tx, item, factory) for key, item in value.items.items()})
        return deepcopy(tx, value)

    def convert(tx, obj, **kwargs):
        factory_name = "dict_factory" if kind == "asdict" else "tuple_factory"
        if set(kwargs) - {factory_name}:
            raise UserError(TypeError(f"{kind}() got an unexpected keyword argument {sorted(kwargs)[0]!r}"))
        _dataclass_type(obj, kind)
        return inner(tx, obj, kwargs.get(factory_name))

    return convert


def _made(tx, kind: str, factory, items: list):
    """``factory(items)`` (a list, as the dataclasses module passes it), else the plain dict or tuple."""
    if factory is not None:
        return factory.call(tx, [ListVariable(items)], {})
    if kind == "asdict":
        return DictVariable({pair.items[0].as_python_constant(): pair.items[1] for pair in items})
    return TupleVariable(items)


def _replace(tx, obj, **changes):
    cls = _dataclass_type(obj, "replace")
    for field in getattr(cls, "__dataclass_fields__").values():
        if field._field_type is dataclasses._FIELD_CLASSVAR:
            continue
        if not field.init:
            if field.name in changes:
                raise UserError(ValueError(f"field {field.name} is declared with init=False, it cannot be "
                                           "specified with replace()"))
            continue
        if field.name not in changes:
            if field._field_type is dataclasses._FIELD_INITVAR and field.default is dataclasses.MISSING:
                raise UserError(ValueError(f"InitVar {field.name!r} must be specified with replace()"))
            changes[field.name] = obj.var_getattr(tx, field.name)
    return tx.wrap(cls, None).call(tx, [], changes)


#: The ``dataclasses`` functions this module models.
DATACLASS_FUNCTIONS = {
    dataclasses.fields: _fields,
    dataclasses.is_dataclass: _is_dataclass,
    dataclasses.asdict: _converter("asdict"),
    dataclasses.astuple: _converter("astuple"),
    dataclasses.replace: _replace,
}
