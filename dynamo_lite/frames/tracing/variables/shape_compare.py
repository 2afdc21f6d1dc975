"""``x.shape == (n, d)`` with symbolic sizes: compared size by size, each comparison decided
(and guarded only where it is not known), instead of reading every size's value.

``assert freqs.shape == (x.shape[1], x.shape[-1])`` (llama's rotary embedding) then holds for
every sequence length without fixing it to the example's.
"""
from __future__ import annotations

import operator

from ....tensor.symint import SymInt
from .base import ConstantVariable, SymbolicSizesVariable, VariableTracker
from .containers import TupleVariable


def _sizes(variable: VariableTracker):
    """The sizes a shape-like variable holds (ints and SymInts), or None."""
    if isinstance(variable, SymbolicSizesVariable) and isinstance(variable.value, tuple):
        values = tuple(variable.value)
    elif isinstance(variable, TupleVariable) and variable.python_type() is tuple:
        values = tuple(getattr(item, "value", None) if isinstance(item, ConstantVariable) else None
                       for item in variable.items)
    else:
        return None
    return values if all(type(v) in (int, SymInt) for v in values) else None


def compare_shapes(op, left: VariableTracker, right: VariableTracker):
    """``left == right`` / ``!=`` of shape tuples with a symbolic size, or None."""
    if op not in (operator.eq, operator.ne):
        return None
    if not (isinstance(left, SymbolicSizesVariable) or isinstance(right, SymbolicSizesVariable)):
        return None
    a, b = _sizes(left), _sizes(right)
    if a is None or b is None:
        return None
    equal = len(a) == len(b) and all(bool(x == y) for x, y in zip(a, b))
    return ConstantVariable(equal if op is operator.eq else not equal)
