"""Max-pool kernels that know where each maximum came from: values with argmax indices, and the gradient scatter.

NOTE: [max-pool taps] A *tap* is one kernel element (i, j): the input pixels it reads
over all windows form one strided view of the input, and the outputs whose window has
that element inside the (unpadded) input form one block of the output. Sweeping the taps
in window order over those blocks needs no padded copy of the input, never reads a
padding value, and keeps torch's choice of index: the first maximum of a window (strict
``>``), or its last NaN (``val > max || isnan(val)`` replaces the running choice).
"""
from __future__ import annotations

import numpy as np


def lowest(dtype):
    """The value every other value of ``dtype`` is at least (the running max's start)."""
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _inside(out_size: int, size: int, stride: int, pad: int, offset: int) -> tuple:
    """The outputs ``o`` (a range) whose window element at ``offset`` reads input ``o*stride - pad + offset`` in [0, size)."""
    lo = max(0, -(-(pad - offset) // stride))
    hi = min(out_size, (size - 1 + pad - offset) // stride + 1)
    return lo, max(lo, hi)


def window_taps(in_hw, out_hw, kernel, stride, padding, dilation) -> list:
    """``(k, output block, input view)`` per tap in window order (k = i * KW + j), taps outside the input left out."""
    taps = []
    for i in range(kernel[0]):
        r0, r1 = _inside(out_hw[0], in_hw[0], stride[0], padding[0], i * dilation[0])
        for j in range(kernel[1]):
            c0, c1 = _inside(out_hw[1], in_hw[1], stride[1], padding[1], j * dilation[1])
            if r0 == r1 or c0 == c1:
                continue
            top = r0 * stride[0] - padding[0] + i * dilation[0]
            left = c0 * stride[1] - padding[1] + j * dilation[1]
            rows = slice(top, top + (r1 - r0 - 1) * stride[0] + 1, stride[0])
            cols = slice(left, left + (c1 - c0 - 1) * stride[1] + 1, stride[1])
            taps.append((i * kernel[1] + j, (Ellipsis, slice(r0, r1), slice(c0, c1)), (Ellipsis, rows, cols)))
    return taps


def _index_parts(xp, out_hw, in_hw, kernel, stride, padding, dilation):
    """(per tap, per output) terms of the flat input index ``row * W + col`` a tap of a window reads."""
    oh, ow = out_hw
    width = in_hw[1]
    offsets = xp.asarray([i * dilation[0] * width + j * dilation[1] for i in range(kernel[0]) for j in range(kernel[1])])
    rows = xp.arange(oh) * stride[0] - padding[0]
    cols = xp.arange(ow) * stride[1] - padding[1]
    return offsets, rows[:, None] * width + cols[None, :]


def max_pool2d_with_indices_kernel(xp, x, kernel_size, stride, padding=(0, 0), dilation=(1, 1), ceil_mode=False,
                                   *, out):
    values, indices = out
    in_hw, out_hw = x.shape[-2:], values.shape[-2:]
    taps = window_taps(in_hw, out_hw, kernel_size, stride, padding, dilation)
    values.fill(lowest(x.dtype))
    for _, block, view in taps:
        xp.maximum(values[block], x[view], out=values[block])
    # The first tap equal to its window's max: bool passes, no branch per pixel (a masked
    # copy per tap costs several times more on random data).
    taken = xp.zeros(values.shape, bool)
    hit = xp.empty(values.shape, bool)
    which = xp.zeros(values.shape, np.uint8 if kernel_size[0] * kernel_size[1] < 256 else np.int32)
    for k, block, view in taps:
        xp.equal(x[view], values[block], out=hit[block])
        xp.greater(hit[block], taken[block], out=hit[block])  # a hit where none was taken before
        xp.logical_or(taken[block], hit[block], out=taken[block])
        if k:
            which[block] += hit[block] * which.dtype.type(k)
    if x.dtype.kind == "f" and xp.isnan(values).any():  # rare: give those windows their last NaN
        for k, block, view in taps:
            xp.copyto(which[block], k, where=xp.isnan(x[view]), casting="unsafe")
    offsets, base = _index_parts(xp, out_hw, in_hw, kernel_size, stride, padding, dilation)
    xp.take(offsets, which, out=indices)
    indices += base
    return out


def max_pool2d_backward_kernel(xp, grad, input, kernel_size, stride, padding, dilation, ceil_mode, *, out):
    """max_pool2d's gradient from its input: each window's gradient to the pixel max_pool2d_with_indices picks."""
    values = xp.empty(grad.shape, input.dtype)
    indices = xp.empty(grad.shape, np.int64)
    max_pool2d_with_indices_kernel(xp, input, kernel_size, stride, padding, dilation, ceil_mode, out=(values, indices))
    return max_pool2d_with_indices_backward_kernel(xp, grad, input, kernel_size, stride, padding, dilation, ceil_mode,
                                                   indices, out=out)


def _windows_overlap(kernel, stride, dilation) -> bool:
    return any(s < d * (k - 1) + 1 for k, s, d in zip(kernel, stride, dilation))


def max_pool2d_with_indices_backward_kernel(xp, grad, input, kernel_size, stride, padding, dilation, ceil_mode,
                                            indices, *, out):
    """``zeros_like(input)`` plus each output's gradient at the input pixel its ``indices`` chose."""
    planes = int(np.prod(out.shape[:-2], dtype=np.int64))
    area = out.shape[-2] * out.shape[-1]
    in_place = out.flags.c_contiguous
    target = out.reshape(-1) if in_place else xp.empty(out.size, out.dtype)
    target.fill(0)
    where = (indices.reshape(planes, -1) + (xp.arange(planes) * area)[:, None]).reshape(-1)
    if _windows_overlap(kernel_size, stride, dilation):
        # Several windows may pick one pixel: add in output order, as a sequential scatter-add does.
        _scatter_add(xp, target, where, grad.reshape(-1))
    else:  # each pixel is in one window at most: plain assignment is exact (+ 0 turns -0.0 into 0.0, as 0 + g)
        target[where] = (grad + 0).reshape(-1)
    if not in_place:
        out[...] = target.reshape(out.shape)
    return out


def _scatter_add(xp, target, where, values):
    if xp is np:
        np.add.at(target, where, values)
    else:
        import cupyx

        cupyx.scatter_add(target, where, values)
