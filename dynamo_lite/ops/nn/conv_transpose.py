"""conv_transpose2d (the adjoint of conv2d) and conv1d (conv2d over a height-1 image).

NOTE: [conv_transpose2d as col2im] Every input pixel spreads ``weight`` over a
(KH, KW) patch of the output: one matmul per group makes all patches at once as
(N, G, Og*KH*KW, H*W) columns, and KH*KW strided adds scatter them into the padded
output (overlapping patches accumulate), which is then cropped by ``padding``.
"""
from __future__ import annotations

import numpy as np

from ...tensor.dtype import bool_
from ..core import meta_rules as mr
from .conv import check_conv_operands, conv2d, pair
from ..core.registry import register_op

__all__ = ["conv_transpose2d", "conv1d"]


def transposed_size(size, kernel, stride, padding, dilation, output_padding) -> int:
    return (size - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1


def conv_transpose2d_meta(input, weight, bias=None, stride=(1, 1), padding=(0, 0), output_padding=(0, 0),
                          groups=1, dilation=(1, 1)):
    ndim = check_conv_operands("conv_transpose2d", input, weight, bias)
    if input._dtype is bool_ or not input._dtype.is_floating_point:
        raise NotImplementedError(f"\"slow_conv_transpose2d_cpu\" not implemented for '{mr.TYPE_NAMES[input._dtype]}'")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    for op, s, d in zip(output_padding, stride, dilation):
        if op >= s and op >= d:
            raise RuntimeError(
                f"output padding must be smaller than either stride or dilation, but got output_padding_height: "
                f"{output_padding[0]} output_padding_width: {output_padding[1]} stride_height: {stride[0]} "
                f"stride_width: {stride[1]} dilation_height: {dilation[0]} dilation_width: {dilation[1]}"
            )
    batched = input._sizes if ndim == 4 else (1,) + input._sizes
    in_channels, out_per_group, kh, kw = weight._sizes
    if batched[1] != in_channels or in_channels % groups:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight._sizes)}, expected input{list(batched)} to have "
            f"{in_channels} channels, but got {batched[1]} channels instead"
        )
    out_channels = out_per_group * groups
    if bias is not None and bias._sizes != (out_channels,):
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight._sizes)}, expected bias to be 1-dimensional with "
            f"{out_channels} elements, but got bias of size {list(bias._sizes)} instead"
        )
    oh = transposed_size(batched[2], kh, stride[0], padding[0], dilation[0], output_padding[0])
    ow = transposed_size(batched[3], kw, stride[1], padding[1], dilation[1], output_padding[1])
    if oh <= 0 or ow <= 0:
        raise RuntimeError(
            f"Given input size per channel: ({batched[2]} x {batched[3]}). Calculated output size per channel: "
            f"({oh} x {ow}). Output size is too small"
        )
    shape = (batched[0], out_channels, oh, ow) if ndim == 4 else (out_channels, oh, ow)
    devices = (input, weight) if bias is None else (input, weight, bias)
    return mr.make_meta(shape, input._dtype, None, mr.common_device(devices))


def conv_transpose2d_kernel(xp, x, weight, bias=None, stride=(1, 1), padding=(0, 0), output_padding=(0, 0),
                            groups=1, dilation=(1, 1), *, out):
    # See NOTE: [conv_transpose2d as col2im].
    target = out[None] if x.ndim == 3 else out
    x = x[None] if x.ndim == 3 else x
    compute = np.dtype(np.float32) if out.dtype == np.float16 else out.dtype
    x, weight = x.astype(compute, copy=False), weight.astype(compute, copy=False)
    n, c, h, w = x.shape
    _, og, kh, kw = weight.shape
    g = groups
    cols = xp.matmul(
        weight.reshape(g, c // g, og * kh * kw).transpose(0, 2, 1),
        x.reshape(n, g, c // g, h * w),
    ).reshape(n, g * og, kh, kw, h, w)
    oh, ow = target.shape[2:]
    full = xp.zeros((n, g * og, oh + 2 * padding[0], ow + 2 * padding[1]), dtype=compute)
    for i in range(kh):
        top = i * dilation[0]
        for j in range(kw):
            left = j * dilation[1]
            full[:, :, top:top + (h - 1) * stride[0] + 1:stride[0], left:left + (w - 1) * stride[1] + 1:stride[1]] += \
                cols[:, :, i, j]
    result = full[:, :, padding[0]:padding[0] + oh, padding[1]:padding[1] + ow]
    if bias is not None:
        result += bias.astype(compute, copy=False).reshape(-1, 1, 1)
    target[...] = result
    return out


OPS = {
    "conv_transpose2d": register_op("conv_transpose2d", meta=conv_transpose2d_meta, kernel=conv_transpose2d_kernel,
                                    tags=("window",)),
}


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 2-D convolution ("deconvolution") with (C_in, C_out/groups, KH, KW) weights.

    Example:
        >>> dl.conv_transpose2d(dl.ones(1, 2, 3, 3), dl.ones(2, 4, 2, 2), stride=2).shape
        dl.Size([1, 4, 6, 6])
    """
    return OPS["conv_transpose2d"](input, weight, bias, pair(stride, "stride"), pair(padding, "padding"),
                                   pair(output_padding, "output_padding"), groups, pair(dilation, "dilation"))


def _single(value, name):
    value = (value,) if isinstance(value, int) else tuple(value)
    if len(value) != 1:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of 1 values to match the "
                           f"convolution dimensions, but got {name}={list(value)}")
    return value[0]


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D cross-correlation of an (N, C, L) or (C, L) input with (O, C/groups, K) weights.

    Computed as conv2d over a height-1 image. ``padding`` may be ``"valid"`` or ``"same"``.

    Example:
        >>> dl.conv1d(dl.ones(1, 2, 10), dl.ones(3, 2, 3), padding=1).shape
        dl.Size([1, 3, 10])
    """
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of size: {list(input.shape)}"
        )
    if weight.dim() != 3:
        raise RuntimeError(
            f"Expected 3-dimensional weight for {input.dim()}-dimensional input {list(input.shape)}, but got "
            f"{weight.dim()}-dimensional weight of size {list(weight.shape)} instead"
        )
    if not isinstance(padding, str):
        padding = (0, _single(padding, "padding"))
    out = conv2d(input.unsqueeze(-2), weight.unsqueeze(-2), bias, (1, _single(stride, "stride")), padding,
                 (1, _single(dilation, "dilation")), groups)
    return out.squeeze(-2)


METHODS: dict = {}
