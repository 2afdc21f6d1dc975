"""raise, except clauses and with-statement cleanup (NOTE: [try/except in the traced frame])."""
from __future__ import annotations

from ...bytecode import compat
from ...errors import Unsupported, UserError
from ...tracing.variables.base import ConstantVariable
from ...tracing.variables.exceptions import CurrentExceptionVariable, ExceptionVariable
from ...tracing.variables.classes import ClassVariable
from ...tracing.variables.contexts import exit_arguments
from .registry import handles


def raised(value) -> UserError:
    """The UserError for ``raise value`` (an exception class or instance variable)."""
    if isinstance(value, ClassVariable) and issubclass(value.value, BaseException):
        value = ExceptionVariable(value.value, [])
    if not isinstance(value, ExceptionVariable):
        raise Unsupported(f"raising {value.describe()}")
    error = UserError(value.exception_object())
    error.variable = value
    return error


@handles("RAISE_VARARGS")
def raise_varargs(tx, ins):
    if ins.arg == 0:  # a bare ``raise`` inside an except clause
        if not tx.active_exceptions:
            raise Unsupported("a bare raise outside an except clause")
        raise raised(tx.active_exceptions[-1])
    if ins.arg == 2:
        raise Unsupported("raise ... from ... inside the compiled region")
    raise raised(tx.pop())


@handles("RERAISE")
def reraise(tx, ins):
    exception = tx.pop()
    if ins.arg:
        tx.pop()  # the offset the interpreter would restore
    raise raised(exception)


@handles("LOAD_ASSERTION_ERROR")
def load_assertion_error(tx, ins):
    tx.push(ClassVariable(AssertionError, None))


@handles("PUSH_EXC_INFO")
def push_exc_info(tx, ins):
    exception = tx.pop()
    previous = tx.active_exceptions[-1] if tx.active_exceptions else CurrentExceptionVariable()
    tx.push(previous)
    tx.push(exception)
    tx.active_exceptions.append(exception)
    tx.exception_slots.append((len(tx.stack) - 2, exception))  # NOTE: [breaks inside try/except]


@handles("POP_EXCEPT")
def pop_except(tx, ins):
    tx.pop()
    if tx.active_exceptions:
        tx.active_exceptions.pop()
        tx.exception_slots.pop()


def _classes(value) -> tuple:
    classes = value.as_python_constant()
    return classes if isinstance(classes, tuple) else (classes,)


@handles("CHECK_EXC_MATCH")
def check_exc_match(tx, ins):
    classes = _classes(tx.pop())
    exception = tx.stack[-1]
    if not isinstance(exception, ExceptionVariable):
        raise Unsupported(f"matching {exception.describe()} against an except clause")
    tx.push(ConstantVariable(issubclass(exception.exception_type, classes)))


@handles("WITH_EXCEPT_START")
def with_except_start(tx, ins):
    # The stack: __exit__, the offset to restore, the previous exception, the exception.
    exit_fn, exception = tx.stack[-compat.WITH_EXCEPT_START_EXIT_DEPTH], tx.stack[-1]
    tx.push(exit_fn.call(tx, exit_arguments(tx, exception), {}))  # NOTE: [user context managers]
