"""nn.functional activations: relu, gelu, silu, softmax/log_softmax, leaky_relu, elu, selu, mish,
softplus, threshold, celu, rrelu, softmin, softshrink, hardshrink, gumbel_softmax ...

NOTE: [activations as pointwise compositions] Each activation is written with existing
pointwise registry ops (``where``, ``exp``, ``log1p``, ``clamp`` ...) rather than as a new
op: the tracer records the pieces, the backends fuse them into one loop, and the
derivative comes from the pieces' formulas. Formulas follow torch's numerically stable
forms (``softplus`` switches to the identity above ``threshold``, ``logsigmoid`` never
exponentiates a positive number).
"""
from __future__ import annotations

from ...ops.core import api as ops
from ...ops.core.meta_rules import TYPE_NAMES

import warnings

from ...tensor.type_info import finfo


__all__ = [
    "gelu", "log_softmax", "relu", "relu_", "sigmoid", "silu", "softmax", "tanh", "elu", "elu_", "glu",
    "hardsigmoid", "hardswish", "hardtanh", "hardtanh_", "leaky_relu", "leaky_relu_", "logsigmoid", "mish",
    "prelu", "relu6", "selu", "softplus", "softsign", "tanhshrink", "celu", "celu_", "gumbel_softmax",
    "hardshrink", "rrelu", "rrelu_", "softmin", "softshrink", "threshold", "threshold_",
]

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _result(input, value, inplace: bool):
    """``value``, or written into ``input`` when ``inplace``."""
    return input.copy_(value) if inplace else value


def _check_floating(input, name: str) -> None:
    if not input.is_floating_point():
        raise NotImplementedError(f"\"{name}\" not implemented for '{TYPE_NAMES[input.dtype]}'")


def leaky_relu(input, negative_slope: float = 0.01, inplace: bool = False):
    """``x`` where positive, ``negative_slope * x`` elsewhere.

    Example:
        >>> F.leaky_relu(dl.tensor([-1.0, 2.0]), 0.1).tolist()
        [-0.10000000149011612, 2.0]
    """
    _check_floating(input, "leaky_relu_cpu")
    return _result(input, ops.where(input > 0, input, input * negative_slope), inplace)


def leaky_relu_(input, negative_slope: float = 0.01):
    """In-place ``leaky_relu``."""
    return leaky_relu(input, negative_slope, inplace=True)


def elu(input, alpha: float = 1.0, inplace: bool = False):
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere.

    Example:
        >>> F.elu(dl.tensor([0.0, 1.0])).tolist()
        [0.0, 1.0]
    """
    _check_floating(input, "elu_cpu")
    return _result(input, ops.where(input > 0, input, ops.expm1(input) * alpha), inplace)


def elu_(input, alpha: float = 1.0):
    """In-place ``elu``."""
    return elu(input, alpha, inplace=True)


def selu(input, inplace: bool = False):
    """``scale * elu(x, alpha)`` with the self-normalizing constants.

    Example:
        >>> F.selu(dl.zeros(1)).tolist()
        [0.0]
    """
    _check_floating(input, "elu_cpu")
    value = ops.where(input > 0, input * SELU_SCALE, ops.expm1(input) * (SELU_ALPHA * SELU_SCALE))
    return _result(input, value, inplace)


def softplus(input, beta: float = 1.0, threshold: float = 20.0):
    """``log(1 + exp(beta * x)) / beta``, the identity where ``beta * x > threshold``.

    Example:
        >>> round(F.softplus(dl.zeros(1)).item(), 4)
        0.6931
    """
    _check_floating(input, "softplus_cpu")
    scaled = input * beta
    return ops.where(scaled > threshold, input, ops.log1p(ops.exp(scaled)) / beta)


def logsigmoid(input):
    """``log(sigmoid(x))`` computed as ``min(x, 0) - log1p(exp(-|x|))`` (no overflow).

    Example:
        >>> round(F.logsigmoid(dl.zeros(1)).item(), 4)
        -0.6931
    """
    _check_floating(input, "log_sigmoid_cpu")
    return ops.clamp_max(input, 0) - ops.log1p(ops.exp(-ops.abs(input)))


def mish(input, inplace: bool = False):
    """``x * tanh(softplus(x))``.

    Example:
        >>> F.mish(dl.zeros(1)).tolist()
        [0.0]
    """
    _check_floating(input, "mish_cpu")
    return _result(input, input * ops.tanh(softplus(input)), inplace)


def hardtanh(input, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
    """``clamp(x, min_val, max_val)``.

    Example:
        >>> F.hardtanh(dl.tensor([-3.0, 0.5, 3.0])).tolist()
        [-1.0, 0.5, 1.0]
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return input.clamp_(min_val, max_val) if inplace else ops.clamp(input, min_val, max_val)


