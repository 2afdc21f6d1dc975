"""nn.functional vision ops: interpolate/upsample, pixel_shuffle/unshuffle, channel_shuffle, and the
spatial transformer's affine_grid and grid_sample."""
from __future__ import annotations

import math

from ...ops.core import api as ops
from ...tensor.layout import Size
from ...tensor.dtype import int64

__all__ = [
    "channel_shuffle", "affine_grid", "grid_sample", "interpolate", "pixel_shuffle", "pixel_unshuffle",
    "upsample",
]


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


MODES = ("bilinear", "nearest")
PADDING_MODES = ("zeros", "border", "reflection")


def _base_coordinates(steps: int, align_corners: bool, like):
    """The normalized [-1, 1] coordinates of ``steps`` pixel centers (corners with ``align_corners``)."""
    positions = ops.arange(steps, dtype=like.dtype, device=like.device)
    if align_corners:
        return positions * (2.0 / max(steps - 1, 1)) - 1.0 if steps > 1 else positions * 0.0
    return (positions * 2.0 + 1.0) / steps - 1.0


def affine_grid(theta, size, align_corners: bool = False):
    """The sampling grid ``(N, H, W, 2)`` of ``theta @ [x, y, 1]`` over an output of ``size`` ``(N, C, H, W)``.

    Example:
        >>> grid = F.affine_grid(dl.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]]), (1, 1, 2, 2), align_corners=True)
        >>> grid[0, 0].tolist()
        [[-1.0, -1.0], [1.0, -1.0]]
    """
    size = tuple(size)
    if len(size) != 4:
        raise NotImplementedError(f"affine_grid only supports 4D sizes, for 2D affine transforms. Got size {size}.")
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    N, _, H, W = size
    if theta.dim() != 3 or tuple(theta.shape[1:]) != (2, 3) or theta.shape[0] != N:
        raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {Size(size)}. "
                         f"Got {theta.shape}.")
    xs = _base_coordinates(W, align_corners, theta).reshape(1, W).expand(H, W)
    ys = _base_coordinates(H, align_corners, theta).reshape(H, 1).expand(H, W)
    base = ops.stack([xs, ys, ops.ones_like(xs)], -1).reshape(1, H * W, 3)
    return (base @ theta.transpose(1, 2)).reshape(N, H, W, 2)


def _unnormalize(coordinate, size: int, align_corners: bool):
    if align_corners:
        return (coordinate + 1) / 2 * (size - 1)
    return ((coordinate + 1) * size - 1) / 2


def _reflect(coordinate, twice_low: int, twice_high: int):
    """Fold ``coordinate`` back into [twice_low / 2, twice_high / 2] as a mirror would."""
    if twice_low == twice_high:
        return coordinate * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    distance = (coordinate - low).abs()
    extra = ops.fmod(distance, span)
    flips = ops.floor(distance / span)
    return ops.where(ops.fmod(flips, 2) == 0, extra + low, span - extra + low)


def _source_coordinate(coordinate, size: int, padding_mode: str, align_corners: bool):
    coordinate = _unnormalize(coordinate, size, align_corners)
    if padding_mode == "reflection":
        coordinate = _reflect(coordinate, 0, 2 * (size - 1)) if align_corners else _reflect(coordinate, -1, 2 * size - 1)
    if padding_mode in ("border", "reflection"):
        coordinate = coordinate.clamp(0, size - 1)
    return coordinate


def _gather(flat, x, y, width: int, height: int):
    """``input[n, c, y, x]`` for integer-valued coordinate tensors ``(N, P)``; 0 outside the image."""
    inside = (x >= 0) & (x <= width - 1) & (y >= 0) & (y <= height - 1)
    index = (y.clamp(0, height - 1) * width + x.clamp(0, width - 1)).to(int64)
    values = flat.gather(2, index.unsqueeze(1).expand(flat.shape[0], flat.shape[1], index.shape[1]))
    return values * inside.unsqueeze(1).to(flat.dtype)


def grid_sample(input, grid, mode: str = "bilinear", padding_mode: str = "zeros", align_corners=None):
    """Sample ``input`` ``(N, C, H, W)`` at the normalized points of ``grid`` ``(N, H_out, W_out, 2)`` (x, y).

    Args:
        input: the images.
        grid: sampling points, -1 the left/top and 1 the right/bottom edge (pixel centers with
            ``align_corners=True``).
        mode: "bilinear" or "nearest".
        padding_mode: what points outside read: "zeros", the "border" pixels, or a "reflection".
        align_corners: see ``grid`` (False by default).

    Example:
        >>> image = dl.arange(4.0).reshape(1, 1, 2, 2)
        >>> F.grid_sample(image, dl.zeros(1, 1, 1, 2), align_corners=False).item()
        1.5
    """
    if mode not in MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in PADDING_MODES:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if input.dim() != 4:
        raise NotImplementedError("grid_sample supports 4-D input (N, C, H, W) only")
    if grid.dim() != 4 or grid.shape[-1] != 2 or grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid to have size 2 in last dimension and the same batch "
                           f"size as input, but got grid with sizes {list(grid.shape)}")
    align_corners = bool(align_corners)
    N, C, H, W = input.shape
    out_h, out_w = grid.shape[1], grid.shape[2]
    points = grid.reshape(N, out_h * out_w, 2)
    x = _source_coordinate(points[..., 0], W, padding_mode, align_corners)
    y = _source_coordinate(points[..., 1], H, padding_mode, align_corners)
    flat = input.reshape(N, C, H * W)
    if mode == "nearest":
        output = _gather(flat, ops.round(x), ops.round(y), W, H)
    else:
        x0, y0 = ops.floor(x), ops.floor(y)
        wx1, wy1 = (x - x0).unsqueeze(1), (y - y0).unsqueeze(1)
        wx0, wy0 = 1 - wx1, 1 - wy1
        output = (_gather(flat, x0, y0, W, H) * wx0 * wy0 + _gather(flat, x0 + 1, y0, W, H) * wx1 * wy0
                  + _gather(flat, x0, y0 + 1, W, H) * wx0 * wy1 + _gather(flat, x0 + 1, y0 + 1, W, H) * wx1 * wy1)
    return output.reshape(N, C, out_h, out_w)
