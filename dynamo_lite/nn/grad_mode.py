"""Gradient-mode context managers (no_grad ...), accepted for compatibility; no effect.

dynamo_lite has no autograd, so there is no gradient mode to switch: these objects
exist so that code written for a torch-like API (``with dl.no_grad(): ...``,
``@dl.inference_mode()``) runs unchanged. They hold no state, which also lets the
compiler treat a ``with`` block over them as a plain block.
"""
from __future__ import annotations


class _NoOpGradMode:
    """A context manager and decorator that does nothing (there is no autograd)."""

    def __new__(cls, *args, **kwargs):
        # Allow the bare decorator form ``@dl.no_grad`` as well as ``@dl.no_grad()``.
        if len(args) == 1 and not kwargs and callable(args[0]) and not isinstance(args[0], bool):
            return args[0]
        return super().__new__(cls)

    def __enter__(self):
        return None

    def __exit__(self, exc_type, exc, tb) -> bool:
        return False

    def __call__(self, fn):
        """Decorating a function returns it unchanged: the mode would have no effect."""
        return fn

    def clone(self):
        return self

    def __repr__(self) -> str:
        return f"dl.{type(self).__name__}()"


class no_grad(_NoOpGradMode):
    """Context manager/decorator that would disable gradient tracking; a no-op here.

    Example:
        >>> with dl.no_grad():
        ...     y = model(x)
    """

    def __init__(self):
        pass


class enable_grad(_NoOpGradMode):
    """Context manager/decorator that would enable gradient tracking; a no-op here.

    Example:
        >>> with dl.enable_grad():
        ...     y = model(x)
    """

    def __init__(self):
        pass


class inference_mode(_NoOpGradMode):
    """Context manager/decorator for inference; a no-op here.

    Args:
        mode: accepted for compatibility (``inference_mode(False)``).

    Example:
        >>> @dl.inference_mode()
        ... def predict(x):
        ...     return model(x)
    """

    def __init__(self, mode: bool = True):
        self.mode = mode


class set_grad_enabled(_NoOpGradMode):
    """Context manager/function that would switch gradient tracking on or off; a no-op here.

    Args:
        mode: accepted for compatibility.

    Example:
        >>> with dl.set_grad_enabled(False):
        ...     y = model(x)
    """

    def __new__(cls, mode: bool = True):
        return object.__new__(cls)

    def __init__(self, mode: bool = True):
        self.mode = mode
