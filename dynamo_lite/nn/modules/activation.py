"""Activation layers: ReLU, GELU, SiLU, Tanh, Sigmoid, Softmax, LogSoftmax, LeakyReLU, ELU, PReLU,
Threshold, CELU, RReLU, Softmin, Softshrink, Hardshrink, Softmax2d ..."""
from __future__ import annotations

from ...ops.core.api import full
from .. import functional as F
from ..module import Module
from ..parameter import Parameter

__all__ = ["CELU", "Hardshrink", "RReLU", "Softmax2d", "Softmin", "Softshrink", "Threshold"]


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


class _InplaceActivation(Module):
    """An activation whose only option is ``inplace``."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    """``x`` where positive, ``negative_slope * x`` elsewhere.

    Example:
        >>> dl.nn.LeakyReLU(0.5)(dl.tensor([-1.0, 2.0])).tolist()
        [-0.5, 2.0]
    """

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class ELU(Module):
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere.

    Example:
        >>> dl.nn.ELU()(dl.zeros(2)).tolist()
        [0.0, 0.0]
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class SELU(_InplaceActivation):
    """Scaled ELU with the self-normalizing constants."""

    def forward(self, input):
        return F.selu(input, self.inplace)


class Mish(_InplaceActivation):
    """``x * tanh(softplus(x))``.

    Example:
        >>> dl.nn.Mish()(dl.zeros(1)).tolist()
        [0.0]
    """

    def forward(self, input):
        return F.mish(input, self.inplace)


class Hardswish(_InplaceActivation):
    """``x * clamp(x + 3, 0, 6) / 6``.

    Example:
        >>> dl.nn.Hardswish()(dl.tensor([4.0])).tolist()
        [4.0]
    """

    def forward(self, input):
        return F.hardswish(input, self.inplace)


class Hardsigmoid(_InplaceActivation):
    """``clamp(x / 6 + 1 / 2, 0, 1)``."""

    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)


class ReLU6(_InplaceActivation):
    """``clamp(x, 0, 6)``."""

    def forward(self, input):
        return F.relu6(input, self.inplace)


class Hardtanh(Module):
    """``clamp(x, min_val, max_val)``."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
        super().__init__()
        if min_val > max_val:
            raise ValueError("min_val cannot be greater than max_val")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}"


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta``, linear above ``threshold``."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class GLU(Module):
    """Gated linear unit: ``a * sigmoid(b)`` of the two halves of ``dim``."""

    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSigmoid(Module):
    """``log(sigmoid(x))``, computed stably."""

    def forward(self, input):
        return F.logsigmoid(input)


class Softsign(Module):
    """``x / (1 + |x|)``."""

    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    """``x - tanh(x)``."""

    def forward(self, input):
        return F.tanhshrink(input)


class PReLU(Module):
    """``x`` where positive, else a learnt slope times ``x`` (one slope, or one per channel).

    Example:
        >>> nn.PReLU(3)(dl.randn(2, 3, 4)).shape
        dl.Size([2, 3, 4])
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(full((num_parameters,), init, device=device, dtype=dtype))

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


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
