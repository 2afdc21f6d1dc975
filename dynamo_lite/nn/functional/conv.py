"""nn.functional convolutions: conv1d, conv2d, conv_transpose1d/2d, and unfold/fold (im2col/col2im)."""
from __future__ import annotations

from ...ops.core import api as ops


__all__ = ["conv2d", "conv_transpose1d", "conv1d", "conv_transpose2d", "fold", "unfold"]


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1):
    """1-d cross-correlation of an ``(N, C, L)`` (or ``(C, L)``) input with ``(O, C/groups, K)`` weights.

    Example:
        >>> F.conv1d(dl.randn(1, 2, 10), dl.randn(4, 2, 3)).shape
        dl.Size([1, 4, 8])
    """
    return ops.conv1d(input, weight, bias, stride, padding, dilation, groups)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups: int = 1,
                     dilation=1):
    """Transposed 2-d convolution with ``(C_in, C_out/groups, kh, kw)`` weights.

    Example:
        >>> F.conv_transpose2d(dl.randn(1, 4, 5, 5), dl.randn(4, 2, 3, 3), stride=2).shape
        dl.Size([1, 2, 11, 11])
    """
    return ops.conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding blocks as columns: ``(N, C, H, W)`` -> ``(N, C*kh*kw, blocks)`` (im2col).

    Example:
        >>> F.unfold(dl.randn(1, 2, 4, 4), 2).shape
        dl.Size([1, 8, 9])
    """
    return ops.im2col(input, kernel_size, dilation, padding, stride)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sum columns of sliding blocks back into ``(N, C, *output_size)`` (col2im).

    Example:
        >>> F.fold(dl.randn(1, 8, 9), (4, 4), 2).shape
        dl.Size([1, 2, 4, 4])
    """
    return ops.col2im(input, output_size, kernel_size, dilation, padding, stride)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1):
    """2-d cross-correlation of an ``(N, C, H, W)`` (or ``(C, H, W)``) input.

    channels_last inputs give channels_last outputs.

    Args:
        input, weight: ``(N, C_in, H, W)`` and ``(C_out, C_in / groups, kh, kw)``.
        bias: ``(C_out,)`` or None.
        stride, dilation: int or pair.
        padding: int, pair, ``"valid"`` or ``"same"`` (stride 1 only).
        groups: number of channel groups.

    Example:
        >>> F.conv2d(dl.randn(1, 3, 8, 8), dl.randn(4, 3, 3, 3), padding=1).shape
        dl.Size([1, 4, 8, 8])
    """
    return ops.conv2d(input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups: int = 1, dilation=1):
    """Transposed 1-d convolution of ``(N, C_in, L)`` with ``(C_in, C_out/groups, K)`` weights (the 2-d op over a unit height).

    Example:
        >>> F.conv_transpose1d(dl.randn(1, 4, 5), dl.randn(4, 2, 3), stride=2).shape
        dl.Size([1, 2, 11])
    """
    def plane(value, unit):
        return (unit, value[0] if isinstance(value, (tuple, list)) else value)

    out = ops.conv_transpose2d(input.unsqueeze(-2), weight.unsqueeze(-2), bias, plane(stride, 1), plane(padding, 0),
                               plane(output_padding, 0), groups, plane(dilation, 1))
    return out.squeeze(-2)
