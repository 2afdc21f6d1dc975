"""TorchScript's typing and marking helpers (annotate, ignore, export, Final ...): Python needs none of them."""
from __future__ import annotations

import contextlib
import typing

#: ``x: Final[int]`` marks a constant attribute in TorchScript; plain ``typing.Final`` here.
Final = typing.Final


def annotate(the_type, the_value):
    """Return ``the_value``: TorchScript read ``the_type`` to type an empty container.

    Example:
        >>> outputs = dl.jit.annotate(List[Tensor], [])
    """
    return the_value


def Attribute(value, the_type=None):  # noqa: N802  (torch's name)
    """Return ``value``: TorchScript read ``the_type`` to type a module attribute."""
    return value


def ignore(drop=False, **kwargs):
    """Leave a function as Python (it is compiled, or called opaquely, like any other).

    Usable as ``@ignore`` and ``@ignore(drop=True)``; the function runs as written.
    """
    if callable(drop):
        return _marked(drop, "_dl_jit_ignore")
    return lambda fn: _marked(fn, "_dl_jit_ignore")


def unused(fn):
    """Mark a method TorchScript should not compile; here it runs as written when called."""
    if isinstance(fn, property):
        return fn
    return _marked(fn, "_dl_jit_unused")


def export(fn):
    """Mark a method of a module for ``dl.jit.script``: it is compiled like ``forward``."""
    return _marked(fn, "_dl_jit_export")


def interface(obj):
    """A TorchScript interface class: a plain Python class here."""
    return obj


def script_if_tracing(fn):
    """Return ``fn``: there is no tracing that would need it scripted."""
    return fn


def _marked(fn, mark: str):
    try:
        setattr(fn, mark, True)
    except (AttributeError, TypeError):  # a builtin: nothing to mark
        pass
    return fn


class Future:
    """What ``fork`` returns: the call's result, computed when forked (``wait`` returns it)."""

    def __init__(self, value):
        self._value = value

    def wait(self):
        return self._value


def fork(fn, *args, **kwargs) -> Future:
    """Run ``fn(*args, **kwargs)`` now and wrap its result (TorchScript may run it in parallel)."""
    return Future(fn(*args, **kwargs))


def wait(future: Future):
    """The result of a ``fork``."""
    return future.wait()


@contextlib.contextmanager
def optimized_execution(should_optimize: bool = True):
    """TorchScript's optimization switch: a no-op context (dl.compile decides what to compile)."""
    yield


@contextlib.contextmanager
def fuser(name: str = "fuser1"):
    """TorchScript's fuser choice: a no-op context (each backend fuses on its own)."""
    yield