def hardtanh_(input, min_val: float = -1.0, max_val: float = 1.0):
    """In-place ``hardtanh``."""
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace: bool = False):
    """``clamp(x, 0, 6)``."""
    return hardtanh(input, 0.0, 6.0, inplace)


def hardsigmoid(input, inplace: bool = False):
    """``clamp(x / 6 + 1 / 2, 0, 1)``."""
    return _result(input, ops.clamp(input + 3.0, 0.0, 6.0) / 6.0, inplace)


def hardswish(input, inplace: bool = False):
    """``x * clamp(x + 3, 0, 6) / 6``.

    Example:
        >>> F.hardswish(dl.tensor([-4.0, 0.0, 4.0])).tolist()
        [-0.0, 0.0, 4.0]
    """
    _check_floating(input, "hardswish_cpu")
    return _result(input, input * ops.clamp(input + 3.0, 0.0, 6.0) / 6.0, inplace)


def softsign(input):
    """``x / (1 + |x|)``."""
    return input / (ops.abs(input) + 1)


def tanhshrink(input):
    """``x - tanh(x)``."""
    return input - ops.tanh(input)


def glu(input, dim: int = -1):
    """Gated linear unit: split ``dim`` in halves ``a, b`` and return ``a * sigmoid(b)``.

    Example:
        >>> F.glu(dl.tensor([1.0, 0.0])).tolist()
        [0.5]
    """
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    size = input.shape[dim]
    if size % 2:
        raise RuntimeError(
            f"Halving dimension must be even, but dimension {dim % input.dim()} is size {size}"
        )
    first, second = ops.chunk(input, 2, dim)
    return first * ops.sigmoid(second)


