"""Sliding-window ops over (N, C, H, W) images: conv2d, max_pool2d (with indices) and avg_pool2d.

Inputs may be NCHW or channels_last; outputs follow the input's memory format as torch's
do (conv2d also goes channels_last when its weight is). Op-level geometry arguments are
pairs of ints, normalized by the public functions (and by ``dl.nn.functional``).
"""
from __future__ import annotations

import operator

import numpy as np

from ...tensor import layout
from ...tensor.dtype import bool_
from ...tensor.symint import SymInt
from ..core import meta_rules as mr
from ..core.kernel_utils import quiet
from .max_pool import lowest, max_pool2d_with_indices_kernel
from ..core.registry import register_op

__all__ = ["conv2d", "max_pool2d", "avg_pool2d"]


def pair(value, name: str = "argument") -> tuple:
    """An int or a 1/2-sequence of ints as an ``(h, w)`` pair; a symbolic int (a traced ``dynamic=True`` int)
    is specialized to its value, with a guard, since window geometry is fixed per graph."""
    if isinstance(value, SymInt):
        value = operator.index(value)
    if isinstance(value, int):
        return (value, value)
    value = tuple(value)
    if len(value) == 1:
        return value * 2
    if len(value) != 2:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of 2 values, but got {list(value)}")
    return value


def _image_strides(input, weight, shape: tuple):
    """channels_last output when the input (or the conv weight) is channels_last."""
    if len(shape) == 4 and any(
        t is not None and len(t._sizes) == 4 and t.suggest_memory_format() is layout.channels_last
        for t in (input, weight)
    ):
        return layout.channels_last_strides(shape)
    return None


# -- conv2d -------------------------------------------------------------------------------
def conv_output_size(size: int, kernel: int, stride: int, padding: int, dilation: int) -> int:
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def check_conv_operands(op_name: str, input, weight, bias) -> int:
    """The rank, weight rank and dtype checks every 2-d convolution makes; returns the input's rank."""
    ndim = len(input._sizes)
    if ndim not in (3, 4):
        raise RuntimeError(
            f"Expected 3D (unbatched) or 4D (batched) input to {op_name}, but got input of size: {list(input._sizes)}"
        )
    if len(weight._sizes) != 4:
        raise RuntimeError(
            f"Expected 4-dimensional weight for {ndim}-dimensional input {list(input._sizes)}, but got "
            f"{len(weight._sizes)}-dimensional weight of size {list(weight._sizes)} instead"
        )
    if input._dtype is not weight._dtype or (bias is not None and bias._dtype is not input._dtype):
        other = weight if input._dtype is not weight._dtype else bias
        raise RuntimeError(f"Input type ({input._dtype}) and weight type ({other._dtype}) should be the same")
    return ndim


def conv2d_meta(input, weight, bias=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1):
    ndim = check_conv_operands("conv2d", input, weight, bias)
    if input._dtype is bool_:
        raise NotImplementedError("\"slow_conv2d_cpu\" not implemented for 'Bool'")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    batched = input._sizes if ndim == 4 else (1,) + input._sizes
    out_channels, group_channels, kh, kw = weight._sizes
    if out_channels % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but got "
            f"weight of size [{list(weight._sizes)}] instead"
        )
    if batched[1] != group_channels * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight._sizes)}, expected input{list(batched)} to "
            f"have {group_channels * groups} channels, but got {batched[1]} channels instead"
        )
    if bias is not None and bias._sizes != (out_channels,):
        raise RuntimeError(
            f"Given weight of size {list(weight._sizes)}, expected bias to be 1-dimensional with "
            f"{out_channels} elements, but got bias of size {list(bias._sizes)} instead"
        )
    padded = [batched[2] + 2 * padding[0], batched[3] + 2 * padding[1]]
    effective = [dilation[0] * (kh - 1) + 1, dilation[1] * (kw - 1) + 1]
    if padded[0] < effective[0] or padded[1] < effective[1]:
        raise RuntimeError(
            f"Calculated padded input size per channel: ({padded[0]} x {padded[1]}). Kernel size: "
            f"({effective[0]} x {effective[1]}). Kernel size can't be greater than actual input size"
        )
    oh = conv_output_size(batched[2], kh, stride[0], padding[0], dilation[0])
    ow = conv_output_size(batched[3], kw, stride[1], padding[1], dilation[1])
    shape = (batched[0], out_channels, oh, ow) if ndim == 4 else (out_channels, oh, ow)
    devices = (input, weight) if bias is None else (input, weight, bias)
    return mr.make_meta(shape, input._dtype, _image_strides(input, weight, shape), mr.common_device(devices))


