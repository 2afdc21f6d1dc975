"""More nn.functional activations: threshold, celu, rrelu, softmin, softshrink, hardshrink, gumbel_softmax.

Written like ``functional_activation`` (see NOTE: [activations as pointwise compositions]):
compositions of registry ops that the tracer records and the backends fuse. The random
ones (``rrelu`` while training, ``gumbel_softmax``) draw from the default generator with
``rand``, so ``dl.manual_seed`` reproduces them and compiled code draws the same numbers.
"""
from __future__ import annotations

import warnings

from ..ops import api as ops
from ..ops.meta_rules import TYPE_NAMES
from ..tensor.type_info import finfo
from .functional_activation import _check_floating, _result, leaky_relu

__all__ = [
    "celu", "celu_", "gumbel_softmax", "hardshrink", "rrelu", "rrelu_", "softmin", "softshrink", "threshold",
    "threshold_",
]


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