def prelu(input, weight):
    """``input`` where positive, else ``weight * input``; ``weight`` holds one slope or one per channel (dim 1).

    Example:
        >>> F.prelu(dl.tensor([-2.0, 3.0]), dl.tensor([0.25])).tolist()
        [-0.5, 3.0]
    """
    channels = input.shape[1] if input.dim() >= 2 else 1
    if weight.numel() != 1 and weight.numel() != channels:
        raise RuntimeError("Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                           f"{weight.numel()} and channel size = {channels}.")
    slope = weight.reshape(()) if weight.numel() == 1 else weight.reshape((channels,) + (1,) * (input.dim() - 2))
    return ops.where(input > 0, input, slope * input)


def relu(input, inplace: bool = False):
    """``max(input, 0)``; in place with ``inplace=True``.

    Example:
        >>> F.relu(dl.tensor([-1.0, 1.0])).tolist()
        [0.0, 1.0]
    """
    return input.relu_() if inplace else input.relu()


def relu_(input):
    """In-place ``relu``."""
    return input.relu_()


def gelu(input, approximate: str = "none"):
    """GELU: ``x * Phi(x)`` exactly (``"none"``) or with the tanh approximation (``"tanh"``).

    Example:
        >>> F.gelu(dl.zeros(1), approximate="tanh").tolist()
        [0.0]
    """
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return ops.gelu(input, approximate)


def silu(input, inplace: bool = False):
    """``x * sigmoid(x)``.

    Example:
        >>> F.silu(dl.zeros(1)).tolist()
        [0.0]
    """
    if inplace:
        return input.copy_(ops.silu(input))
    return ops.silu(input)


def sigmoid(input):
    """``1 / (1 + exp(-x))``."""
    return input.sigmoid()


def tanh(input):
    """Hyperbolic tangent."""
    return input.tanh()


def _softmax_dim(ndim: int) -> int:
    warnings.warn(
        "Implicit dimension choice for softmax has been deprecated. "
        "Change the call to include dim=X as an argument.",
        stacklevel=3,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel: int = 3, dtype=None):
    """``exp(x) / exp(x).sum(dim)``, computed stably; optionally in ``dtype``.

    Example:
        >>> F.softmax(dl.zeros(2, 2), dim=-1).tolist()
        [[0.5, 0.5], [0.5, 0.5]]
    """
    if dim is None:
        dim = _softmax_dim(input.dim())
    return ops.softmax(input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel: int = 3, dtype=None):
    """``log(softmax(x))``, computed stably.

    Example:
        >>> F.log_softmax(dl.zeros(1, 2), dim=1).exp().tolist()
        [[0.5, 0.5]]
    """
    if dim is None:
        dim = _softmax_dim(input.dim())
    return ops.log_softmax(input, dim, dtype)


def threshold(input, threshold: float, value: float, inplace: bool = False):
    """``value`` where ``input <= threshold``, ``input`` elsewhere (NaN stays NaN).

    Example:
        >>> F.threshold(dl.tensor([0.5, 2.0]), 1.0, -1.0).tolist()
        [-1.0, 2.0]
    """
    return _fill_below(input, threshold, value, inplace)


def threshold_(input, threshold: float, value: float):
    """In-place ``threshold``."""
    return _fill_below(input, threshold, value, inplace=True)


def _fill_below(input, limit: float, value: float, inplace: bool):
    below = input <= limit
    return input.masked_fill_(below, value) if inplace else input.masked_fill(below, value)


def celu(input, alpha: float = 1.0, inplace: bool = False):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    Example:
        >>> F.celu(dl.tensor([1.0, 0.0])).tolist()
        [1.0, 0.0]
    """
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    _check_floating(input, "elu_cpu")
    return _result(input, ops.where(input > 0, input, ops.expm1(input * (1.0 / alpha)) * alpha), inplace)


def celu_(input, alpha: float = 1.0):
    """In-place ``celu``."""
    return celu(input, alpha, inplace=True)


def rrelu(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False, inplace: bool = False):
    """Randomized leaky ReLU: while training each non-positive element gets a slope drawn
    uniformly from ``[lower, upper]``; otherwise the slope is ``(lower + upper) / 2``.

    Example:
        >>> F.rrelu(dl.tensor([-2.0, 3.0]), 0.25, 0.75).tolist()
        [-1.0, 3.0]
    """
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    _check_floating(input, "rrelu_with_noise_cpu")
    slopes = ops.rand_like(input) * (upper - lower) + lower
    return _result(input, ops.where(input > 0, input, input * slopes), inplace)


def rrelu_(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False):
    """In-place ``rrelu``."""
    return rrelu(input, lower, upper, training, inplace=True)


def softmin(input, dim=None, _stacklevel: int = 3, dtype=None):
    """``softmax(-input)`` along ``dim``.

    Example:
        >>> F.softmin(dl.zeros(2), dim=0).tolist()
        [0.5, 0.5]
    """
    if dim is None:
        warnings.warn("Implicit dimension choice for softmin has been deprecated. "
                      "Change the call to include dim=X as an argument.", stacklevel=_stacklevel)
        dim = 0 if input.dim() in (0, 1, 3) else 1
    return ops.softmax(-input, dim, dtype)


def softshrink(input, lambd: float = 0.5):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, 0 between.

    Example:
        >>> F.softshrink(dl.tensor([-2.0, 0.1, 2.0]), 1.0).tolist()
        [-1.0, 0.0, 1.0]
    """
    largest = float(finfo(input.dtype).max)
    if not 0 <= lambd <= largest:
        raise RuntimeError(f"lambda must be in range [0, {largest:g}] for input dtype {TYPE_NAMES[input.dtype]}, "
                           f"but found {lambd:g}")
    return input - ops.clamp(input, -lambd, lambd)


def hardshrink(input, lambd: float = 0.5):
    """``x`` where ``|x| > lambd``, 0 elsewhere.

    Example:
        >>> F.hardshrink(dl.tensor([-2.0, 0.1, 2.0]), 1.0).tolist()
        [-2.0, 0.0, 2.0]
    """
    return ops.where(ops.abs(input) <= lambd, ops.zeros_like(input), input)


#: The smallest exponential sample drawn (a uniform 0 would give an infinite Gumbel noise).
_SMALLEST_EXPONENTIAL = 2.0 ** -24


def gumbel_softmax(logits, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1):
    """Sample from the Gumbel-softmax distribution: ``softmax((logits + g) / tau)`` with Gumbel(0, 1) noise ``g``.

    With ``hard=True`` the result is the one-hot of the sample's argmax in the forward
    pass, with the soft sample's gradient (straight-through estimator).

    Example:
        >>> F.gumbel_softmax(dl.zeros(2, 3), hard=True).sum(-1).tolist()
        [1.0, 1.0]
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    exponential = ops.clamp_min(-ops.log1p(-ops.rand_like(logits)), _SMALLEST_EXPONENTIAL)
    y_soft = ops.softmax((logits - ops.log(exponential)) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.argmax(dim, keepdim=True)
    y_hard = ops.zeros_like(logits).scatter(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
