"""The operations on symbolic ints that stay symbolic (NOTE: [observing a symbolic int]).

Everything not listed here reads a symbolic int's concrete value and specializes it;
these give the same answer as on the int for every size, so they keep the expression.

Example:
    ``n = x.shape[0]; m = n * 2 - 1; if m > 4: ...`` keeps ``m = 2*s0 - 1`` and guards
    ``2*s0 - 1 > 4``; ``hash(n)`` makes the compiled code serve only ``s0 == n``.
"""
from __future__ import annotations

import math
import operator

from ....tensor.layout import Size
from ....tensor.symint import SymInt
from .base import ConstantVariable, SymbolicSizesVariable, SymIntVariable, VariableTracker, traceable_value
from .containers import BaseListVariable, TupleVariable
from .shape_compare import compare_shapes

#: int operators exact on expressions (sizes are ints; comparisons are decided and guarded).
ARITHMETIC = frozenset({
    operator.add, operator.sub, operator.mul, operator.iadd, operator.isub, operator.imul,
    operator.lt, operator.le, operator.eq, operator.ne, operator.gt, operator.ge,
})
#: Divisions: exact on expressions when the divisor is positive.
DIVISIONS = frozenset({operator.floordiv, operator.mod, operator.ifloordiv, operator.imod})
#: One-argument operators kept symbolic.
UNARY = frozenset({operator.neg, operator.pos})
#: Builtins and pure functions computed on the expressions (results equal the int answers).
FUNCTIONS = frozenset({min, max, abs, sum, math.prod})


def _int_operand(variable) -> bool:
    """A symbolic int, or a constant int (not a bool: ``True + s0`` is rare, keep it exact)."""
    return isinstance(variable, SymIntVariable) or (
        isinstance(variable, ConstantVariable) and type(variable.value) is int)


def _positive(variable) -> bool:
    return isinstance(variable, SymIntVariable) or variable.value > 0


def _shape_tuple(variable) -> bool:
    """A shape constant (``x.shape``, symbolic or not)."""
    return isinstance(variable, ConstantVariable) and isinstance(variable.value, tuple)


def binary(tx, op, left: VariableTracker, right: VariableTracker):
    """``op(left, right)`` kept symbolic, or None when it must read concrete values."""
    compared = compare_shapes(op, left, right)  # x.shape == (n, d): size by size
    if compared is not None:
        return compared
    if op in (operator.add, operator.iadd) and (_shape_tuple(left) or _shape_tuple(right)) and any(
            isinstance(v, (BaseListVariable, SymbolicSizesVariable)) for v in (left, right)):
        # ``x.shape + (h, d)``: concatenation never looks at the sizes (a Size on the left
        # gives a Size, as in eager code).
        joined = _size_concatenation(tx, left, right)
        return joined if joined is not None else tx.binary_operation(op, as_tuple(left), as_tuple(right))
    if not isinstance(left, (SymIntVariable, SymbolicSizesVariable)) and not isinstance(
            right, (SymIntVariable, SymbolicSizesVariable)):
        return None
    if not (_int_operand(left) and _int_operand(right)):
        return None
    if op in DIVISIONS and not _positive(right):
        return None
    if op not in ARITHMETIC and op not in DIVISIONS:
        return None
    return tx.wrap_constant(op(left.as_traceable(), right.as_traceable()))


def unary(op, value: VariableTracker):
    """``op(value)`` kept symbolic, or None."""
    if op in UNARY and isinstance(value, SymIntVariable):
        return ConstantVariable(op(value.value))
    return None


def call(tx, fn, args: list, kwargs: dict):
    """``fn(*args)`` for a builtin or pure function over symbolic ints, or None."""
    symbolic = [a for a in args if isinstance(a, (SymIntVariable, SymbolicSizesVariable))]
    if not symbolic or kwargs:
        return None
    if fn is isinstance and len(args) == 2:
        return ConstantVariable(issubclass(args[0].python_type(), args[1].as_python_constant()))
    if fn in (int, bool) and len(args) == 1 and isinstance(args[0], SymIntVariable):
        return args[0] if fn is int else ConstantVariable(args[0].truth(tx))
    if fn is len and len(args) == 1 and _shape_tuple(args[0]):
        return ConstantVariable(args[0].length(tx))
    if fn not in FUNCTIONS or not all(isinstance(a, ConstantVariable) for a in args):
        return None
    values = [traceable_value(a) for a in args]
    if not all(_sizes_or_ints(v) for v in values):
        return None
    return tx.wrap_constant(fn(*values))


def _sizes_or_ints(value) -> bool:
    if isinstance(value, tuple):
        return all(type(v) in (int, SymInt) for v in value)
    return type(value) in (int, SymInt)


def _size_concatenation(tx, left, right):
    """``size + tuple`` as a Size when both hold only ints (symbolic or not), else None."""
    if not (_shape_tuple(left) and isinstance(left.value, Size)):
        return None
    right = as_tuple(right)
    if not (isinstance(right, TupleVariable) and right.python_type() in (tuple, Size)):
        return None
    if not all(isinstance(item, (ConstantVariable, SymIntVariable)) and _is_int(item) for item in right.items):
        return None
    return tx.wrap_constant(Size(tuple(left.as_traceable()) + tuple(traceable_value(item) for item in right.items)))


def _is_int(variable) -> bool:
    value = variable.as_traceable() if isinstance(variable, SymIntVariable) else variable.value
    return type(value) in (int, SymInt)


def as_tuple(variable) -> VariableTracker:
    """A shape constant as a TupleVariable of its sizes (other variables unchanged)."""
    if _shape_tuple(variable):
        return TupleVariable([ConstantVariable(v) for v in variable.value])
    return variable
