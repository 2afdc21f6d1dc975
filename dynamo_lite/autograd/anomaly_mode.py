"""Anomaly detection for backward: ``detect_anomaly``/``set_detect_anomaly`` make a NaN gradient raise.

NOTE: [anomaly mode] While the mode is on, every backward node records the Python stack
of the forward call that created it (``node.metadata["traceback_"]``), and the engine
checks each gradient a node returns: a NaN raises torch's RuntimeError naming the node
(``Function 'SqrtBackward0' returned nan values in its 0th output.``) after a warning
showing that forward stack. Graphs compiled by ``dl.compile`` are checked as one node.
"""
from __future__ import annotations

import functools
import os
import traceback
import warnings

#: Frames inside these packages (op dispatch and recording) are left out of the recorded forward stacks.
_INTERNAL_DIRS = tuple(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), package) + os.sep
                       for package in ("autograd", "ops", "tensor"))


class AnomalyModeState:
    """Whether anomaly detection is on and whether it checks for NaN (one instance, ``ANOMALY``)."""

    def __init__(self):
        self.enabled = False
        self.check_nan = True


ANOMALY = AnomalyModeState()


def is_anomaly_enabled() -> bool:
    """True while anomaly detection is on.

    Example:
        >>> with dl.autograd.detect_anomaly():
        ...     dl.autograd.is_anomaly_enabled()
        True
    """
    return ANOMALY.enabled


def is_anomaly_check_nan_enabled() -> bool:
    """True while anomaly detection checks the gradients for NaN."""
    return ANOMALY.check_nan


class _AnomalyModeSwitch:
    """Sets the mode for a ``with`` block and restores the previous one after it."""

    def __init__(self, mode: bool, check_nan: bool):
        self.mode, self.check_nan = mode, check_nan
        self.previous = (ANOMALY.enabled, ANOMALY.check_nan)

    def _switch(self) -> None:
        self.previous = (ANOMALY.enabled, ANOMALY.check_nan)
        ANOMALY.enabled, ANOMALY.check_nan = self.mode, self.check_nan

    def __exit__(self, *exc) -> None:
        ANOMALY.enabled, ANOMALY.check_nan = self.previous


class detect_anomaly(_AnomalyModeSwitch):
    """Context manager (or decorator) turning anomaly detection on (see NOTE: [anomaly mode]).

    Example:
        >>> x = dl.zeros(1, requires_grad=True)
        >>> with dl.autograd.detect_anomaly():
        ...     (x.sqrt() * 0).sum().backward()
        Traceback (most recent call last):
        RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.
    """

    def __init__(self, check_nan: bool = True):
        super().__init__(True, check_nan)

    def __enter__(self) -> None:
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", stacklevel=2)
        self._switch()

    def __call__(self, function):
        @functools.wraps(function)
        def with_anomaly_detection(*args, **kwargs):
            with self.__class__(self.check_nan):
                return function(*args, **kwargs)
        return with_anomaly_detection


class set_detect_anomaly(_AnomalyModeSwitch):
    """Turn anomaly detection on or off now; as a context manager, restore the previous mode after the block.

    Example:
        >>> with dl.autograd.set_detect_anomaly(False):
        ...     dl.autograd.is_anomaly_enabled()
        False
    """

    def __init__(self, mode: bool, check_nan: bool = True):
        super().__init__(mode, check_nan)
        self._switch()

    def __enter__(self) -> None:
        pass


def forward_stack() -> list | None:
    """The current Python stack, without dispatch and recording frames, when anomaly detection is on
    (stored on new backward nodes), else None."""
    if not ANOMALY.enabled:
        return None
    frames = [frame for frame in traceback.extract_stack() if not frame.filename.startswith(_INTERNAL_DIRS)]
    return traceback.format_list(frames)


def check_gradients(node, outputs) -> None:
    """Raise torch's RuntimeError if ``node`` returned a NaN gradient while NaN checking is on."""
    if not (ANOMALY.enabled and ANOMALY.check_nan):
        return
    for index, gradient in enumerate(outputs):
        if gradient is not None and bool(gradient.isnan().any()):
            stack = node.metadata.get("traceback_")
            if stack:
                warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n"
                              + "".join(stack), stacklevel=2)
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {index}th output.")
