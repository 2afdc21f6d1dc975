"""``dl.finfo`` / ``dl.iinfo`` (and NumPy's) objects made in the compiled frame: their limits are constants."""
from __future__ import annotations

import numpy as np

from ....tensor.dtype import get_default_dtype
from ....tensor.type_info import finfo, iinfo
from ...errors import Unsupported, UserError
from .base import ConstantVariable, VariableTracker

#: Classes whose instances only hold the numeric limits of a dtype, computed when made.
TYPE_INFO_CLASSES = (finfo, iinfo, np.finfo, np.iinfo)

#: What a limit read from one of them may be (a constant of the trace).
_LIMIT_TYPES = (int, float, bool, str, np.generic, np.dtype)


class TypeInfoVariable(VariableTracker):
    """A ``dl.finfo(dtype)`` or ``dl.iinfo(dtype)`` object, made at trace time from a
    constant dtype (the default dtype is guarded on every entry): reading ``eps``,
    ``max``, ``min``, ``tiny``, ``bits``, ``dtype`` ... gives constants, with no graph
    break. Rebuilt in compiled code as a fresh object, like each eager call makes one."""

    def __init__(self, value, dtype):
        self.value = value
        self.dtype = dtype  # the resolved dtype (finfo() without one: the default dtype)

    def python_type(self) -> type:
        return type(self.value)

    def var_getattr(self, tx, name: str) -> VariableTracker:
        if name.startswith("_"):
            raise Unsupported(f"attribute {name!r} of {self.value!r}")
        try:
            value = getattr(self.value, name)  # NumPy's iinfo computes min/max in properties
        except AttributeError as exc:
            raise UserError(exc) from None
        if not isinstance(value, _LIMIT_TYPES) and value is not self.dtype:
            raise Unsupported(f"attribute {name!r} of {self.value!r}")
        return ConstantVariable(value)

    def reconstruct(self, cg) -> None:
        cg.call_const(type(self.value), lambda: cg.load_const(self.dtype), 1)

    def __repr__(self) -> str:
        return f"TypeInfoVariable({self.value!r})"


def make_type_info(cls, args: list, kwargs: dict) -> VariableTracker:
    """``cls(*args)`` for a class of ``TYPE_INFO_CLASSES`` and constant arguments."""
    if kwargs or len(args) > 1 or not all(a.is_python_constant() for a in args):
        raise Unsupported(f"{cls.__name__}() of a value known only at run time")
    values = [a.as_python_constant() for a in args]
    try:
        value = cls(*values)
    except Exception as exc:  # a bad dtype: the eager call raises the same
        raise UserError(exc) from None
    from_default = not values or values[0] is None
    return TypeInfoVariable(value, get_default_dtype() if from_default else values[0])