def _padded(xp, x, pad_h: tuple, pad_w: tuple, fill, channels_last: bool):
    """``x`` (N, C, H, W) with ``(top, bottom)``/``(left, right)`` borders of ``fill``, same layout."""
    if not any(pad_h) and not any(pad_w):
        return x
    n, c, h, w = x.shape
    size_h, size_w = h + sum(pad_h), w + sum(pad_w)
    if channels_last:
        buf = xp.full((n, size_h, size_w, c), fill, dtype=x.dtype).transpose(0, 3, 1, 2)
    else:
        buf = xp.full((n, c, size_h, size_w), fill, dtype=x.dtype)
    buf[:, :, pad_h[0]:pad_h[0] + h, pad_w[0]:pad_w[0] + w] = x
    return buf


def is_nhwc(x) -> bool:
    """True when a 4-D array is laid out channels_last (and not also plain contiguous)."""
    return not x.flags.c_contiguous and x.transpose(0, 2, 3, 1).flags.c_contiguous


def _windows(xp, x, kernel, stride, dilation, out_hw):
    """A zero-copy (N, C, OH, OW, KH, KW) view of every window of ``x``."""
    sn, sc, sh, sw = x.strides
    shape = x.shape[:2] + tuple(out_hw) + tuple(kernel)
    strides = (sn, sc, sh * stride[0], sw * stride[1], sh * dilation[0], sw * dilation[1])
    if xp is np:
        return np.lib.stride_tricks.as_strided(x, shape, strides, writeable=False)
    return xp.lib.stride_tricks.as_strided(x, shape, strides)


def conv2d_kernel(xp, x, weight, bias=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1, *, out):
    # NOTE: [conv2d as matmul] The windows are a strided view; one copy lays them out as a
    # matrix (im2col) in the order that makes the product land directly in ``out``'s memory:
    # per image (G, Og, Cg*KH*KW) @ (G, Cg*KH*KW, OH*OW) for NCHW, and for channels_last
    # (G, N*OH*OW, KH*KW*Cg) @ (G, KH*KW*Cg, Og) written through an NHWC view of ``out``.
    target = out[None] if x.ndim == 3 else out
    x = x[None] if x.ndim == 3 else x
    if target.size == 0:
        return out
    compute = np.dtype(np.float32) if out.dtype == np.float16 else out.dtype
    x, weight = x.astype(compute, copy=False), weight.astype(compute, copy=False)
    n, _, _, _ = x.shape
    o, cg, kh, kw = weight.shape
    oh, ow = target.shape[2:]
    g, og = groups, o // groups
    channels_last = is_nhwc(target)
    if compute == target.dtype:
        work = target
    elif channels_last:
        work = xp.empty((n, oh, ow, o), dtype=compute).transpose(0, 3, 1, 2)
    else:
        work = xp.empty(target.shape, dtype=compute)
    source = _padded(xp, x, (padding[0],) * 2, (padding[1],) * 2, 0, channels_last)
    win = _windows(xp, source, (kh, kw), stride, dilation, (oh, ow))
    if channels_last:
        rows = n * oh * ow
        cols = win.transpose(0, 2, 3, 4, 5, 1).reshape(rows, kh * kw, g, cg)
        cols = cols.transpose(2, 0, 1, 3).reshape(g, rows, kh * kw * cg)
        wmat = weight.reshape(g, og, cg, kh, kw).transpose(0, 3, 4, 2, 1).reshape(g, kh * kw * cg, og)
        xp.matmul(cols, wmat, out=work.transpose(0, 2, 3, 1).reshape(rows, g, og).transpose(1, 0, 2))
    else:
        cols = win.transpose(0, 1, 4, 5, 2, 3).reshape(n, g, cg * kh * kw, oh * ow)
        wmat = weight.reshape(g, og, cg * kh * kw)
        xp.matmul(wmat, cols, out=work.reshape(n, g, og, oh * ow))
    if bias is not None:
        with quiet(xp):  # an infinite bias meeting the opposite infinity is NaN, without NumPy's warning
            work += bias.astype(compute, copy=False).reshape(-1, 1, 1)
    if work is not target:
        target[...] = work
    return out


