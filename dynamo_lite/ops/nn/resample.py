"""Resampling and patch ops: nearest/bilinear upsampling, im2col (unfold) and col2im (fold).

Source coordinates are computed as torch computes them, in the input's float precision
(float32 for float32 images), so rounding at window edges matches.
"""
from __future__ import annotations

import numpy as np

from ..core import meta_rules as mr
from .conv import pair
from ..core.registry import register_op

__all__ = ["upsample_nearest", "upsample_bilinear2d", "im2col", "col2im"]


# -- upsampling ---------------------------------------------------------------------------
def _upsample_meta(name, spatial):
    def meta(input, output_size, *args):
        dims = len(output_size)
        if dims not in spatial or len(input._sizes) != dims + 2:
            raise RuntimeError(
                f"{name}: Expected a {dims + 2}D input with non-zero batch and channel dims, but got input of size "
                f"{list(input._sizes)}"
            )
        in_spatial = input._sizes[2:]
        if any(s <= 0 for s in in_spatial) or any(s <= 0 for s in output_size):
            raise RuntimeError(
                f"Input and output sizes should be greater than 0, but got input ({', '.join(map(str, in_spatial))}) "
                f"output ({', '.join(map(str, output_size))})"
            )
        if not input._dtype.is_floating_point and name != "upsample_nearest":
            raise NotImplementedError(f"\"{name}_out_frame\" not implemented for '{mr.TYPE_NAMES[input._dtype]}'")
        return mr.make_meta(input._sizes[:2] + tuple(output_size), input._dtype, None, input._device)

    return meta


def _coordinate_dtype(dtype):
    return np.float64 if dtype == np.float64 else np.float32


def _scale(in_size, out_size, scale, align_corners=False):
    """Source step per output pixel: ``in/out``, or ``1/scale_factor`` when the caller gave one."""
    if align_corners:
        return (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else in_size / out_size


def nearest_indices(xp, in_size, out_size, scale, ftype=np.float32):
    step = ftype(_scale(in_size, out_size, scale))
    positions = xp.arange(out_size, dtype=ftype) * step
    return xp.minimum(xp.floor(positions).astype(np.int64), in_size - 1)


def upsample_nearest_kernel(xp, x, output_size, scales=None, *, out):
    scales = scales or (None,) * len(output_size)
    result = x
    for axis, (size, scale) in enumerate(zip(output_size, scales), start=2):
        result = xp.take(result, nearest_indices(xp, x.shape[axis], size, scale), axis=axis)
    out[...] = result
    return out


def _linear_weights(xp, in_size, out_size, scale, align_corners, ftype):
    """(low index, high index, weight of high) of every output pixel along one dim."""
    step = ftype(_scale(in_size, out_size, scale, align_corners))
    dst = xp.arange(out_size, dtype=ftype)
    src = dst * step if align_corners else xp.maximum(step * (dst + ftype(0.5)) - ftype(0.5), ftype(0))
    low = src.astype(np.int64)
    high = low + (low < in_size - 1)
    return low, high, (src - low).astype(ftype)


def upsample_bilinear2d_kernel(xp, x, output_size, align_corners, scales=None, *, out):
    ftype = _coordinate_dtype(x.dtype)
    scales = scales or (None, None)
    h0, h1, dh = _linear_weights(xp, x.shape[2], output_size[0], scales[0], align_corners, ftype)
    w0, w1, dw = _linear_weights(xp, x.shape[3], output_size[1], scales[1], align_corners, ftype)
    work = x.astype(ftype, copy=False)
    dh, dw = dh[:, None], dw[None, :]
    top = work[:, :, h0][..., w0] * (1 - dw) + work[:, :, h0][..., w1] * dw
    bottom = work[:, :, h1][..., w0] * (1 - dw) + work[:, :, h1][..., w1] * dw
    out[...] = top * (1 - dh) + bottom * dh
    return out


# -- im2col / col2im ----------------------------------------------------------------------
def _check_patch_args(kernel, dilation, padding, stride):
    for name, values, low in (("kernel size", kernel, 1), ("dilation", dilation, 1), ("stride", stride, 1),
                              ("padding", padding, 0)):
        if min(values) < low:
            raise RuntimeError(f"{name} should be {'greater than zero' if low else 'non-negative'}, but got "
                               f"{values[0]}, {values[1]}")


def _blocks(size, kernel, dilation, padding, stride) -> int:
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def _patch_windows(kernel_size, dilation, stride, blocks):
    """Yield ``(i, j, index)``: ``padded[index]`` is kernel element (i, j) of every block."""
    for i in range(kernel_size[0]):
        for j in range(kernel_size[1]):
            top, left = i * dilation[0], j * dilation[1]
            yield i, j, (slice(None), slice(None), slice(top, top + (blocks[0] - 1) * stride[0] + 1, stride[0]),
                         slice(left, left + (blocks[1] - 1) * stride[1] + 1, stride[1]))


def im2col_meta(input, kernel_size, dilation, padding, stride):
    sizes = input._sizes
    if len(sizes) not in (3, 4) or any(s == 0 for s in sizes[-3:]):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor for input with possibly 0 batch size and "
                           f"non-zero dimensions for input, but got: {list(sizes)}")
    _check_patch_args(kernel_size, dilation, padding, stride)
    c, h, w = sizes[-3:]
    bh, bw = (_blocks(s, k, d, p, st) for s, k, d, p, st in zip((h, w), kernel_size, dilation, padding, stride))
    if bh < 1 or bw < 1:
        raise RuntimeError(f"Given input with spatial size ({h}, {w}), kernel_size=({kernel_size[0]}, "
                           f"{kernel_size[1]}), dilation=({dilation[0]}, {dilation[1]}), padding=({padding[0]}, "
                           f"{padding[1]}), calculated shape of the array of sliding blocks as ({bh}, {bw}), but its "
                           f"components must be at least one.")
    shape = sizes[:-3] + (c * kernel_size[0] * kernel_size[1], bh * bw)
    return mr.make_meta(shape, input._dtype, None, input._device)


