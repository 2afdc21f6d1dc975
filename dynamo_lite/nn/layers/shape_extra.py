"""Layers with a 1-d or 3-d sibling elsewhere: ConvTranspose1d, BatchNorm3d, UpsamplingNearest2d, UpsamplingBilinear2d."""
from __future__ import annotations

from ...tensor.layout import Size
from .. import functional as F
from ..module import Module
from .batchnorm import _BatchNorm
from .conv import init_transposed
from .resample import Upsample


def _single(value) -> tuple:
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
        init_transposed(self, _single, in_channels, out_channels, kernel_size, stride, padding, output_padding, groups,
                        bias, dilation, padding_mode, device, dtype)

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


class BatchNorm3d(_BatchNorm):
    """Batch normalization over ``(N, C, D, H, W)`` inputs, per channel (see BatchNorm1d).

    Example:
        >>> dl.nn.BatchNorm3d(3)(dl.randn(2, 3, 2, 2, 2)).shape
        dl.Size([2, 3, 2, 2, 2])
    """

    def _check_input_dim(self, input) -> None:
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour upsampling of ``(N, C, H, W)`` by ``size`` or ``scale_factor``.

    Example:
        >>> dl.nn.UpsamplingNearest2d(scale_factor=2)(dl.ones(1, 1, 2, 2)).shape
        dl.Size([1, 1, 4, 4])
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear upsampling of ``(N, C, H, W)`` with ``align_corners=True``.

    Example:
        >>> dl.nn.UpsamplingBilinear2d(size=(3, 4))(dl.ones(1, 1, 2, 2)).shape
        dl.Size([1, 1, 3, 4])
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


__all__ = ["BatchNorm3d", "ConvTranspose1d", "UpsamplingBilinear2d", "UpsamplingNearest2d"]
