"""``functools.wraps``/``update_wrapper`` over traced functions: the wrapper is called as
itself and reads its metadata (``__name__``, ``__doc__``, ``__wrapped__`` ...) from the wrapped."""
from __future__ import annotations

import functools

from ...errors import Unsupported
from .base import VariableTracker


def _default_arguments(kwargs: dict) -> None:
    for name in kwargs:
        if name not in ("assigned", "updated") or not kwargs[name].is_python_constant() or \
                tuple(kwargs[name].as_python_constant()) != getattr(functools, f"WRAPPER_{name.upper()}"):
            raise Unsupported("functools.wraps() with its own list of attributes to copy")


def _wraps(tx, wrapped, **kwargs):
    _default_arguments(kwargs)
    return WrapsDecoratorVariable(wrapped)


def _update_wrapper(tx, wrapper, wrapped, **kwargs):
    _default_arguments(kwargs)
    return WrappedFunctionVariable(wrapper, wrapped)


class WrapsDecoratorVariable(VariableTracker):
    """``functools.wraps(wrapped)``: applied to a wrapper, it gives the wrapper with the wrapped's metadata."""

    def __init__(self, wrapped):
        self.wrapped = wrapped

    def call(self, tx, args, kwargs) -> VariableTracker:
        if len(args) != 1 or kwargs:
            raise Unsupported("functools.wraps(...) applied to other than one function")
        return WrappedFunctionVariable(args[0], self.wrapped)

    def children(self) -> list:
        return [self.wrapped]

    def reconstruct(self, cg) -> None:
        cg.call_const(functools.wraps, lambda: cg.reconstruct(self.wrapped), 1)


class WrappedFunctionVariable(VariableTracker):
    """The wrapper after ``update_wrapper``: calls run the wrapper; the copied attributes and
    ``__wrapped__`` read the wrapped function's; rebuilt by ``update_wrapper`` on the rebuilt wrapper."""

    def __init__(self, wrapper, wrapped):
        self.wrapper, self.wrapped = wrapper, wrapped

    def python_type(self) -> type:
        return self.wrapper.python_type()

    def call(self, tx, args, kwargs) -> VariableTracker:
        return self.wrapper.call(tx, args, kwargs)

    def var_getattr(self, tx, name: str) -> VariableTracker:
        if name == "__wrapped__":
            return self.wrapped
        if name in functools.WRAPPER_ASSIGNMENTS:
            return self.wrapped.var_getattr(tx, name)
        raise Unsupported(f"attribute {name!r} of a function made by functools.wraps")

    def children(self) -> list:
        return [self.wrapper, self.wrapped]

    def reconstruct(self, cg) -> None:
        def emit_args():
            cg.reconstruct(self.wrapper)
            cg.reconstruct(self.wrapped)

        cg.call_const(functools.update_wrapper, emit_args, 2)


#: The ``functools`` functions this module models.
WRAPPER_FUNCTIONS = {functools.wraps: _wraps, functools.update_wrapper: _update_wrapper}
