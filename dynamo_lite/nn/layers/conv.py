"""Conv2d: 2-d convolution layer (NCHW logical layout; channels_last inputs work too)."""
from __future__ import annotations

import math

import dynamo_lite as dl

from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter
from ..utils import pair

_PADDING_STRINGS = ("same", "valid")
_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class Conv2d(Module):
    """Cross-correlates ``in_channels`` input planes with ``out_channels`` learned filters.

    Args:
        in_channels, out_channels: channel counts of input and output.
        kernel_size, stride, dilation: an int or a pair ``(h, w)``.
        padding: an int, a pair, ``"valid"`` (no padding) or ``"same"`` (output size equals
            input size; stride 1 only).
        groups: split channels into this many independent groups.
        bias: whether to add a learnable per-channel bias.
        padding_mode: only ``"zeros"`` is supported.
        device, dtype: where and how the parameters are allocated.

    Weight ``(out_channels, in_channels // groups, kh, kw)`` and bias start uniform in
    ``[-1/sqrt(fan_in), 1/sqrt(fan_in))`` from the global generator.

    Example:
        >>> conv = dl.nn.Conv2d(3, 8, 3, padding=1)
        >>> conv(dl.randn(2, 3, 16, 16)).shape
        dl.Size([2, 8, 16, 16])
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in _PADDING_STRINGS:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {set(_PADDING_STRINGS)}")
            if padding == "same" and any(s != 1 for s in pair(stride)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = pair(padding)
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got padding_mode='{padding_mode}'")
        if padding_mode != "zeros":
            raise NotImplementedError(f"Conv2d(padding_mode={padding_mode!r}) is not supported; use 'zeros'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = pair(kernel_size)
        self.stride = pair(stride)
        self.padding = padding
        self.dilation = pair(dilation)
        self.groups = groups
        self.padding_mode = padding_mode
        shape = (out_channels, in_channels // groups) + self.kernel_size
        self.weight = Parameter(dl.empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(dl.empty((out_channels,), device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init.calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self) -> str:
        text = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0, 0):
            text += f", padding={self.padding!r}" if isinstance(self.padding, str) else f", padding={self.padding}"
        if self.dilation != (1, 1):
            text += f", dilation={self.dilation}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        if self.padding_mode != "zeros":
            text += f", padding_mode={self.padding_mode}"
        return text
