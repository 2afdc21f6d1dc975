"""Pooling layers: MaxPool2d, AvgPool2d and the adaptive AdaptiveAvgPool2d, AdaptiveMaxPool2d."""
from __future__ import annotations

from .. import functional as F
from ..module import Module


class MaxPool2d(Module):
    """Maximum over sliding ``kernel_size`` windows of each channel plane.

    Args:
        kernel_size: window size (int or pair).
        stride: window step; defaults to ``kernel_size``.
        padding: implicit negative-infinity padding on both sides.
        dilation: spacing between window elements.
        return_indices: also return the argmax positions (if the op supports it).
        ceil_mode: use ceil instead of floor for the output size.

    Example:
        >>> dl.nn.MaxPool2d(2)(dl.randn(1, 3, 8, 8)).shape
        dl.Size([1, 3, 4, 4])
    """

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1,
                 return_indices: bool = False, ceil_mode: bool = False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    """Mean over sliding ``kernel_size`` windows of each channel plane.

    Args:
        kernel_size: window size (int or pair).
        stride: window step; defaults to ``kernel_size``.
        padding: implicit zero padding on both sides.
        ceil_mode: use ceil instead of floor for the output size.
        count_include_pad: whether padded zeros count in the mean's divisor.
        divisor_override: if given, the divisor for every window.

    Example:
        >>> dl.nn.AvgPool2d(2)(dl.ones(1, 1, 4, 4)).shape
        dl.Size([1, 1, 2, 2])
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """Average-pool to a fixed ``output_size`` whatever the input's (H, W).

    Args:
        output_size: int or pair; None in the pair keeps that input dim.

    Example:
        >>> dl.nn.AdaptiveAvgPool2d((1, 1))(dl.randn(2, 8, 7, 5)).shape
        dl.Size([2, 8, 1, 1])
    """

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool2d(Module):
    """Max-pool to a fixed ``output_size`` (and the argmax indices with ``return_indices``).

    Example:
        >>> dl.nn.AdaptiveMaxPool2d(2)(dl.randn(2, 8, 7, 5)).shape
        dl.Size([2, 8, 2, 2])
    """

    def __init__(self, output_size, return_indices: bool = False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input):
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"
