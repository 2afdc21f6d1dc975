"""dl.compiler: torch.compiler's namespace (``compile``, ``reset``, ``disable``, ``is_compiling``, ...)."""
from __future__ import annotations

from .backends import list_backends
from .frames.api import compile, disable, reset

__all__ = ["compile", "disable", "is_compiling", "is_dynamo_compiling", "is_exporting", "list_backends", "reset"]


def is_compiling() -> bool:
    """True inside code dl.compile is tracing, False when running eagerly.

    The translator replaces a call to it by the constant True (NOTE: [trace rules]), so
    branching on it costs no graph break.

    Example:
        >>> def f(x):
        ...     return x + 1 if dl.compiler.is_compiling() else x - 1
        >>> f(dl.ones(1))   # tensor([0.]); dl.compile(f)(dl.ones(1)) gives tensor([2.])
    """
    return False


def is_dynamo_compiling() -> bool:
    """torch's name for ``is_compiling`` while the frontend traces: True in traced code, False eagerly."""
    return False


def is_exporting() -> bool:
    """False: dynamo_lite has no export path (torch's ``torch.export`` tracing)."""
    return False
