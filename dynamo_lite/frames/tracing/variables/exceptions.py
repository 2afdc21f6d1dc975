"""Exceptions raised and caught inside the traced code."""
from __future__ import annotations

import sys

from ..guards import LENGTH_MATCH, TYPE_MATCH
from ..sources import AttrSource, ItemSource
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
        if name == "args":  # its length and the types of its items are guarded, not their values
            args = AttrSource(self.source, "args")
            tx.output.guards.add(args, LENGTH_MATCH, len(self.value.args))
            items = []
            for i, arg in enumerate(self.value.args):
                tx.output.guards.add(ItemSource(args, i), TYPE_MATCH, type(arg))
                items.append(RuntimeValueVariable(exception_arg, [self, ConstantVariable(i)], type(arg)))
            return TupleVariable(items)
        raise Unsupported(f"attribute {name!r} of a caught {self.exception_type.__name__}")

    def formats_at_run_time(self) -> bool:
        return all(k.__module__ == "builtins" or not {"__str__", "__repr__", "__format__"} & set(vars(k))
                   for k in self.exception_type.__mro__)

    def children(self) -> list:
        return []

    def reconstruct(self, cg) -> None:
        self.source.reconstruct(cg)


class RuntimeValueVariable(VariableTracker):
    """``fn(*args)``, computed when the transformed code runs, never while tracing: what is
    read of a caught exception (``str(e)``, ``f"{e!r}"``, ``e.args[0]``) is neither a constant
    nor guarded, so another message neither folds wrong nor recompiles."""

    def __init__(self, fn, args: list, value_type: type):
        self.fn, self.args, self.value_type = fn, list(args), value_type

    def python_type(self) -> type:
        return self.value_type

    def formats_at_run_time(self) -> bool:
        return self.value_type in (str, int, float, bool, type(None))

    def children(self) -> list:
        return list(self.args)

    def reconstruct(self, cg) -> None:
        cg.call_const_on(self.fn, self.args)


def exception_arg(exception: BaseException, index: int):
    """``exception.args[index]`` (rebuilds RuntimeValueVariable)."""
    return exception.args[index]


def format_at_run_time(value, spec: str, conversion: int) -> str:
    """What FORMAT_VALUE makes of ``value`` (rebuilds RuntimeValueVariable)."""
    return format(CONVERSIONS[conversion](value), spec)


def join_text(*parts) -> str:
    """What BUILD_STRING makes of ``parts`` (rebuilds RuntimeValueVariable)."""
    return "".join(parts)


#: FORMAT_VALUE's conversion flag -> the conversion (``!s``, ``!r``, ``!a``).
CONVERSIONS = {0: lambda v: v, 1: str, 2: repr, 3: ascii}


class CurrentExceptionVariable(VariableTracker):
    """The exception being handled when the frame started (what PUSH_EXC_INFO saves at
    the outermost except clause): ``sys.exception()`` at run time, often None."""

    def reconstruct(self, cg) -> None:
        cg.call_const(sys.exception, lambda: None, 0)
