"""Exceptions raised and caught inside the traced code."""
from __future__ import annotations

import sys

from ..sources import AttrSource
from ...errors import Unsupported, UserError
from .base import ConstantVariable, VariableTracker
from .containers import TupleVariable


class ExceptionVariable(VariableTracker):
    """An exception instance made in the frame (``ValueError("...")``) or raised by an
    operation the translator models (a missing dict key ...). Its arguments are constants,
    so the concrete exception can be made whenever it is needed."""

    def __init__(self, exception_type: type, args: list):
        self.exception_type, self.args = exception_type, list(args)
        self.context = None  # the exception being handled where it was raised (``__context__``)

    @classmethod
    def of(cls, exception: BaseException) -> "ExceptionVariable":
        return cls(type(exception), [ConstantVariable(a) for a in exception.args])

    def python_type(self) -> type:
        return self.exception_type

    def as_python_constant(self):
        return self.exception_type(*(a.as_python_constant() for a in self.args))

    def exception_object(self) -> BaseException:
        """The exception ``raise`` raises (made from the constant arguments)."""
        return self.as_python_constant()

    def var_getattr(self, tx, name: str) -> VariableTracker:
        if name == "args":
            return TupleVariable(self.args)
        if name == "__context__":
            return self.context if self.context is not None else ConstantVariable(None)
        raise Unsupported(f"attribute {name!r} of a {self.exception_type.__name__} made in the frame")

    def children(self) -> list:
        return list(self.args) + ([self.context] if self.context is not None else [])

    def reconstruct(self, cg) -> None:
        if self.context is None:
            cg.call_const_on(self.exception_type, self.args)
            return

        def emit_args():
            cg.call_const_on(self.exception_type, self.args)
            cg.reconstruct(self.context)

        cg.call_const(_with_context, emit_args, 2)


def _with_context(exception: BaseException, context: BaseException) -> BaseException:
    """``exception`` raised while ``context`` was being handled (as the eager raise left it)."""
    exception.__context__ = context
    return exception


def is_plain_exception(cls: type) -> bool:
    """An exception class whose instances only hold their ``args`` (no user __init__/__new__)."""
    return all(k.__module__ == "builtins" or ("__init__" not in vars(k) and "__new__" not in vars(k))
               for k in cls.__mro__)


def exception_variable(error: UserError) -> ExceptionVariable:
    """The variable of the exception a UserError carries."""
    variable = getattr(error, "variable", None)
    return variable if variable is not None else ExceptionVariable.of(error.exception)


class CaughtExceptionVariable(ExceptionVariable):
    """A real exception object the frame received: the one a resume function at an
    except clause is handed (NOTE: [breaks inside try/except]). Matched by its type (a
    guard), rebuilt by reloading it; its state is the object's, never a constant."""

    def __init__(self, value: BaseException, source):
        super().__init__(type(value), [])
        self.value, self.source = value, source

    def as_python_constant(self):
        raise Unsupported(f"the state of a caught {self.exception_type.__name__} (it runs eagerly)")

    def exception_object(self) -> BaseException:
        return self.value

    def var_getattr(self, tx, name: str) -> VariableTracker:
        if name == "args":
            return tx.wrap(self.value.args, AttrSource(self.source, "args"))
        raise Unsupported(f"attribute {name!r} of a caught {self.exception_type.__name__}")

    def children(self) -> list:
        return []

    def reconstruct(self, cg) -> None:
        self.source.reconstruct(cg)


class CurrentExceptionVariable(VariableTracker):
    """The exception being handled when the frame started (what PUSH_EXC_INFO saves at
    the outermost except clause): ``sys.exception()`` at run time, often None."""

    def reconstruct(self, cg) -> None:
        cg.call_const(sys.exception, lambda: None, 0)
