"""The container protocols of user classes: ``len(obj)``, ``obj[k]``, ``k in obj``, ``bool(obj)``
and ``callable(obj)``, each through the class's Python method, inlined (as Python looks it up)."""
from __future__ import annotations

import inspect
import types

from ...errors import Unsupported, UserError
from .. import trace_rules
from .base import ConstantVariable
from .functions import UserMethodVariable
from .identity_keys import contains_by_identity
from .user_iteration import iterate_user_object

_ABSENT = object()


def _lookup(variable, name: str):
    """``(kind, function)``: ("python", fn) for user code, ("absent", None), or ("other", None)
    for a slot the class gets elsewhere (a builtin base, a library class)."""
    method = inspect.getattr_static(type(variable.value), name, _ABSENT)
    if method is _ABSENT or method is getattr(object, name, _ABSENT):
        return "absent", None
    if isinstance(method, types.FunctionType) and trace_rules.rule_for_function(method) == trace_rules.INLINE:
        return "python", method
    return "other", None


def _call(variable, method, tx, args):
    return UserMethodVariable(method, variable).call(tx, args, {})


def length(tx, variable) -> int:
    kind, method = _lookup(variable, "__len__")
    if kind != "python":
        if kind == "absent":
            raise UserError(TypeError(f"object of type '{type(variable.value).__name__}' has no len()"))
        raise Unsupported(f"len() of {variable.describe()}, whose __len__ is not Python code")
    result = _call(variable, method, tx, [])
    if not result.is_python_constant() or type(result.as_python_constant()) is not int:
        raise Unsupported(f"len() of {variable.describe()}: its __len__ gives a value known only at run time")
    value = result.as_python_constant()
    if value < 0:
        raise UserError(ValueError("__len__() should return >= 0"))
    return value


def getitem(tx, variable, key):
    kind, method = _lookup(variable, "__getitem__")
    if kind != "python":
        raise Unsupported(f"subscript of {variable.describe()}")
    return _call(variable, method, tx, [key])


def truth(tx, variable) -> bool:
    """``bool(obj)``: its ``__bool__``, else ``len(obj) != 0``, else True."""
    kind, method = _lookup(variable, "__bool__")
    if kind == "python":
        result = _call(variable, method, tx, [])
        if not result.is_python_constant() or type(result.as_python_constant()) is not bool:
            if result.is_python_constant():
                raise UserError(TypeError(f"__bool__ should return bool, returned "
                                          f"{type(result.as_python_constant()).__name__}"))
            raise Unsupported(f"the truth of {variable.describe()}: its __bool__ gives a value known only at run time")
        return result.as_python_constant()
    if kind == "other":
        raise Unsupported(f"the truth of {variable.describe()}, whose __bool__ is not Python code")
    len_kind, _ = _lookup(variable, "__len__")
    if len_kind == "absent":
        return True
    return length(tx, variable) != 0


def contains(tx, variable, item) -> bool:
    """``item in obj``: its ``__contains__``, else a walk of its ``__iter__`` (stopping at the match)."""
    kind, method = _lookup(variable, "__contains__")
    if kind == "python":
        result = _call(variable, method, tx, [item])
        if result.is_python_constant():
            return bool(result.as_python_constant())
        return result.truth(tx)
    if kind == "other" or _lookup(variable, "__iter__")[0] != "python":
        raise Unsupported(f"'in' test on {variable.describe()}")
    iterator = iterate_user_object(tx, variable)
    while (element := iterator.next_item(tx)) is not None:
        if contains_by_identity(tx, item, [element]):
            return True
    return False


def is_callable(variable) -> ConstantVariable:
    """``callable(value)``: whether its type has ``__call__`` (what the builtin checks)."""
    if variable.is_python_constant():
        return ConstantVariable(callable(variable.as_python_constant()))
    try:
        kind = variable.python_type()
    except Unsupported:
        raise Unsupported(f"callable() of {variable.describe()}") from None
    return ConstantVariable(any("__call__" in vars(klass) for klass in kind.__mro__))