# -- pooling ------------------------------------------------------------------------------
def pool_output_size(size: int, kernel: int, pad: int, stride: int, dilation: int, ceil_mode: bool) -> int:
    """Output length of a pooling window sweep (the last window must start inside the input)."""
    span = size + 2 * pad - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)
    out = span // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _pool_meta(input, kernel, stride, padding, dilation, ceil_mode):
    sizes = input._sizes
    if len(sizes) not in (3, 4) or any(s == 0 for s in sizes[-3:]):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    if input._dtype is bool_:
        raise NotImplementedError("pooling is not implemented for 'Bool'")
    if min(kernel) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kernel[0]} kW: {kernel[1]}")
    if min(stride) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {stride[0]} dW: {stride[1]}")
    if min(dilation) <= 0:
        raise RuntimeError(
            f"dilation should be greater than zero, but got dilationH: {dilation[0]} dilationW: {dilation[1]}"
        )
    for k, p, d in zip(kernel, padding, dilation):
        if p < 0 or p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(_pad_message(k, p, d))
    c, h, w = sizes[-3:]
    oh = pool_output_size(h, kernel[0], padding[0], stride[0], dilation[0], ceil_mode)
    ow = pool_output_size(w, kernel[1], padding[1], stride[1], dilation[1], ceil_mode)
    if oh < 1 or ow < 1:
        raise RuntimeError(
            f"Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{oh}x{ow}). Output size is too small"
        )
    shape = sizes[:-2] + (oh, ow)
    return mr.make_meta(shape, input._dtype, _image_strides(input, None, shape), input._device)


def _pad_message(k, p, d):
    return f"pad should be at most half of effective kernel size, but got pad={p}, kernel_size={k} and dilation={d}"


