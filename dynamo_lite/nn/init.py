"""Parameter initialisers (in place, from the global generator: dl.manual_seed reproduces them)."""
from __future__ import annotations

import math

import dynamo_lite as dl

from .grad_mode import no_grad


def _fill_from(tensor, value):
    with no_grad():
        tensor.copy_(value)
    return tensor


def uniform_(tensor, a: float = 0.0, b: float = 1.0):
    """Fill ``tensor`` with values drawn uniformly from ``[a, b)``; returns it.

    Example:
        >>> w = dl.nn.init.uniform_(dl.empty(3, 4), -0.1, 0.1)
    """
    sample = dl.rand(tuple(tensor.shape), dtype=tensor.dtype, device=tensor.device)
    return _fill_from(tensor, sample * (b - a) + a)


def normal_(tensor, mean: float = 0.0, std: float = 1.0):
    """Fill ``tensor`` with values from N(mean, std**2); returns it.

    Example:
        >>> w = dl.nn.init.normal_(dl.empty(3, 4), std=0.02)
    """
    sample = dl.randn(tuple(tensor.shape), dtype=tensor.dtype, device=tensor.device)
    return _fill_from(tensor, sample * std + mean)


def constant_(tensor, value: float):
    """Fill ``tensor`` with ``value``; returns it.

    Example:
        >>> b = dl.nn.init.constant_(dl.empty(4), 0.5)
    """
    with no_grad():
        tensor.fill_(value)
    return tensor


def zeros_(tensor):
    """Fill ``tensor`` with zeros; returns it."""
    return constant_(tensor, 0.0)


def ones_(tensor):
    """Fill ``tensor`` with ones; returns it."""
    return constant_(tensor, 1.0)


def calculate_fan_in_and_fan_out(tensor) -> tuple:
    """(fan_in, fan_out) of a weight: dims 1 and 0 times the receptive field size.

    Example:
        >>> dl.nn.init.calculate_fan_in_and_fan_out(dl.empty(8, 3, 5, 5))
        (75, 200)
    """
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = 1
    for size in tuple(tensor.shape)[2:]:
        receptive *= size
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _gain(nonlinearity: str, param=None) -> float:
    gains = {"linear": 1.0, "conv2d": 1.0, "sigmoid": 1.0, "tanh": 5.0 / 3, "relu": math.sqrt(2.0), "selu": 0.75}
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity not in gains:
        raise ValueError(f"Unsupported nonlinearity {nonlinearity}")
    return gains[nonlinearity]


def kaiming_uniform_(tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"):
    """He-uniform init: U(-b, b) with b = gain * sqrt(3 / fan); returns ``tensor``.

    Example:
        >>> w = dl.nn.init.kaiming_uniform_(dl.empty(16, 8), a=5 ** 0.5)
    """
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    bound = _gain(nonlinearity, a) * math.sqrt(3.0 / fan) if fan else 0.0
    return uniform_(tensor, -bound, bound)
