"""More activation layers: Threshold, CELU, RReLU, Softmin, Softshrink, Hardshrink, Softmax2d."""
from __future__ import annotations

from .. import functional as F
from ..module import Module


def _inplace_suffix(inplace: bool) -> str:
    return ", inplace=True" if inplace else ""


class Threshold(Module):
    """``value`` where the input is ``<= threshold``, the input elsewhere.

    Example:
        >>> dl.nn.Threshold(0.1, 20.0)(dl.tensor([0.0, 1.0])).tolist()
        [20.0, 1.0]
    """

    def __init__(self, threshold: float, value: float, inplace: bool = False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}{_inplace_suffix(self.inplace)}"


class CELU(Module):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` elementwise.

    Example:
        >>> dl.nn.CELU(2.0)(dl.tensor([1.0])).tolist()
        [1.0]
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace_suffix(self.inplace)}"


class RReLU(Module):
    """Randomized leaky ReLU: random negative slopes in ``[lower, upper]`` while training, their mean in eval.

    Example:
        >>> dl.nn.RReLU(0.1, 0.3).eval()(dl.tensor([-1.0])).tolist()
        [-0.20000000298023224]
    """

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}{_inplace_suffix(self.inplace)}"


class Softmin(Module):
    """``softmax(-x)`` along ``dim``.

    Example:
        >>> dl.nn.Softmin(dim=0)(dl.zeros(2)).tolist()
        [0.5, 0.5]
    """

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softshrink(Module):
    """Soft shrinkage: ``x -+ lambd`` outside ``[-lambd, lambd]``, 0 inside.

    Example:
        >>> dl.nn.Softshrink(1.0)(dl.tensor([3.0])).tolist()
        [2.0]
    """

    def __init__(self, lambd: float = 0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Hardshrink(Module):
    """Hard shrinkage: ``x`` outside ``[-lambd, lambd]``, 0 inside.

    Example:
        >>> dl.nn.Hardshrink(1.0)(dl.tensor([0.5, 3.0])).tolist()
        [0.0, 3.0]
    """

    def __init__(self, lambd: float = 0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softmax2d(Module):
    """Softmax over the channels (dim -3) of ``(N, C, H, W)`` or ``(C, H, W)``.

    Example:
        >>> dl.nn.Softmax2d()(dl.zeros(1, 2, 1, 1)).flatten().tolist()
        [0.5, 0.5]
    """

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3, _stacklevel=5)


__all__ = ["CELU", "Hardshrink", "RReLU", "Softmax2d", "Softmin", "Softshrink", "Threshold"]
