"""nn.functional image and sequence ops: adaptive pooling, conv1d, conv_transpose2d, interpolate,
pixel_shuffle, unfold/fold, embedding_bag, dropout2d."""
from __future__ import annotations

import math

from ..ops import api as ops

__all__ = [
    "adaptive_avg_pool2d", "adaptive_max_pool2d", "conv1d", "conv_transpose2d", "dropout1d", "dropout2d",
    "embedding_bag", "fold", "interpolate", "pixel_shuffle", "pixel_unshuffle", "unfold", "upsample",
]


def adaptive_avg_pool2d(input, output_size):
    """Average-pool to ``output_size`` (int or pair; None keeps that dim) with adaptive windows.

    Example:
        >>> F.adaptive_avg_pool2d(dl.randn(2, 3, 7, 5), (1, 1)).shape
        dl.Size([2, 3, 1, 1])
    """
    return ops.adaptive_avg_pool2d(input, output_size)


def adaptive_max_pool2d(input, output_size, return_indices: bool = False):
    """Max-pool to ``output_size`` with adaptive windows (and the flat argmax per plane).

    Example:
        >>> F.adaptive_max_pool2d(dl.randn(1, 3, 8, 8), 2).shape
        dl.Size([1, 3, 2, 2])
    """
    return ops.adaptive_max_pool2d(input, output_size, return_indices)


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


#: interpolate modes -> the input ranks they accept.
_MODE_RANKS = {"nearest": (3, 4), "linear": (3,), "bilinear": (4,)}
_INTERPOLATING = ("linear", "bilinear", "bicubic", "trilinear")


def _output_size(input, size, scale_factor, spatial: int):
    """(output size, scale factors passed to the kernel) as torch's interpolate decides them."""
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        sizes = [size] * spatial if isinstance(size, int) else list(size)
        if len(sizes) != spatial:
            raise ValueError(
                "Input and output must have the same number of spatial dimensions, but got input with spatial "
                f"dimensions of {list(input.shape[2:])} and output size of {size}. Please provide input tensor in "
                "(N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format."
            )
        return tuple(sizes), None
    factors = [scale_factor] * spatial if isinstance(scale_factor, (int, float)) else list(scale_factor)
    if len(factors) != spatial:
        raise ValueError(
            "Input and scale_factor must have the same number of spatial dimensions, but got input with spatial "
            f"dimensions of {list(input.shape[2:])} and scale_factor of shape {scale_factor}. Please provide input "
            "tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format."
        )
    sizes = tuple(math.floor(float(input.shape[i + 2]) * f) for i, f in enumerate(factors))
    return sizes, tuple(float(f) for f in factors)


def interpolate(input, size=None, scale_factor=None, mode: str = "nearest", align_corners=None,
                recompute_scale_factor=None, antialias: bool = False):
    """Resize the spatial dims of ``(N, C, L)`` / ``(N, C, H, W)``: ``nearest``, ``linear``, ``bilinear``.

    Args:
        size: output spatial size (int or tuple), or
        scale_factor: multiplier(s) of the input size (floored).
        align_corners: for linear modes, map corner pixel centres onto each other.
        recompute_scale_factor: compute the sampling step from the sizes, not ``scale_factor``.

    Example:
        >>> F.interpolate(dl.randn(1, 3, 4, 4), scale_factor=2, mode="bilinear").shape
        dl.Size([1, 3, 8, 8])
    """
    if mode not in _MODE_RANKS and mode not in _INTERPOLATING and mode not in ("area", "nearest-exact"):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the modes: nearest | "
            f"linear | bilinear | bicubic | trilinear | area | nearest-exact (got {mode})"
        )
    if mode not in _INTERPOLATING and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if antialias:
        raise NotImplementedError("interpolate(antialias=True) is not supported")
    if mode not in _MODE_RANKS or input.dim() not in _MODE_RANKS[mode]:
        needed = {"linear": "3D", "bilinear": "4D", "bicubic": "4D", "trilinear": "5D"}.get(mode)
        if needed is not None and input.dim() in (3, 4, 5):
            raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {needed} input")
        raise NotImplementedError(f"interpolate: mode {mode!r} on {input.dim()}D input is not supported")
    sizes, scales = _output_size(input, size, scale_factor, input.dim() - 2)
    if recompute_scale_factor:
        scales = None
    if mode == "nearest":
        return ops.upsample_nearest(input, sizes, scales)
    corners = bool(align_corners)
    if mode == "linear":  # a height-1 bilinear resize
        scales = None if scales is None else (None,) + scales
        return ops.upsample_bilinear2d(input.unsqueeze(2), (1,) + sizes, corners, scales).squeeze(2)
    return ops.upsample_bilinear2d(input, sizes, corners, scales)