def im2col_kernel(xp, x, kernel_size, dilation, padding, stride, *, out):
    target = out[None] if x.ndim == 3 else out
    x = x[None] if x.ndim == 3 else x
    n, c, h, w = x.shape
    (bh, bw), padded, inner = _padded_grid(xp, x, (n, c, h, w), kernel_size, dilation, padding, stride)
    padded[inner] = x
    cols = target.reshape(n, c, *kernel_size, bh, bw)
    for i, j, window in _patch_windows(kernel_size, dilation, stride, (bh, bw)):
        cols[:, :, i, j] = padded[window]
    return out


def _padded_grid(xp, x, image_shape: tuple, kernel_size, dilation, padding, stride):
    """The blocks along H and W of an ``(N, C, H, W)`` image, a zero array of the padded
    image (``x``'s dtype) and the index of the image inside it."""
    n, c, h, w = image_shape
    blocks = tuple(_blocks(size, k, d, p, s) for size, k, d, p, s in zip((h, w), kernel_size, dilation, padding, stride))
    padded = xp.zeros((n, c, h + 2 * padding[0], w + 2 * padding[1]), dtype=x.dtype)
    inner = (slice(None), slice(None), slice(padding[0], padding[0] + h), slice(padding[1], padding[1] + w))
    return blocks, padded, inner


