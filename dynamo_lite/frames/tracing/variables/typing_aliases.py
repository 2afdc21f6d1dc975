"""Annotations evaluated in traced code (``List[Tensor]``, ``Tuple[int, ...]``): folded to constants.

Subscripting a ``typing`` generic (or a builtin container class) only builds an alias
object, with no effect on the program, so the translator computes it at trace time
(TorchScript-style code writes ``jit.annotate(List[Tensor], [])`` in its hot loops).
"""
from __future__ import annotations

import types

from .base import ConstantVariable, VariableTracker

_BUILTIN_GENERICS = (list, tuple, dict, set, frozenset, type)


def is_typing_generic(value) -> bool:
    """True for ``typing.List``, ``typing.Tuple[int]``, ``Optional``, ``list`` ... (subscriptable aliases)."""
    if any(value is cls for cls in _BUILTIN_GENERICS):
        return True
    return isinstance(value, types.GenericAlias) or getattr(type(value), "__module__", None) == "typing"


def _annotation_value(var: VariableTracker):
    """The Python object an annotation argument stands for (a class, an alias, a tuple of them)."""
    items = getattr(var, "items", None)
    if isinstance(items, list) and var.python_type() is tuple:
        return tuple(_annotation_value(item) for item in items)
    if var.is_python_constant():
        return var.as_python_constant()
    return getattr(var, "value", var)


def fold_typing_subscript(tx, container: VariableTracker, key: VariableTracker) -> VariableTracker | None:
    """``container[key]`` computed now when ``container`` is a typing generic, else None."""
    value = getattr(container, "value", None)
    if value is None or not is_typing_generic(value):
        return None
    try:
        folded = value[_annotation_value(key)]
    except Exception:  # what eager raises is raised by the eager run of the break
        return None
    return ConstantVariable(folded)



