"""Devices (``cpu``, ``cuda[:n]``) and the array module (NumPy or CuPy) behind each."""
from __future__ import annotations

import numpy as np


class device:
    """A device a storage lives on, e.g. ``dl.device("cuda:0")``.

    Used as a context manager it is the default device of factories inside the block.

    Example:
        >>> with dl.device("cpu"):
        ...     dl.zeros(2).device
        device(type='cpu')
    """

    __slots__ = ("type", "index")

    def __init__(self, spec, index: int | None = None):
        if isinstance(spec, device):
            spec, index = spec.type, spec.index if index is None else index
        if not isinstance(spec, str):
            raise TypeError(f"device() expects a string such as 'cpu' or 'cuda:0', got {spec!r}")
        kind, _, idx = spec.partition(":")
        if kind not in ("cpu", "cuda"):
            raise RuntimeError(
                f"Expected one of cpu, cuda device type at start of device string: {spec}"
            )
        if idx:
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{spec}'")
            index = int(idx)
        if kind == "cuda" and index is None:
            index = 0
        self.type = kind
        self.index = index

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __enter__(self) -> "device":
        DEFAULT.outer.append(DEFAULT.value)
        DEFAULT.value = self
        return self

    def __exit__(self, *exc_info) -> None:
        DEFAULT.value = DEFAULT.outer.pop()


CPU = device("cpu")


class _DefaultDevice:
    """The device factories use when given none (changed by ``with dl.device(...)`` and
    ``dl.set_default_device``); a visible object, like the default dtype's holder."""

    def __init__(self):
        self.value = CPU
        self.outer: list = []  # the defaults of enclosing ``with dl.device(...)`` blocks


DEFAULT = _DefaultDevice()


def get_default_device() -> device:
    """The device factories allocate on when given no ``device=`` (cpu unless changed)."""
    return DEFAULT.value


def set_default_device(value) -> None:
    """Make ``value`` (a device or a string; None means cpu) the default device of factories."""
    DEFAULT.value = CPU if value is None else as_device(value)


def as_device(value) -> device:
    """Accept a device, a string or None (meaning the default device, cpu unless changed)."""
    if value is None:
        return DEFAULT.value
    return value if isinstance(value, device) else device(value)


def cupy_module():
    """Import CuPy lazily; raise a clear error naming the extra to install when missing."""
    try:
        import cupy
    except ImportError:
        raise RuntimeError(
            "CUDA tensors need CuPy: install dynamo_lite with the 'cuda' extra "
            "(python3 -m pip install -e '.[cuda]')"
        ) from None
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("no CUDA device")
    except Exception as exc:  # cupy raises its own CUDARuntimeError types
        raise RuntimeError(f"CUDA tensors need a CUDA device, but none is usable: {exc}") from None
    return cupy


def array_module(dev: device):
    """The array module (``xp``) whose kernels run on ``dev``."""
    return np if dev.type == "cpu" else cupy_module()
