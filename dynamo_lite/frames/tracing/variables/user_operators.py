"""Binary operators on instances of user classes: their ``__add__``/``__radd__``/``__iadd__`` ... inlined."""
from __future__ import annotations

import inspect
import operator
import types

from ...bytecode import compat
from ...errors import UserError
from .. import trace_rules
from .base import ConstantVariable
from .functions import UserMethodVariable
from .identity_keys import same_object
from .objects import UserObjectVariable

#: Constants a user object may meet on the other side (their own method gives NotImplemented).
_NUMBERS = (bool, int, float, complex, str, type(None))


def _dunder_table() -> dict:
    """operator -> (symbol, forward, reflected, in-place or None) dunder names (from compat.BINARY_OPERATORS)."""
    table = {}
    for symbol, function in compat.BINARY_OPERATORS.values():
        name = function.__name__.strip("_")
        in_place = symbol.endswith("=")
        base = name[1:] if in_place else name
        table[function] = (symbol, f"__{base}__", f"__r{base}__", f"__{name}__" if in_place else None)
    return table


#: operator -> (symbol, forward, reflected, in-place) names of the methods Python tries.
DUNDERS = _dunder_table()


def _method(variable, name: str):
    """The user-code function the class of ``variable`` defines as ``name``, or None."""
    if not isinstance(variable, UserObjectVariable):
        return None
    method = inspect.getattr_static(type(variable.value), name, None)
    if isinstance(method, types.FunctionType) and trace_rules.rule_for_function(method) == trace_rules.INLINE:
        return method
    return None


def _is_not_implemented(result) -> bool:
    return result.is_python_constant() and result.as_python_constant() is NotImplemented


def _defers(variable) -> bool:
    """Whether this operand's own method surely gives NotImplemented for a user object."""
    return isinstance(variable, UserObjectVariable) or (
        variable.is_python_constant() and type(variable.as_python_constant()) in _NUMBERS)


#: Rich comparisons: operator -> (symbol, method, reflected method).
COMPARISONS = {
    operator.eq: ("==", "__eq__", "__eq__"), operator.ne: ("!=", "__ne__", "__ne__"),
    operator.lt: ("<", "__lt__", "__gt__"), operator.gt: (">", "__gt__", "__lt__"),
    operator.le: ("<=", "__le__", "__ge__"), operator.ge: (">=", "__ge__", "__le__"),
}


def compare(tx, op, left, right):
    """``left <op> right`` for a comparison where a user object takes part: its Python methods
    as Python tries them (``!=`` inverts a Python ``__eq__``); ``==``/``!=`` fall back to
    identity. None where neither operand is a user object (the caller handles it)."""
    if not (isinstance(left, UserObjectVariable) or isinstance(right, UserObjectVariable)):
        return None
    if not (_defers(left) and _defers(right)):
        return None
    symbol, name, reflected = COMPARISONS[op]
    if isinstance(left, UserObjectVariable) and isinstance(right, UserObjectVariable):
        left_type, right_type = type(left.value), type(right.value)
        if right_type is not left_type and issubclass(right_type, left_type) and _method(right, reflected):
            return None  # the subclass's reflected method would run first: not modelled
    for self_var, other, method_name in ((left, right, name), (right, left, reflected)):
        method = _method(self_var, method_name)
        if method is not None:
            result = UserMethodVariable(method, self_var).call(tx, [other], {})
            if not _is_not_implemented(result):
                return result
        elif op is operator.ne and _method(self_var, "__eq__") is not None:
            result = UserMethodVariable(_method(self_var, "__eq__"), self_var).call(tx, [other], {})
            if not _is_not_implemented(result):
                if not result.is_python_constant():
                    return None
                return ConstantVariable(not result.as_python_constant())
    if op in (operator.eq, operator.ne):
        same = same_object(tx, left, right)
        return ConstantVariable(same if op is operator.eq else not same)
    raise UserError(TypeError(f"'{symbol}' not supported between instances of '{_type_name(left)}' and "
                              f"'{_type_name(right)}'"))


def binary(tx, op, left, right):
    """``left <op> right`` through the operands' Python dunder methods, as Python tries them,
    or None where no user object takes part with one (the caller handles it)."""
    if op in COMPARISONS:
        return compare(tx, op, left, right)
    if op not in DUNDERS:
        return None
    symbol, forward, reflected, in_place = DUNDERS[op]
    left_methods = [m for m in (in_place and _method(left, in_place), _method(left, forward)) if m]
    right_method = _method(right, reflected)
    if not left_methods and right_method is None:
        return None
    if isinstance(left, UserObjectVariable) and isinstance(right, UserObjectVariable) and right_method is not None:
        left_type, right_type = type(left.value), type(right.value)
        if right_type is not left_type and issubclass(right_type, left_type):
            return None  # the subclass's reflected method would run first: not modelled
    if not left_methods and not _defers(left):
        return None  # a tensor or container on the left answers first
    for method in left_methods:
        result = UserMethodVariable(method, left).call(tx, [right], {})
        if not _is_not_implemented(result):
            return result
    if right_method is not None:
        result = UserMethodVariable(right_method, right).call(tx, [left], {})
        if not _is_not_implemented(result):
            return result
    elif not _defers(right):
        return None  # a tensor's reflected method would be tried next
    raise UserError(TypeError(f"unsupported operand type(s) for {symbol}: '{_type_name(left)}' and "
                              f"'{_type_name(right)}'"))


def _type_name(variable) -> str:
    try:
        return variable.python_type().__name__
    except Exception:  # a variable without a Python type
        return type(variable).__name__
