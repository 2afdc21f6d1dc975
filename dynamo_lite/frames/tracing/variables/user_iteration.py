"""Iterating over instances of user classes: their ``__iter__`` and ``__next__`` are inlined."""
from __future__ import annotations

import inspect
import types

from ...errors import Unsupported, UserError
from .. import trace_rules
from .functions import UserMethodVariable
from .iterators import IteratorVariable


def _python_method(variable, name: str):
    """The user-code function the class of ``variable.value`` defines as ``name``, or None."""
    method = inspect.getattr_static(type(variable.value), name, None)
    if isinstance(method, types.FunctionType) and trace_rules.rule_for_function(method) == trace_rules.INLINE:
        return method
    return None


def iterate_user_object(tx, variable) -> IteratorVariable:
    """``iter(obj)``: the class's ``__iter__`` inlined; a generator or modelled iterator it
    returns is used as it is, a user object with ``__next__`` is stepped through that."""
    method = _python_method(variable, "__iter__")
    if method is None:
        raise Unsupported(f"iterating over {variable.describe()}, whose class has no Python __iter__")
    result = UserMethodVariable(method, variable).call(tx, [], {})
    if isinstance(result, IteratorVariable):
        return result
    iterator = user_iterator(result)
    if iterator is None:
        raise UserError(TypeError(f"iter() returned non-iterator of type '{result.python_type().__name__}'"))
    return iterator


def user_iterator(variable) -> "UserIteratorVariable | None":
    """``variable`` as an iterator when it is a user object whose class defines ``__next__`` in Python."""
    if not hasattr(variable, "value") or _python_method(variable, "__next__") is None:
        return None
    return UserIteratorVariable(variable)


class UserIteratorVariable(IteratorVariable):
    """A user object stepped by its own ``__next__`` (inlined); its StopIteration ends the loop.
    Its state lives in the object (tracked as attribute stores), so this holds none."""

    def __init__(self, obj):
        super().__init__()
        self.obj = obj

    def python_type(self) -> type:
        return type(self.obj.value)

    def next_item(self, tx):
        method = _python_method(self.obj, "__next__")
        try:
            return UserMethodVariable(method, self.obj).call(tx, [], {})
        except UserError as error:
            if isinstance(error.exception, StopIteration):
                return None
            raise

    def save_state(self):
        return None

    def restore_state(self, state) -> None:
        pass

    def live_across_breaks(self) -> bool:
        return True  # the object itself goes on: its attributes are replayed as side effects

    def children(self) -> list:
        return [self.obj]

    def reconstruct(self, cg) -> None:
        cg.reconstruct(self.obj)
