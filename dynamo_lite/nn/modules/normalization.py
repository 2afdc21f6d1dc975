"""LayerNorm, GroupNorm, RMSNorm and LocalResponseNorm: normalisation over trailing dims, channel
groups or neighbouring channels."""
from __future__ import annotations

import numbers

from ...ops.core import api as ops
from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter

__all__ = ["LocalResponseNorm"]


def _as_shape(normalized_shape) -> tuple:
    """An int or a sequence of ints as a shape tuple."""
    if isinstance(normalized_shape, numbers.Integral):
        return (normalized_shape,)
    return tuple(normalized_shape)


def add_affine(module, shape: tuple, weight: bool, bias, device, dtype) -> None:
    """Give ``module`` a ``weight`` of ones and a ``bias`` of zeros of ``shape``; a part not
    learned is registered as None (``bias=None``: the module has no bias at all)."""
    parts = (("weight", weight, init.ones_),) + ((("bias", bias, init.zeros_),) if bias is not None else ())
    for name, learned, fill in parts:
        value = Parameter(fill(ops.empty(shape, device=device, dtype=dtype))) if learned else None
        module.register_parameter(name, value)


class LayerNorm(Module):
    """Normalise over the last ``len(normalized_shape)`` dims, then scale and shift.

    Args:
        normalized_shape: an int or the trailing shape to normalise over.
        eps: added to the variance for numerical stability.
        elementwise_affine: learn a per-element ``weight`` (ones) and ``bias`` (zeros).
        bias: whether the affine part has a bias.
        device, dtype: where and how the parameters are allocated.

    Example:
        >>> ln = dl.nn.LayerNorm(10)
        >>> ln(dl.randn(20, 5, 10)).shape
        dl.Size([20, 5, 10])
    """

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _as_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        add_affine(self, self.normalized_shape, elementwise_affine, elementwise_affine and bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class GroupNorm(Module):
    """Normalize over groups of channels: ``num_channels`` split into ``num_groups``.

    Args:
        affine: learn a per-channel ``weight`` (ones) and ``bias`` (zeros).

    Example:
        >>> dl.nn.GroupNorm(2, 6)(dl.randn(3, 6, 4, 4)).shape
        dl.Size([3, 6, 4, 4])
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device=None, dtype=None):
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        add_affine(self, (num_channels,), affine, affine, device, dtype)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


class RMSNorm(Module):
    """Root-mean-square normalization over the trailing ``normalized_shape`` dims, times ``weight``.

    Args:
        eps: added to the mean square; None means the dtype's machine epsilon.
        elementwise_affine: learn a per-element ``weight`` (ones).

    Example:
        >>> dl.nn.RMSNorm(8)(dl.randn(2, 5, 8)).shape
        dl.Size([2, 5, 8])
    """

    def __init__(self, normalized_shape, eps=None, elementwise_affine: bool = True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _as_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        add_affine(self, self.normalized_shape, elementwise_affine, None, device, dtype)

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, input):
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class LocalResponseNorm(Module):
    """Normalize each element by the squares of ``size`` neighbouring channels (see ``F.local_response_norm``).

    Example:
        >>> dl.nn.LocalResponseNorm(2)(dl.randn(1, 4, 3, 3)).shape
        dl.Size([1, 4, 3, 3])
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
