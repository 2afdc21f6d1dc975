"""With statements over user context managers: ``__enter__``/``__exit__`` inlined.

NOTE: [user context managers] ``with m as v:`` over an instance of a user class whose
``__enter__`` and ``__exit__`` are plain Python functions of the user's: BEFORE_WITH
inlines ``__enter__`` (its result is ``v``) and pushes the bound ``__exit__``, which the
block's end calls with three Nones, and WITH_EXCEPT_START with the exception (its
truth suppresses it), as the interpreter does. A ``@contextlib.contextmanager``
function is modelled as its generator: entering runs it to its ``yield``, leaving runs
it to its end, or raises the block's exception at the ``yield`` (``gen.throw``).

A graph break inside the block keeps the manager entered: the bound ``__exit__`` on the
stack is passed to the resume function (rebuilt as ``m.__exit__``), which leaves the
block when it reaches its end; an exception of the break's eager instruction goes to
the block's own exit in a resume function (NOTE: [breaks inside try/except]), so the
manager can suppress it. A generator paused at its ``yield`` cannot be rebuilt: a break
inside its block compiles up to the with statement instead, which then runs eagerly
(``context_entry``). A manager whose methods are library code (a file, a lock) is a
graph break at the with statement: it is entered eagerly and the block resumes.
"""
from __future__ import annotations

import contextlib
import inspect
import types

from ...errors import Unsupported, UserError
from .. import trace_rules
from .base import ConstantVariable, VariableTracker
from .exceptions import exception_variable
from .functions import UserFunctionVariable, UserMethodVariable
from .iterators import GeneratorVariable, emit_call


@contextlib.contextmanager
def _probe():
    yield


#: The code of the function ``@contextlib.contextmanager`` returns (one for every use).
_CONTEXTMANAGER_CODE = _probe.__code__


def is_contextmanager_function(value) -> bool:
    """Whether ``value`` is what ``@contextlib.contextmanager`` made of a generator function."""
    return isinstance(value, types.FunctionType) and value.__code__ is _CONTEXTMANAGER_CODE \
        and isinstance(getattr(value, "__wrapped__", None), types.FunctionType)


def enter_user_context(tx, manager) -> tuple:
    """BEFORE_WITH on an object variable: ``(bound __exit__, what __enter__ returned)``."""
    cls = manager.python_type()
    methods = [inspect.getattr_static(cls, name, None) for name in ("__enter__", "__exit__")]
    if not all(isinstance(m, types.FunctionType) and trace_rules.rule_for_function(m) == trace_rules.INLINE
               for m in methods):
        raise Unsupported(f"a with block over a {cls.__qualname__}, whose __enter__/__exit__ is not user code "
                          "(entered eagerly)")
    enter, exit_fn = methods
    return UserMethodVariable(exit_fn, manager), UserMethodVariable(enter, manager).call(tx, [], {})


def exit_arguments(tx, exception) -> list:
    """What WITH_EXCEPT_START passes ``__exit__`` for the exception variable ``exception``."""
    return [tx.wrap(exception.exception_type, None), exception, TracebackVariable(exception)]


class TracebackVariable(VariableTracker):
    """The traceback ``__exit__`` receives: never None; rebuilt from a real exception only."""

    def __init__(self, exception):
        self.exception = exception

    def python_type(self) -> type:
        return types.TracebackType

    def reconstruct(self, cg) -> None:
        if self.exception.source is None:
            raise Unsupported("the traceback of an exception raised in the compiled region cannot be rebuilt")
        self.exception.source.reconstruct(cg)
        cg.load_attr("__traceback__")


class ContextManagerFunctionVariable(VariableTracker):
    """A ``@contextlib.contextmanager`` function: calling it makes a GeneratorContextVariable."""

    def __init__(self, fn, source=None):
        self.fn, self.source = fn, source

    def python_type(self) -> type:
        return types.FunctionType

    def as_python_constant(self):
        return self.fn

    def call(self, tx, args, kwargs) -> VariableTracker:
        generator_function = UserFunctionVariable(self.fn.__wrapped__, None)
        generator = generator_function.call(tx, args, kwargs)
        if not isinstance(generator, GeneratorVariable):
            raise Unsupported(f"@contextmanager over {self.fn.__qualname__}, which is not a generator function")
        return GeneratorContextVariable(self, generator, args, kwargs)


class GeneratorContextVariable(VariableTracker):
    """What a ``@contextmanager`` function returns: its generator, run by the with block."""

    def __init__(self, factory, generator: GeneratorVariable, args: list, kwargs: dict):
        self.factory, self.generator = factory, generator
        self.args, self.kwargs = list(args), dict(kwargs)

    def python_type(self) -> type:
        return contextlib._GeneratorContextManager

    def enter_with(self, tx) -> tuple:
        value = self.generator.next_item(tx)
        if value is None:
            raise UserError(RuntimeError("generator didn't yield"))
        return GeneratorExitVariable(self.generator, entered_at=tx.pc - 1 if tx.parent is None else None), value

    def children(self) -> list:
        return [self.factory, *self.args, *self.kwargs.values()]

    def reconstruct(self, cg) -> None:
        if self.generator.started:
            raise Unsupported("a @contextmanager object that was entered cannot be rebuilt")
        emit_call(cg, self.factory, self.args, self.kwargs)


class GeneratorExitVariable(VariableTracker):
    """``__exit__`` of a GeneratorContextVariable (contextlib's semantics, on the generator
    variable). ``entered_at``: the with statement's instruction in the compiled frame."""

    def __init__(self, generator: GeneratorVariable, entered_at: int | None):
        self.generator, self.entered_at = generator, entered_at

    def call(self, tx, args, kwargs) -> VariableTracker:
        if kwargs or len(args) != 3:
            raise Unsupported("calling a @contextmanager's __exit__ by hand")
        exception = args[1]
        if exception.is_python_constant() and exception.as_python_constant() is None:
            if self.generator.next_item(tx) is not None:
                raise Unsupported("a @contextmanager generator that yields twice (eager raises and closes it)")
            return ConstantVariable(False)
        return ConstantVariable(self._throw(tx, exception))

    def _throw(self, tx, exception) -> bool:
        """``gen.throw(exception)``: True if the generator swallowed it (it returned)."""
        try:
            value = self.generator.throw(tx, exception)
        except UserError as error:
            if exception_variable(error) is exception:
                return False  # re-raised: the with statement re-raises it
            raise
        if value is not None:
            raise Unsupported("a @contextmanager generator that yields again after an exception "
                              "(eager raises and closes it)")
        return True

    def reconstruct(self, cg) -> None:
        raise Unsupported("a @contextmanager generator paused at its yield cannot be rebuilt in compiled code")


def context_entry(tx, stack: list):
    """The with statement to compile up to instead of a break with ``stack``: the
    outermost one whose exit cannot be rebuilt (a paused generator's), or None."""
    entries = [v.entered_at for v in stack if isinstance(v, GeneratorExitVariable) and v.entered_at is not None]
    return tx.with_heads.get(min(entries)) if entries else None
