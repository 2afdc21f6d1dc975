"""Activation layers: ReLU, GELU, SiLU, Tanh, Sigmoid, Softmax, LogSoftmax."""
from __future__ import annotations

from .. import functional as F
from ..module import Module


class ReLU(Module):
    """``max(x, 0)`` elementwise.

    Example:
        >>> dl.nn.ReLU()(dl.tensor([-1.0, 2.0])).tolist()
        [0.0, 2.0]
    """

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class GELU(Module):
    """Gaussian error linear unit, exact (``approximate="none"``) or ``"tanh"``-approximated.

    Example:
        >>> dl.nn.GELU(approximate="tanh")(dl.zeros(2)).tolist()
        [0.0, 0.0]
    """

    def __init__(self, approximate: str = "none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """``x * sigmoid(x)`` elementwise.

    Example:
        >>> dl.nn.SiLU()(dl.zeros(2)).tolist()
        [0.0, 0.0]
    """

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    """Hyperbolic tangent elementwise.

    Example:
        >>> dl.nn.Tanh()(dl.zeros(2)).tolist()
        [0.0, 0.0]
    """

    def forward(self, input):
        return F.tanh(input)


class Sigmoid(Module):
    """``1 / (1 + exp(-x))`` elementwise.

    Example:
        >>> dl.nn.Sigmoid()(dl.zeros(2)).tolist()
        [0.5, 0.5]
    """

    def forward(self, input):
        return F.sigmoid(input)


class Softmax(Module):
    """Softmax along ``dim`` (values in (0, 1) summing to 1 along it).

    Example:
        >>> dl.nn.Softmax(dim=1)(dl.zeros(2, 4)).sum(1).tolist()
        [1.0, 1.0]
    """

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """``log(softmax(x))`` along ``dim``, computed stably.

    Example:
        >>> dl.nn.LogSoftmax(dim=-1)(dl.zeros(1, 2)).exp().tolist()
        [[0.5, 0.5]]
    """

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.log_softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"
