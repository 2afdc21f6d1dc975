"""dl.compiler: questions user code asks about compilation (``is_compiling``)."""
from __future__ import annotations


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
