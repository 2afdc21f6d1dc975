"""Parameter initialisers with torch's fan and gain rules (in place, from dl's generator:
``dl.manual_seed`` reproduces them)."""
from __future__ import annotations

import math
import numbers

import numpy as np

from ..ops.core import api as ops
from ..tensor.dtype import float64

from .grad_mode import no_grad

# Gains of the nonlinearities whose gain is a constant (torch's table).
GAINS = {
    "linear": 1.0, "identity": 1.0, "conv1d": 1.0, "conv2d": 1.0, "conv3d": 1.0, "conv_transpose1d": 1.0,
    "conv_transpose2d": 1.0, "conv_transpose3d": 1.0, "sigmoid": 1.0, "tanh": 5.0 / 3, "relu": math.sqrt(2.0),
    "selu": 3.0 / 4,
}
FAN_MODES = ["fan_in", "fan_out"]


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The recommended scale of weights feeding ``nonlinearity`` (``param``: leaky_relu's slope).

    Example:
        >>> dl.nn.init.calculate_gain("tanh")
        1.6666666666666667
    """
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, numbers.Real) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity not in GAINS:
        raise ValueError(f"Unsupported nonlinearity {nonlinearity}")
    return GAINS[nonlinearity]


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


_calculate_fan_in_and_fan_out = calculate_fan_in_and_fan_out  # the name torch code imports


def _fan(tensor, mode: str) -> int:
    if mode not in FAN_MODES:
        raise ValueError(f"Mode {mode} not supported, please use one of {FAN_MODES}")
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a: float = 0.0, b: float = 1.0, generator=None):
    """Fill ``tensor`` with values drawn uniformly from ``[a, b)``; returns it.

    Example:
        >>> w = dl.nn.init.uniform_(dl.empty(3, 4), -0.1, 0.1)
    """
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean: float = 0.0, std: float = 1.0, generator=None):
    """Fill ``tensor`` with values from N(mean, std**2); returns it.

    Example:
        >>> w = dl.nn.init.normal_(dl.empty(3, 4), std=0.02)
    """
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


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


def eye_(tensor):
    """Fill a 2-D ``tensor`` with the identity matrix; returns it.

    Example:
        >>> dl.nn.init.eye_(dl.empty(2, 3)).tolist()
        [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    """
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        tensor.copy_(ops.eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device))
    return tensor


def xavier_uniform_(tensor, gain: float = 1.0, generator=None):
    """Glorot-uniform init: U(-b, b) with b = gain * sqrt(6 / (fan_in + fan_out)); returns ``tensor``.

    Example:
        >>> w = dl.nn.init.xavier_uniform_(dl.empty(16, 8))
    """
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain: float = 1.0, generator=None):
    """Glorot-normal init: N(0, std**2) with std = gain * sqrt(2 / (fan_in + fan_out)); returns ``tensor``."""
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    return calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))


def kaiming_uniform_(tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu", generator=None):
    """He-uniform init: U(-b, b) with b = gain * sqrt(3 / fan); returns ``tensor``.

    Example:
        >>> w = dl.nn.init.kaiming_uniform_(dl.empty(16, 8), a=5 ** 0.5)
    """
    if 0 in tuple(tensor.shape):
        return tensor  # nothing to initialise (torch warns and does the same)
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu", generator=None):
    """He-normal init: N(0, std**2) with std = gain / sqrt(fan); returns ``tensor``."""
    if 0 in tuple(tensor.shape):
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def trunc_normal_(tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0, generator=None):
    """N(mean, std**2) restricted to ``[a, b]``, by inverting the normal CDF; returns ``tensor``.

    Example:
        >>> w = dl.nn.init.trunc_normal_(dl.empty(3, 4), std=0.02)
    """
    def cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    low, high = cdf((a - mean) / std), cdf((b - mean) / std)
    with no_grad():
        tensor.uniform_(2 * low - 1, 2 * high - 1, generator=generator)
        tensor.erfinv_()
        tensor.mul_(std * math.sqrt(2.0))
        tensor.add_(mean)
        tensor.clamp_(min=a, max=b)
    return tensor


def orthogonal_(tensor, gain: float = 1.0, generator=None):
    """A (semi-)orthogonal matrix from the QR decomposition of a normal sample, times ``gain``.

    Tensors with more than two dims are flattened after the first.

    Example:
        >>> w = dl.nn.init.orthogonal_(dl.empty(4, 3))
    """
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    sample = ops.empty(rows, cols, dtype=float64).normal_(0, 1, generator=generator).numpy()
    if rows < cols:
        sample = sample.T
    q, r = np.linalg.qr(sample)
    q = q * np.sign(np.diag(r))  # makes the decomposition unique (a uniform orthogonal matrix)
    if rows < cols:
        q = q.T
    with no_grad():
        tensor.copy_(ops.tensor(q * gain, dtype=tensor.dtype, device=tensor.device).reshape(tensor.shape))
    return tensor
