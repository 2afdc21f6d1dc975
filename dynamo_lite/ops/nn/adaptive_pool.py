"""Adaptive pooling: average or max over the windows that split (H, W) into a requested output size.

Output cell ``i`` of a dim of input length ``L`` and output length ``O`` covers the input
range ``[floor(i * L / O), ceil((i + 1) * L / O))``, as torch computes it; windows may
overlap and differ in length by one.
"""
from __future__ import annotations

import numpy as np

from ...tensor.dtype import bool_, int64
from ..core import meta_rules as mr
from ..core.registry import register_op

__all__ = ["adaptive_avg_pool2d", "adaptive_max_pool2d"]


def window_bounds(size: int, out_size: int) -> list:
    """``[(start, end)]`` of every adaptive window along one dim."""
    return [((i * size) // out_size, -((-(i + 1) * size) // out_size)) for i in range(out_size)]


def _adaptive_meta(name):
    def meta(input, output_size):
        sizes = input._sizes
        if len(sizes) not in (3, 4):
            raise RuntimeError(f"{name}(): Expected 3D or 4D tensor, but got {list(sizes)}")
        for i in range(1, len(sizes)):
            if sizes[i] == 0:
                raise RuntimeError(
                    f"{name}(): Expected input to have non-zero size for non-batch dimensions, but input has "
                    f"sizes {list(sizes)} with dimension {i} being empty"
                )
        if len(output_size) != 2:
            raise RuntimeError(f"{name}: output_size must be 2")
        if any(s < 0 for s in output_size):
            raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 but received "
                               f"{{{', '.join(map(str, output_size))}}}")
        if input._dtype is bool_ or (name == "adaptive_avg_pool2d" and not input._dtype.is_floating_point):
            raise NotImplementedError(f"\"{name}\" not implemented for '{mr.TYPE_NAMES[input._dtype]}'")
        return mr.make_meta(sizes[:-2] + tuple(output_size), input._dtype, None, input._device)

    return meta


def adaptive_max_pool2d_meta(input, output_size):
    values = _adaptive_meta("adaptive_max_pool2d")(input, output_size)
    return values, mr.make_meta(values._sizes, int64, None, values._device)


def _cells(x, out_hw):
    """Yield ``(i, j, window)`` for every output cell: the input block it pools."""
    rows = window_bounds(x.shape[-2], out_hw[0])
    cols = window_bounds(x.shape[-1], out_hw[1])
    for i, (top, bottom) in enumerate(rows):
        for j, (left, right) in enumerate(cols):
            yield i, j, x[..., top:bottom, left:right]


def adaptive_avg_pool2d_kernel(xp, x, output_size, *, out):
    compute = np.float32 if out.dtype == np.float16 else out.dtype
    for i, j, window in _cells(x, output_size):
        out[..., i, j] = window.mean(axis=(-2, -1), dtype=compute)
    return out


def adaptive_max_pool2d_kernel(xp, x, output_size, *, out):
    values, indices = out
    width = x.shape[-1]
    cols = window_bounds(width, output_size[1])
    rows = window_bounds(x.shape[-2], output_size[0])
    for i, j, window in _cells(x, output_size):
        flat = window.reshape(window.shape[:-2] + (-1,))
        # argmax picks the first maximum; a NaN wins, as torch's max pooling does.
        nan = xp.isnan(flat) if flat.dtype.kind == "f" else None
        best = xp.argmax(flat, axis=-1) if nan is None else xp.where(nan.any(-1), xp.argmax(nan, -1), xp.argmax(flat, -1))
        values[..., i, j] = xp.take_along_axis(flat, best[..., None], -1)[..., 0]
        block_width = cols[j][1] - cols[j][0]
        indices[..., i, j] = (rows[i][0] + best // block_width) * width + cols[j][0] + best % block_width
    return out


OPS = {
    "adaptive_avg_pool2d": register_op("adaptive_avg_pool2d", meta=_adaptive_meta("adaptive_avg_pool2d"),
                                       kernel=adaptive_avg_pool2d_kernel, tags=("window",)),
    "adaptive_max_pool2d": register_op("adaptive_max_pool2d", meta=adaptive_max_pool2d_meta,
                                       kernel=adaptive_max_pool2d_kernel, tags=("window",)),
}


def _output_size(input, output_size) -> tuple:
    """An int or pair, where ``None`` keeps the input's size along that dim."""
    pair = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    if len(pair) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    return tuple(input.shape[-2 + i] if s is None else s for i, s in enumerate(pair))


def adaptive_avg_pool2d(input, output_size):
    """Average-pool (N, C, H, W) or (C, H, W) to ``output_size`` = (OH, OW) with adaptive windows.

    Example:
        >>> dl.adaptive_avg_pool2d(dl.ones(1, 2, 5, 7), 1).shape
        dl.Size([1, 2, 1, 1])
    """
    return OPS["adaptive_avg_pool2d"](input, _output_size(input, output_size))


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max-pool to ``output_size`` with adaptive windows; optionally also the flat argmax per plane.

    Example:
        >>> dl.adaptive_max_pool2d(dl.arange(16.0).view(1, 1, 4, 4), 2).flatten().tolist()
        [5.0, 7.0, 13.0, 15.0]
    """
    values, indices = OPS["adaptive_max_pool2d"](input, _output_size(input, output_size))
    return (values, indices) if return_indices else values


METHODS: dict = {}