def col2im_meta(input, output_size, kernel_size, dilation, padding, stride):
    sizes = input._sizes
    if len(sizes) not in (2, 3) or any(s == 0 for s in sizes[-2:]):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
                           f"non-zero dimensions for input, but got: {list(sizes)}")
    _check_patch_args(kernel_size, dilation, padding, stride)
    patch = kernel_size[0] * kernel_size[1]
    if sizes[-2] % patch:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
                           f"but got input.size(1)={sizes[-2]} and kernel_size=({kernel_size[0]}, {kernel_size[1]})")
    bh, bw = (_blocks(s, k, d, p, st) for s, k, d, p, st in zip(output_size, kernel_size, dilation, padding, stride))
    if bh * bw != sizes[-1]:
        raise RuntimeError(f"Given output_size=({output_size[0]}, {output_size[1]}), kernel_size=({kernel_size[0]}, "
                           f"{kernel_size[1]}), dilation=({dilation[0]}, {dilation[1]}), padding=({padding[0]}, "
                           f"{padding[1]}), stride=({stride[0]}, {stride[1]}), expected size of input's dimension 2 "
                           f"to match the calculated number of sliding blocks {bh} * {bw} = {bh * bw}, but got "
                           f"input.size(2)={sizes[-1]}.")
    shape = sizes[:-2] + (sizes[-2] // patch,) + tuple(output_size)
    return mr.make_meta(shape, input._dtype, None, input._device)


def col2im_kernel(xp, x, output_size, kernel_size, dilation, padding, stride, *, out):
    target = out[None] if x.ndim == 2 else out
    x = x[None] if x.ndim == 2 else x
    n, c, h, w = target.shape
    (bh, bw), padded, inner = _padded_grid(xp, x, (n, c, h, w), kernel_size, dilation, padding, stride)
    cols = x.reshape(n, c, *kernel_size, bh, bw)
    for i, j, window in _patch_windows(kernel_size, dilation, stride, (bh, bw)):
        padded[window] += cols[:, :, i, j]
    target[...] = padded[inner]
    return out


RESAMPLE_OPS = {
    "upsample_nearest": (_upsample_meta("upsample_nearest", (1, 2)), upsample_nearest_kernel),
    "upsample_bilinear2d": (_upsample_meta("upsample_bilinear2d", (2,)), upsample_bilinear2d_kernel),
    "im2col": (im2col_meta, im2col_kernel),
    "col2im": (col2im_meta, col2im_kernel),
}
OPS = {name: register_op(name, meta=meta, kernel=kernel, tags=("window",))
       for name, (meta, kernel) in RESAMPLE_OPS.items()}


# -- public functions ---------------------------------------------------------------------
def upsample_nearest(input, output_size, scales=None):
    """Nearest-neighbour resize of (N, C, L) or (N, C, H, W) to ``output_size`` (torch's index rule).

    Example:
        >>> dl.upsample_nearest(dl.arange(2.0).view(1, 1, 2), (4,)).tolist()
        [[[0.0, 0.0, 1.0, 1.0]]]
    """
    return OPS["upsample_nearest"](input, tuple(output_size), tuple(scales) if scales else None)


def upsample_bilinear2d(input, output_size, align_corners, scales=None):
    """Bilinear resize of (N, C, H, W) to ``output_size``.

    Example:
        >>> dl.upsample_bilinear2d(dl.ones(1, 1, 2, 2), (3, 3), True).shape
        dl.Size([1, 1, 3, 3])
    """
    return OPS["upsample_bilinear2d"](input, tuple(output_size), bool(align_corners),
                                      tuple(scales) if scales else None)


def im2col(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding (KH, KW) blocks of (N, C, H, W) as columns: (N, C*KH*KW, blocks).

    Example:
        >>> dl.im2col(dl.ones(1, 2, 4, 4), 2).shape
        dl.Size([1, 8, 9])
    """
    return OPS["im2col"](input, pair(kernel_size, "kernel_size"), pair(dilation, "dilation"),
                         pair(padding, "padding"), pair(stride, "stride"))


def col2im(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sum columns of sliding blocks back into an (N, C, H, W) image (the adjoint of ``im2col``).

    Example:
        >>> dl.col2im(dl.ones(1, 8, 9), (4, 4), 2).shape
        dl.Size([1, 2, 4, 4])
    """
    return OPS["col2im"](input, pair(output_size, "output_size"), pair(kernel_size, "kernel_size"),
                         pair(dilation, "dilation"), pair(padding, "padding"), pair(stride, "stride"))


METHODS: dict = {}
