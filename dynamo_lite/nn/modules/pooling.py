"""Pooling layers: MaxPool1d/2d, AvgPool1d/2d, AdaptiveAvg/MaxPool1d/2d, LPPool1d/2d, MaxUnpool1d/2d."""
from __future__ import annotations

from .. import functional as F
from ..module import Module


__all__ = [
    "AdaptiveAvgPool1d", "AdaptiveMaxPool1d", "AvgPool1d", "LPPool1d", "LPPool2d", "MaxPool1d",
    "MaxUnpool1d", "MaxUnpool2d",
]


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


def _single(value) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _pair(value) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value, value)


class MaxPool1d(MaxPool2d):
    """Maximum over sliding windows of ``(N, C, L)`` (see ``F.max_pool1d``; MaxPool2d's arguments, as ints).

    Example:
        >>> dl.nn.MaxPool1d(2)(dl.randn(1, 3, 8)).shape
        dl.Size([1, 3, 4])
    """

    def forward(self, input):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool1d(Module):
    """Mean over sliding windows of ``(N, C, L)`` (see ``F.avg_pool1d``).

    Example:
        >>> dl.nn.AvgPool1d(2)(dl.ones(1, 1, 4)).tolist()
        [[[1.0, 1.0]]]
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool1d(AdaptiveAvgPool2d):
    """Average-pool ``(N, C, L)`` to length ``output_size``.

    Example:
        >>> dl.nn.AdaptiveAvgPool1d(1)(dl.ones(2, 3, 5)).shape
        dl.Size([2, 3, 1])
    """

    def forward(self, input):
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveMaxPool1d(AdaptiveMaxPool2d):
    """Max-pool ``(N, C, L)`` to length ``output_size`` (and the argmax positions with ``return_indices``).

    Example:
        >>> dl.nn.AdaptiveMaxPool1d(2)(dl.ones(2, 3, 5)).shape
        dl.Size([2, 3, 2])
    """

    def forward(self, input):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class _LPPool(Module):
    def __init__(self, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPool):
    """Power-average pooling of ``(N, C, L)`` (see ``F.lp_pool1d``).

    Example:
        >>> dl.nn.LPPool1d(2, 2)(dl.tensor([[[3.0, 4.0]]])).tolist()
        [[[5.0]]]
    """

    def forward(self, input):
        return F.lp_pool1d(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)


class LPPool2d(_LPPool):
    """Power-average pooling of ``(N, C, H, W)`` (see ``F.lp_pool2d``).

    Example:
        >>> dl.nn.LPPool2d(1, 2)(dl.ones(1, 1, 2, 2)).tolist()
        [[[[4.0]]]]
    """

    def forward(self, input):
        return F.lp_pool2d(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)


class MaxUnpool1d(Module):
    """The partial inverse of ``MaxPool1d``: values back at their argmax positions, zeros elsewhere.

    Example:
        >>> pooled, where = dl.nn.MaxPool1d(2, return_indices=True)(dl.tensor([[[1.0, 2.0]]]))
        >>> dl.nn.MaxUnpool1d(2)(pooled, where).tolist()
        [[[0.0, 2.0]]]
    """

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)

    def forward(self, input, indices, output_size=None):
        return F.max_unpool1d(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool2d(MaxUnpool1d):
    """The partial inverse of ``MaxPool2d``: values back at their argmax positions, zeros elsewhere.

    Example:
        >>> pooled, where = dl.nn.MaxPool2d(2, return_indices=True)(dl.ones(1, 1, 2, 2))
        >>> dl.nn.MaxUnpool2d(2)(pooled, where).shape
        dl.Size([1, 1, 2, 2])
    """

    def __init__(self, kernel_size, stride=None, padding=0):
        Module.__init__(self)
        self.kernel_size = _pair(kernel_size)
        self.stride = _pair(stride if stride is not None else kernel_size)
        self.padding = _pair(padding)

    def forward(self, input, indices, output_size=None):
        return F.max_unpool2d(input, indices, self.kernel_size, self.stride, self.padding, output_size)
