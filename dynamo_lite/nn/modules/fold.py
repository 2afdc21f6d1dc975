"""Layers that mix channels or features: ChannelShuffle, LocalResponseNorm, Bilinear, and Fold/Unfold (col2im/im2col)."""
from __future__ import annotations

import math

from ...ops.api import empty
from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter


class ChannelShuffle(Module):
    """Interleave the channels of ``(N, C, *)`` from ``groups`` groups (see ``F.channel_shuffle``).

    Example:
        >>> dl.nn.ChannelShuffle(2)(dl.arange(4.0).reshape(1, 4, 1)).flatten().tolist()
        [0.0, 2.0, 1.0, 3.0]
    """

    def __init__(self, groups: int):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


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


class Bilinear(Module):
    """``y = x1^T W x2 + b`` with ``W`` of shape ``(out_features, in1_features, in2_features)``.

    Weight and bias start uniform in ``+-1/sqrt(in1_features)``.

    Example:
        >>> dl.nn.Bilinear(2, 3, 4)(dl.randn(5, 2), dl.randn(5, 3)).shape
        dl.Size([5, 4])
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        self.weight = Parameter(empty((out_features, in1_features, in2_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty((out_features,), device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class Unfold(Module):
    """Sliding blocks as columns (im2col; see ``F.unfold``).

    Example:
        >>> dl.nn.Unfold(2)(dl.randn(1, 2, 4, 4)).shape
        dl.Size([1, 8, 9])
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")


class Fold(Unfold):
    """Sum columns of sliding blocks back into ``(N, C, *output_size)`` (col2im; see ``F.fold``).

    Example:
        >>> dl.nn.Fold((4, 4), 2)(dl.randn(1, 8, 9)).shape
        dl.Size([1, 2, 4, 4])
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__(kernel_size, dilation, padding, stride)
        self.output_size = output_size

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}, {super().extra_repr()}"


__all__ = ["Bilinear", "ChannelShuffle", "Fold", "LocalResponseNorm", "Unfold"]
