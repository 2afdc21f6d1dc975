"""nn.functional layers that mix channels or features: channel_shuffle, local_response_norm, bilinear, conv_transpose1d."""
from __future__ import annotations

from ..ops import api as ops

__all__ = ["bilinear", "channel_shuffle", "conv_transpose1d", "local_response_norm"]


def channel_shuffle(input, groups: int):
    """Interleave the channels of ``(N, C, *)`` from ``groups`` groups: ``(g, C/g)`` becomes ``(C/g, g)``.

    Example:
        >>> F.channel_shuffle(dl.arange(4.0).reshape(1, 4, 1), 2).flatten().tolist()
        [0.0, 2.0, 1.0, 3.0]
    """
    if input.dim() < 3:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    batch, channels = input.shape[0], input.shape[1]
    if channels % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {channels} channels and {groups} "
                           "groups.")
    rest = tuple(input.shape[2:])
    grouped = input.reshape((batch, groups, channels // groups) + rest)
    return grouped.transpose(1, 2).reshape(tuple(input.shape))


def local_response_norm(input, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
    """Divide each element by ``(k + alpha * mean of squares over ``size`` neighbouring channels) ** beta``.

    Example:
        >>> F.local_response_norm(dl.ones(1, 3, 1), 3, alpha=3.0, beta=1.0, k=0.0).flatten().tolist()
        [0.5, 0.3333333432674408, 0.5]
    """
    if input.dim() < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input (got {input.dim()} "
                         "dimensions)")
    if input.numel() == 0:
        return input
    channels = input.shape[1]
    squares = (input * input).transpose(0, 1)  # channels first: the window slides along dim 0
    padded = ops.constant_pad_nd(squares.unsqueeze(0), (0, 0) * (input.dim() - 1) + (size // 2, (size - 1) // 2),
                                 0)[0]
    total = padded.narrow(0, 0, channels)
    for offset in range(1, size):
        total = total + padded.narrow(0, offset, channels)
    div = (total / size).transpose(0, 1).mul(alpha).add(k).pow(beta)
    return input / div


def bilinear(input1, input2, weight, bias=None):
    """``y[..., o] = sum_ij input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o]``.

    Example:
        >>> F.bilinear(dl.ones(1, 2), dl.ones(1, 3), dl.ones(4, 2, 3)).tolist()
        [[6.0, 6.0, 6.0, 6.0]]
    """
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    for dim in range(input1.dim() - 1):
        if input1.shape[dim] != input2.shape[dim]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {dim}: got "
                               f"{input1.shape[dim]} and {input2.shape[dim]}")
    if weight.dim() != 3 or weight.shape[1] != input1.shape[-1] or weight.shape[2] != input2.shape[-1]:
        raise RuntimeError(f"bilinear(): weight of shape {list(weight.shape)} does not match inputs of sizes "
                           f"{input1.shape[-1]} and {input2.shape[-1]}")
    out = ops.einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias


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