def upsample(input, size=None, scale_factor=None, mode: str = "nearest", align_corners=None):
    """Deprecated alias of ``interpolate``."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def pixel_shuffle(input, upscale_factor: int):
    """``(*, C*r*r, H, W)`` -> ``(*, C, H*r, W*r)``: channel blocks become spatial blocks.

    Example:
        >>> F.pixel_shuffle(dl.randn(1, 8, 3, 3), 2).shape
        dl.Size([1, 2, 6, 6])
    """
    _check_image_rank(input, "pixel_shuffle")
    r = upscale_factor
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    channels, height, width = input.shape[-3:]
    if channels % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={channels} is not divisible by {r * r}")
    return _permute_blocks(input, (channels // (r * r), r, r, height, width), (0, 3, 1, 4, 2),
                           (channels // (r * r), height * r, width * r))


def pixel_unshuffle(input, downscale_factor: int):
    """``(*, C, H*r, W*r)`` -> ``(*, C*r*r, H, W)``: the inverse of ``pixel_shuffle``.

    Example:
        >>> F.pixel_unshuffle(dl.randn(1, 2, 6, 6), 2).shape
        dl.Size([1, 8, 3, 3])
    """
    _check_image_rank(input, "pixel_unshuffle")
    r = downscale_factor
    channels, height, width = input.shape[-3:]
    if height % r or width % r:
        raise RuntimeError(f"pixel_unshuffle expects height and width to be divisible by downscale_factor, but got "
                           f"height={height}, width={width} and downscale_factor={r}")
    return _permute_blocks(input, (channels, height // r, r, width // r, r), (0, 2, 4, 1, 3),
                           (channels * r * r, height // r, width // r))


def _check_image_rank(input, name: str) -> None:
    if input.dim() < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")


def _permute_blocks(input, blocks: tuple, order: tuple, merged: tuple):
    """Split the last three dims of ``input`` into the five ``blocks``, reorder those by
    ``order`` and merge them into the three ``merged`` sizes (batch dims stay in front)."""
    batch = tuple(input.shape[:-3])
    lead = len(batch)
    permutation = tuple(range(lead)) + tuple(lead + i for i in order)
    return input.reshape(batch + blocks).permute(permutation).reshape(batch + merged)


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


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type: float = 2, scale_grad_by_freq: bool = False,
                  mode: str = "mean", sparse: bool = False, per_sample_weights=None,
                  include_last_offset: bool = False, padding_idx=None):
    """Sum/mean/max of bags of embedding rows: each row of a 2-D ``input`` is a bag, or ``offsets``
    split a 1-D ``input``.

    Example:
        >>> F.embedding_bag(dl.tensor([[0, 1], [2, 2]]), dl.eye(3), mode="sum").tolist()
        [[1.0, 1.0, 0.0], [0.0, 0.0, 2.0]]
    """
    if max_norm is not None:
        raise NotImplementedError("embedding_bag(max_norm=...) is not supported")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        bags, length = input.shape
        offsets = ops.arange(0, bags * length, length, device=input.device)
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    return ops.embedding_bag(weight, input, offsets, mode, per_sample_weights, include_last_offset, padding_idx)


def _channel_dropout(input, p: float, training: bool, inplace: bool, batched_rank: int, name: str):
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.dim() not in (batched_rank - 1, batched_rank):
        raise RuntimeError(f"{name}: Expected {batched_rank - 1}D or {batched_rank}D input, but received a "
                           f"{input.dim()}D input")
    if not training or p == 0:
        return input
    lead = 2 if input.dim() == batched_rank else 1
    mask_shape = tuple(input.shape[:lead]) + (1,) * (input.dim() - lead)
    keep = ops.rand(mask_shape, dtype=input.dtype, device=input.device) >= p
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    value = input * keep * scale
    return input.copy_(value) if inplace else value


def dropout2d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of ``(N, C, H, W)`` (or ``(C, H, W)``) with probability ``p``.

    Example:
        >>> x = dl.ones(1, 2, 3, 3)
        >>> F.dropout2d(x, 0.5, training=False) is x
        True
    """
    return _channel_dropout(input, p, training, inplace, 4, "dropout2d")


def dropout1d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of ``(N, C, L)`` (or ``(C, L)``) with probability ``p``."""
    return _channel_dropout(input, p, training, inplace, 3, "dropout1d")
