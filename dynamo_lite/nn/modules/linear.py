"""Linear, Bilinear and Identity layers."""
from __future__ import annotations

import math

from ...ops.core import api as ops
from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter
from ...ops.core.api import empty

__all__ = ["Bilinear"]


class Identity(Module):
    """Returns its input unchanged; accepts and ignores any constructor arguments.

    Example:
        >>> dl.nn.Identity(54, unused="x")(dl.ones(2)).shape
        dl.Size([2])
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x @ weight.T + bias`` over the last dimension of ``x``.

    Weight and bias start uniform in ``[-1/sqrt(in_features), 1/sqrt(in_features))``,
    drawn from the global generator (``dl.manual_seed`` makes them reproducible).

    Args:
        in_features: size of each input sample.
        out_features: size of each output sample.
        bias: whether to add a learnable bias.
        device, dtype: where and how the parameters are allocated.

    Example:
        >>> fc = dl.nn.Linear(20, 30)
        >>> fc(dl.randn(128, 20)).shape
        dl.Size([128, 30])
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(ops.empty((out_features, in_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(ops.empty((out_features,), device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        # kaiming_uniform with a=sqrt(5) gives bound 1/sqrt(fan_in), the usual default.
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.in_features
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


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
