"""LayerNorm, GroupNorm and RMSNorm: normalisation over trailing dims or channel groups."""
from __future__ import annotations

import numbers

import dynamo_lite as dl

from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter


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
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(dl.empty(self.normalized_shape, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(dl.empty(self.normalized_shape, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
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
        if affine:
            self.weight = Parameter(init.ones_(dl.empty(num_channels, device=device, dtype=dtype)))
            self.bias = Parameter(init.zeros_(dl.empty(num_channels, device=device, dtype=dtype)))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

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
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(init.ones_(dl.empty(self.normalized_shape, device=device, dtype=dtype)))
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, input):
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
