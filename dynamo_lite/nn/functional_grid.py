"""Spatial transformers: ``F.affine_grid`` (sampling grids from 2-D affine matrices) and ``F.grid_sample``.

``grid_sample`` maps each grid point from [-1, 1] to pixel coordinates, applies the padding
mode to the coordinates (clamp for "border", fold back for "reflection"), then gathers the
corner pixels (bilinear: four weighted, nearest: one) from the flattened image. It is written
with registry ops, so gradients reach both the input (through gather) and the grid (through
the bilinear weights).
"""
from __future__ import annotations

import dynamo_lite as dl

__all__ = ["affine_grid", "grid_sample"]

MODES = ("bilinear", "nearest")
PADDING_MODES = ("zeros", "border", "reflection")


def _base_coordinates(steps: int, align_corners: bool, like):
    """The normalized [-1, 1] coordinates of ``steps`` pixel centers (corners with ``align_corners``)."""
    positions = dl.arange(steps, dtype=like.dtype, device=like.device)
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
        raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {dl.Size(size)}. "
                         f"Got {theta.shape}.")
    xs = _base_coordinates(W, align_corners, theta).reshape(1, W).expand(H, W)
    ys = _base_coordinates(H, align_corners, theta).reshape(H, 1).expand(H, W)
    base = dl.stack([xs, ys, dl.ones_like(xs)], -1).reshape(1, H * W, 3)
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
    extra = dl.fmod(distance, span)
    flips = dl.floor(distance / span)
    return dl.where(dl.fmod(flips, 2) == 0, extra + low, span - extra + low)


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
    index = (y.clamp(0, height - 1) * width + x.clamp(0, width - 1)).to(dl.int64)
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
        output = _gather(flat, dl.round(x), dl.round(y), W, H)
    else:
        x0, y0 = dl.floor(x), dl.floor(y)
        wx1, wy1 = (x - x0).unsqueeze(1), (y - y0).unsqueeze(1)
        wx0, wy0 = 1 - wx1, 1 - wy1
        output = (_gather(flat, x0, y0, W, H) * wx0 * wy0 + _gather(flat, x0 + 1, y0, W, H) * wx1 * wy0
                  + _gather(flat, x0, y0 + 1, W, H) * wx0 * wy1 + _gather(flat, x0 + 1, y0 + 1, W, H) * wx1 * wy1)
    return output.reshape(N, C, out_h, out_w)