def max_pool2d_meta(input, kernel_size, stride, padding=(0, 0), dilation=(1, 1), ceil_mode=False):
    return _pool_meta(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d_with_indices_meta(input, kernel_size, stride, padding=(0, 0), dilation=(1, 1), ceil_mode=False):
    values = max_pool2d_meta(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (values, mr.make_meta(values._sizes, mr.int64, values._strides, values._device))


def avg_pool2d_meta(input, kernel_size, stride, padding=(0, 0), ceil_mode=False, count_include_pad=True,
                    divisor_override=None):
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    return _pool_meta(input, kernel_size, stride, padding, (1, 1), ceil_mode)


def _pool_slices(xp, x, kernel, stride, padding, dilation, out_hw, fill):
    """Yield ``(i, j, view)``: the input element at offset (i, j) of every window, as one view."""
    _, _, h, w = x.shape
    oh, ow = out_hw
    # Pad enough that every window fits (ceil_mode windows may hang over the far edge).
    bottom = max(0, (oh - 1) * stride[0] + dilation[0] * (kernel[0] - 1) + 1 - (h + padding[0]))
    right = max(0, (ow - 1) * stride[1] + dilation[1] * (kernel[1] - 1) + 1 - (w + padding[1]))
    source = _padded(xp, x, (padding[0], bottom), (padding[1], right), fill, is_nhwc(x))
    for i in range(kernel[0]):
        top = i * dilation[0]
        for j in range(kernel[1]):
            left = j * dilation[1]
            yield i, j, source[:, :, top:top + (oh - 1) * stride[0] + 1:stride[0], left:left + (ow - 1) * stride[1] + 1:stride[1]]


def max_pool2d_kernel(xp, x, kernel_size, stride, padding=(0, 0), dilation=(1, 1), ceil_mode=False, *, out):
    target = out[None] if x.ndim == 3 else out
    x = x[None] if x.ndim == 3 else x
    slices = _pool_slices(xp, x, kernel_size, stride, padding, dilation, target.shape[2:], lowest(x.dtype))
    _, _, first = next(slices)
    xp.copyto(target, first)
    for _, _, view in slices:
        xp.maximum(target, view, out=target)
    return out


def _window_counts(xp, size, out_size, kernel, stride, pad, include_pad):
    starts = xp.arange(out_size) * stride - pad
    ends = xp.minimum(starts + kernel, size + pad)
    if include_pad:
        return ends - starts
    return xp.minimum(ends, size) - xp.maximum(starts, 0)


def avg_pool2d_kernel(xp, x, kernel_size, stride, padding=(0, 0), ceil_mode=False, count_include_pad=True,
                      divisor_override=None, *, out):
    target = out[None] if x.ndim == 3 else out
    x = x[None] if x.ndim == 3 else x
    floating = x.dtype.kind == "f"
    total = xp.zeros(target.shape, dtype=np.float32 if x.dtype == np.float16 else (x.dtype if floating else np.int64))
    for _, _, view in _pool_slices(xp, x, kernel_size, stride, padding, (1, 1), target.shape[2:], 0):
        total += view
    if divisor_override is not None:
        divisor = divisor_override
    else:
        h, w = x.shape[2:]
        oh, ow = target.shape[2:]
        dh = _window_counts(xp, h, oh, kernel_size[0], stride[0], padding[0], count_include_pad)
        dw = _window_counts(xp, w, ow, kernel_size[1], stride[1], padding[1], count_include_pad)
        divisor = dh[:, None] * dw[None, :]
    if floating:
        xp.divide(total, divisor, out=target, casting="unsafe")
    else:  # integer pooling divides with truncation, like C++ integer division
        target[...] = xp.trunc(total / divisor)
    return out


# -- registration -------------------------------------------------------------------------
CONV_OPS = {
    "conv2d": (conv2d_meta, conv2d_kernel),
    "max_pool2d": (max_pool2d_meta, max_pool2d_kernel),
    "max_pool2d_with_indices": (max_pool2d_with_indices_meta, max_pool2d_with_indices_kernel),
    "avg_pool2d": (avg_pool2d_meta, avg_pool2d_kernel),
}
OPS = {name: register_op(name, meta=meta, kernel=kernel, tags=("window",)) for name, (meta, kernel) in CONV_OPS.items()}


# -- public functions ---------------------------------------------------------------------
def _same_padding(weight, stride, dilation):
    """Per-dim (before, after) padding for padding="same" (the extra pixel goes after)."""
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    totals = [d * (k - 1) for k, d in zip(weight.shape[2:], dilation)]
    return [(t // 2, t - t // 2) for t in totals]


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D cross-correlation of an (N, C, H, W) or (C, H, W) input with (O, C/groups, KH, KW) weights.

    Args:
        padding: int, pair, ``"valid"`` or ``"same"`` (stride 1; an odd total pads one more
            pixel after than before, as torch does).

    Example:
        >>> dl.conv2d(dl.ones(1, 3, 8, 8), dl.ones(4, 3, 3, 3), padding=1).shape
        dl.Size([1, 4, 8, 8])
    """
    stride, dilation = pair(stride, "stride"), pair(dilation, "dilation")
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0, 0)
        elif padding == "same":
            (top, bottom), (left, right) = _same_padding(weight, stride, dilation)
            if (top, left) != (bottom, right):
                from ..shape.shape_ops import constant_pad_nd

                input = constant_pad_nd(input, (0, right - left, 0, bottom - top))
            padding = (top, left)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        padding = pair(padding, "padding")
    return OPS["conv2d"](input, weight, bias, stride, padding, dilation, groups)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Max over sliding windows of each channel; ``stride`` defaults to ``kernel_size``.

    Example:
        >>> dl.max_pool2d(dl.ones(1, 1, 4, 4), 2).shape
        dl.Size([1, 1, 2, 2])
    """
    kernel = pair(kernel_size, "kernel_size")
    stride = kernel if stride is None or stride == () or stride == [] else pair(stride, "stride")
    name = "max_pool2d_with_indices" if return_indices else "max_pool2d"
    return OPS[name](input, kernel, stride, pair(padding, "padding"), pair(dilation, "dilation"), ceil_mode)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Mean over sliding windows of each channel; ``stride`` defaults to ``kernel_size``.

    Example:
        >>> dl.avg_pool2d(dl.ones(1, 1, 4, 4), 2).tolist()
        [[[[1.0, 1.0], [1.0, 1.0]]]]
    """
    kernel = pair(kernel_size, "kernel_size")
    stride = kernel if stride is None or stride == () or stride == [] else pair(stride, "stride")
    return OPS["avg_pool2d"](input, kernel, stride, pair(padding, "padding"), ceil_mode, count_include_pad,
                             divisor_override)


METHODS: dict = {}
