"""Convolution layers: Conv1d, Conv2d (NCHW; channels_last inputs work too), ConvTranspose1d/2d."""
from __future__ import annotations

import math

from ...ops.core import api as ops
from ...tensor.layout import Size
from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter
from ..utils import pair


__all__ = ["ConvTranspose1d"]

_PADDING_STRINGS = ("same", "valid")
_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def reset_conv_parameters(module) -> None:
    """torch's conv init: weight kaiming-uniform(a=sqrt(5)), bias U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    init.kaiming_uniform_(module.weight, a=math.sqrt(5))
    if module.bias is not None:
        fan_in, _ = init.calculate_fan_in_and_fan_out(module.weight)
        if fan_in != 0:
            bound = 1 / math.sqrt(fan_in)
            init.uniform_(module.bias, -bound, bound)


def check_groups(in_channels: int, out_channels: int, groups: int) -> None:
    if groups <= 0:
        raise ValueError("groups must be a positive integer")
    if in_channels % groups != 0:
        raise ValueError("in_channels must be divisible by groups")
    if out_channels % groups != 0:
        raise ValueError("out_channels must be divisible by groups")


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
        check_groups(in_channels, out_channels, groups)
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
        self.weight = Parameter(ops.empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(ops.empty((out_channels,), device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        reset_conv_parameters(self)

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


def _single(value) -> tuple:
    return (int(value),) if isinstance(value, int) else tuple(int(v) for v in value)


def _parameters(module, weight_shape, out_channels, bias, device, dtype) -> None:
    module.weight = Parameter(ops.empty(weight_shape, device=device, dtype=dtype))
    if bias:
        module.bias = Parameter(ops.empty((out_channels,), device=device, dtype=dtype))
    else:
        module.register_parameter("bias", None)
    reset_conv_parameters(module)


class Conv1d(Module):
    """Cross-correlates (N, C_in, L) sequences with ``out_channels`` learned (C_in/groups, K) filters.

    Args:
        padding: an int, ``"valid"`` or ``"same"`` (stride 1 only).

    Example:
        >>> dl.nn.Conv1d(4, 8, 3, padding=1)(dl.randn(2, 4, 10)).shape
        dl.Size([2, 8, 10])
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None):
        super().__init__()
        check_groups(in_channels, out_channels, groups)
        if padding_mode != "zeros":
            raise NotImplementedError(f"Conv1d(padding_mode={padding_mode!r}) is not supported; use 'zeros'")
        if isinstance(padding, str) and padding not in _PADDING_STRINGS:
            raise ValueError(f"Invalid padding string {padding!r}, should be one of {set(_PADDING_STRINGS)}")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride, self.dilation = _single(kernel_size), _single(stride), _single(dilation)
        self.padding = padding if isinstance(padding, str) else _single(padding)
        self.padding_mode = padding_mode
        _parameters(self, (out_channels, in_channels // groups) + self.kernel_size, out_channels, bias, device,
                    dtype)

    def reset_parameters(self) -> None:
        reset_conv_parameters(self)

    def forward(self, input):
        return F.conv1d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self) -> str:
        return f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"


def init_transposed(module, as_tuple, in_channels, out_channels, kernel_size, stride, padding, output_padding,
                    groups, bias, dilation, padding_mode, device, dtype) -> None:
    """A transposed convolution's attributes and parameters; ``as_tuple`` makes a size one value per dim."""
    check_groups(in_channels, out_channels, groups)
    if padding_mode != "zeros":
        raise ValueError(f'Only "zeros" padding mode is supported for {type(module).__name__}')
    module.in_channels, module.out_channels, module.groups = in_channels, out_channels, groups
    module.kernel_size, module.stride, module.padding = as_tuple(kernel_size), as_tuple(stride), as_tuple(padding)
    module.output_padding, module.dilation = as_tuple(output_padding), as_tuple(dilation)
    module.padding_mode = padding_mode
    _parameters(module, (in_channels, out_channels // groups) + module.kernel_size, out_channels, bias, device, dtype)


class ConvTranspose2d(Module):
    """Transposed 2-d convolution: the adjoint of Conv2d, upsampling by ``stride``.

    The weight is ``(in_channels, out_channels // groups, kh, kw)``. ``forward`` takes an
    optional ``output_size`` that picks the ``output_padding`` giving that size.

    Example:
        >>> dl.nn.ConvTranspose2d(8, 4, 2, stride=2)(dl.randn(1, 8, 5, 5)).shape
        dl.Size([1, 4, 10, 10])
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None,
                 dtype=None):
        super().__init__()
        init_transposed(self, pair, in_channels, out_channels, kernel_size, stride, padding, output_padding, groups,
                        bias, dilation, padding_mode, device, dtype)

    def reset_parameters(self) -> None:
        reset_conv_parameters(self)

    def _output_padding(self, input, output_size) -> tuple:
        if output_size is None:
            return self.output_padding
        wanted = tuple(output_size)[-2:]
        smallest = [(input.shape[-2 + i] - 1) * self.stride[i] - 2 * self.padding[i]
                    + self.dilation[i] * (self.kernel_size[i] - 1) + 1 for i in range(2)]
        largest = [size + self.stride[i] - 1 for i, size in enumerate(smallest)]
        for size, low, high in zip(wanted, smallest, largest):
            if not low <= size <= high:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from {smallest} "
                                 f"to {largest} (for an input of {Size(input.shape[-2:])})")
        return tuple(size - low for size, low in zip(wanted, smallest))

    def forward(self, input, output_size=None):
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups, self.dilation)

    def extra_repr(self) -> str:
        return f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"


def _single_as_given(value) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


class ConvTranspose1d(Module):
    """Transposed 1-d convolution of ``(N, C_in, L)`` with a ``(in_channels, out_channels // groups, K)`` weight.

    ``forward`` takes an optional ``output_size`` that picks the ``output_padding`` giving that length.

    Example:
        >>> dl.nn.ConvTranspose1d(8, 4, 2, stride=2)(dl.randn(1, 8, 5)).shape
        dl.Size([1, 4, 10])
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None,
                 dtype=None):
        super().__init__()
        init_transposed(self, _single_as_given, in_channels, out_channels, kernel_size, stride, padding, output_padding,
                        groups, bias, dilation, padding_mode, device, dtype)

    def _output_padding(self, input, output_size) -> tuple:
        if output_size is None:
            return self.output_padding
        wanted = tuple(output_size)[-1]
        smallest = ((input.shape[-1] - 1) * self.stride[0] - 2 * self.padding[0]
                    + self.dilation[0] * (self.kernel_size[0] - 1) + 1)
        largest = smallest + self.stride[0] - 1
        if not smallest <= wanted <= largest:
            raise ValueError(f"requested an output size of {output_size}, but valid sizes range from {[smallest]} "
                             f"to {[largest]} (for an input of {Size(input.shape[-1:])})")
        return (wanted - smallest,)

    def forward(self, input, output_size=None):
        return F.conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups, self.dilation)

    def extra_repr(self) -> str:
        return f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
