"""nn.functional activations built from pointwise ops: leaky_relu, elu, selu, mish, softplus ...

NOTE: [activations as pointwise compositions] Each activation is written with existing
pointwise registry ops (``where``, ``exp``, ``log1p``, ``clamp`` ...) rather than as a new
op: the tracer records the pieces, the backends fuse them into one loop, and the
derivative comes from the pieces' formulas. Formulas follow torch's numerically stable
forms (``softplus`` switches to the identity above ``threshold``, ``logsigmoid`` never
exponentiates a positive number).
"""
from __future__ import annotations

from ..ops import api as ops
from ..ops.meta_rules import TYPE_NAMES

__all__ = [
    "elu", "elu_", "glu", "hardsigmoid", "hardswish", "hardtanh", "hardtanh_", "leaky_relu", "leaky_relu_",
    "logsigmoid", "mish", "prelu", "relu6", "selu", "softplus", "softsign", "tanhshrink",
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
