"""Padding layers: ReflectionPad1d/2d, ReplicationPad1d/2d, CircularPad1d/2d, ConstantPad1d/2d, ZeroPad2d
(on ``F.pad``'s modes)."""
from __future__ import annotations

from .. import functional as F
from ..module import Module

__all__ = [
    "CircularPad1d", "CircularPad2d", "ConstantPad1d", "ConstantPad2d", "ReflectionPad1d", "ReflectionPad2d",
    "ReplicationPad1d", "ReplicationPad2d",
]


class _Pad(Module):
    """Pads the last ``dims`` dims in ``mode``; ``padding`` is one int for every side or ``2 * dims`` ints."""

    mode = "constant"
    dims = 1

    def __init__(self, padding):
        super().__init__()
        self.padding = tuple(padding) if isinstance(padding, (tuple, list)) else (padding,) * (2 * self.dims)

    def forward(self, input):
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad1d(_Pad):
    """Pad the last dim with its reflection at the edges (the edge not repeated).

    Example:
        >>> dl.nn.ReflectionPad1d(2)(dl.tensor([[[1.0, 2.0, 3.0]]])).tolist()
        [[[3.0, 2.0, 1.0, 2.0, 3.0, 2.0, 1.0]]]
    """

    mode = "reflect"


class ReflectionPad2d(ReflectionPad1d):
    """Pad the last two dims with their reflection (``padding``: int or (left, right, top, bottom)).

    Example:
        >>> dl.nn.ReflectionPad2d(1)(dl.ones(1, 1, 2, 2)).shape
        dl.Size([1, 1, 4, 4])
    """

    dims = 2


class ReplicationPad1d(_Pad):
    """Pad the last dim by repeating its edge values.

    Example:
        >>> dl.nn.ReplicationPad1d((1, 2))(dl.tensor([[[1.0, 2.0]]])).tolist()
        [[[1.0, 1.0, 2.0, 2.0, 2.0]]]
    """

    mode = "replicate"


class ReplicationPad2d(ReplicationPad1d):
    """Pad the last two dims by repeating their edge values.

    Example:
        >>> dl.nn.ReplicationPad2d(1)(dl.ones(1, 1, 2, 2)).shape
        dl.Size([1, 1, 4, 4])
    """

    dims = 2


class CircularPad1d(_Pad):
    """Pad the last dim by wrapping around (periodic boundary).

    Example:
        >>> dl.nn.CircularPad1d(1)(dl.tensor([[[1.0, 2.0, 3.0]]])).tolist()
        [[[3.0, 1.0, 2.0, 3.0, 1.0]]]
    """

    mode = "circular"


class CircularPad2d(CircularPad1d):
    """Pad the last two dims by wrapping around.

    Example:
        >>> dl.nn.CircularPad2d(1)(dl.ones(1, 1, 2, 2)).shape
        dl.Size([1, 1, 4, 4])
    """

    dims = 2


class ConstantPad1d(_Pad):
    """Pad the last dim with ``value``.

    Example:
        >>> dl.nn.ConstantPad1d(1, 9.0)(dl.tensor([[1.0]])).tolist()
        [[9.0, 1.0, 9.0]]
    """

    def __init__(self, padding, value: float):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad2d(ConstantPad1d):
    """Pad the last two dims with ``value``.

    Example:
        >>> dl.nn.ConstantPad2d((1, 0, 2, 0), 1.0)(dl.zeros(1, 1, 1)).shape
        dl.Size([1, 3, 2])
    """

    dims = 2


class ZeroPad2d(Module):
    """Pad the last two dims with zeros: an int, or ``(left, right, top, bottom)``.

    Example:
        >>> dl.nn.ZeroPad2d((1, 1, 2, 0))(dl.ones(1, 1, 3, 3)).shape
        dl.Size([1, 1, 5, 5])
    """

    def __init__(self, padding):
        super().__init__()
        self.padding = (padding,) * 4 if isinstance(padding, int) else tuple(padding)
        if len(self.padding) != 4:
            raise ValueError(f"ZeroPad2d expects an int or a 4-tuple of padding, got {padding!r}")

    def forward(self, input):
        return F.pad(input, self.padding, "constant", 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"
