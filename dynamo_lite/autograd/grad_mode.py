"""Gradient mode: whether ops record autograd history (no_grad, enable_grad, inference_mode)."""
from __future__ import annotations

import functools
import inspect

# The state lives in the tensor core, which reads it too (Tensor.numpy refuses a tensor requiring grad).
from ..tensor.autograd_fields import GRAD_MODE, GradModeState  # noqa: F401  (re-exported)


def is_grad_enabled() -> bool:
    """True when ops record autograd history on this thread.

    Example:
        >>> with dl.no_grad():
        ...     dl.is_grad_enabled()
        False
    """
    return GRAD_MODE.enabled


def is_inference_mode_enabled() -> bool:
    """True inside ``dl.inference_mode()``."""
    return GRAD_MODE.inference


class _GradModeContext:
    """A context manager that is also a decorator (with or without parentheses).

    Subclasses say what ``enabled``/``inference`` become inside the block.
    """

    enabled: bool = True
    inference: bool = False

    def __new__(cls, *args, **kwargs):
        # ``@dl.no_grad`` (bare) decorates like ``@dl.no_grad()``.
        if len(args) == 1 and not kwargs and callable(args[0]) and not isinstance(args[0], bool):
            return cls()(args[0])
        return object.__new__(cls)

    def __enter__(self):
        self._saved = (GRAD_MODE.enabled, GRAD_MODE.inference)
        GRAD_MODE.enabled, GRAD_MODE.inference = self.enabled, self.inference
        return None

    def __exit__(self, exc_type, exc, tb) -> bool:
        saved = self.__dict__.pop("_saved", None)
        if saved is not None:  # None: compiled code skipped the __enter__ of a block that changed nothing
            GRAD_MODE.enabled, GRAD_MODE.inference = saved
        return False

    def target_mode(self, current: bool) -> bool:
        """The grad mode inside the block, entered while the mode is ``current``."""
        return self.enabled

    def clone(self):
        return type(self)()

    def __call__(self, fn):
        """Run ``fn`` (or each step of a generator function) inside this mode."""
        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def generator(*args, **kwargs):
                gen = fn(*args, **kwargs)
                sent = None
                while True:
                    try:
                        with self.clone():
                            value = gen.send(sent)
                    except StopIteration as stop:
                        return stop.value
                    sent = yield value
            return generator

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return wrapper

    def __repr__(self) -> str:
        return f"dl.{type(self).__name__}()"


class no_grad(_GradModeContext):
    """Disable gradient recording inside a block or a decorated function.

    Example:
        >>> with dl.no_grad():
        ...     y = model(x)          # y.requires_grad is False
    """

    enabled = False


class enable_grad(_GradModeContext):
    """Enable gradient recording inside a block (e.g. within ``no_grad``).

    Example:
        >>> with dl.no_grad(), dl.enable_grad():
        ...     y = w * 2             # recorded
    """

    enabled = True


class inference_mode(_GradModeContext):
    """Inference: no gradient recording (like ``no_grad``); ``inference_mode(False)`` is a no-op.

    Args:
        mode: True to disable recording, False to leave the grad mode as it is.

    Example:
        >>> @dl.inference_mode()
        ... def predict(x):
        ...     return model(x)
    """

    def __init__(self, mode: bool = True):
        self.mode = bool(mode)

    def __enter__(self):
        self._saved = (GRAD_MODE.enabled, GRAD_MODE.inference)
        if self.mode:
            GRAD_MODE.enabled, GRAD_MODE.inference = False, True
        return None

    def target_mode(self, current: bool) -> bool:
        return False if self.mode else current

    def clone(self):
        return inference_mode(self.mode)


class set_grad_enabled(_GradModeContext):
    """Switch gradient recording on or off: as a function call, a context manager or a decorator.

    Like torch's, calling it changes the mode immediately; leaving the ``with`` block
    restores the mode from before the call.

    Args:
        mode: True to record gradients, False not to.

    Example:
        >>> with dl.set_grad_enabled(False):
        ...     y = model(x)
    """

    def __new__(cls, mode: bool = True):
        return object.__new__(cls)

    def __init__(self, mode: bool = True):
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled(): argument 'mode' must be bool, not {type(mode).__name__}")
        self.mode = mode
        self._before = (GRAD_MODE.enabled, GRAD_MODE.inference)
        GRAD_MODE.enabled = mode

    def __enter__(self):
        self._saved = self._before
        return None

    def __call__(self, fn):
        GRAD_MODE.enabled = self._before[0]  # used as a decorator: the call itself changes nothing
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)
        return wrapper

    def target_mode(self, current: bool) -> bool:
        return self.mode

    def clone(self):
        return set_grad_enabled(self.mode)
