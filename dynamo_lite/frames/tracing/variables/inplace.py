"""Which in-place operators (``+=``, ``|=``, ``*=`` ...) may be evaluated while tracing, and which must run eagerly.

NOTE: [in-place operators on objects] ``g += y`` calls ``type(g).__iadd__``, which changes a
mutable ``g`` itself. Lists, dicts and sets the translator models are changed on their
variables and replayed once (containers.py, dicts.py, sets.py); tensors are traced. Any
other object (a bytearray, a NumPy array, an ``array.array``, a deque; a user class's
Python ``__iadd__`` is inlined first, user_operators.py) would be changed for real while tracing, and once more when the compiled code
or the graph break runs it: the operator breaks the graph before anything is called and
runs eagerly, exactly once. Immutable values (numbers, strings, bytes, tuples, frozensets)
have no in-place form: Python computes a new value, so they fold as constants.
"""
from __future__ import annotations

from ...bytecode import compat
from .base import SymIntVariable
from .tensor import TensorVariable

INPLACE_OPERATORS = frozenset(function for symbol, function in compat.BINARY_OPERATORS.values() if symbol.endswith("="))
IMMUTABLE_TYPES = (bool, int, float, complex, str, bytes, tuple, frozenset, type(None), range, slice)


def runs_eagerly(op, left) -> str | None:
    """Why ``left <op>= right`` must not be evaluated while tracing, or None where it may."""
    if op not in INPLACE_OPERATORS or isinstance(left, (TensorVariable, SymIntVariable)):
        return None
    try:
        constant = left.as_python_constant() if left.is_python_constant() else None
        if left.is_python_constant() and isinstance(constant, IMMUTABLE_TYPES) and _immutable(constant):
            return None
    except Exception:  # a variable with no constant value
        pass
    kind = getattr(left, "python_type", lambda: None)()
    name = kind.__name__ if isinstance(kind, type) else type(left).__name__
    return f"in-place operator {op.__name__} on a {name} changes the object itself: it runs eagerly"


def _immutable(value) -> bool:
    if isinstance(value, (tuple, frozenset)):
        return all(isinstance(v, IMMUTABLE_TYPES) and _immutable(v) for v in value)
    return True
