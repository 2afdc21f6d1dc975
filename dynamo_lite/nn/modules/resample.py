"""Resizing and shuffling layers: Upsample, UpsamplingNearest2d/Bilinear2d, PixelShuffle, PixelUnshuffle,
ChannelShuffle."""
from __future__ import annotations

from .. import functional as F
from ..module import Module


__all__ = ["ChannelShuffle", "UpsamplingBilinear2d", "UpsamplingNearest2d"]


class Upsample(Module):
    """Resize the spatial dims by ``size`` or ``scale_factor`` (``nearest``, ``linear``, ``bilinear``).

    Example:
        >>> dl.nn.Upsample(scale_factor=2, mode="nearest")(dl.randn(1, 3, 4, 4)).shape
        dl.Size([1, 3, 8, 8])
    """

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.size = size
        self.scale_factor = float(scale_factor) if isinstance(scale_factor, (int, float)) else scale_factor
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        described = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return f"{described}, mode={self.mode!r}"


class PixelShuffle(Module):
    """``(*, C*r*r, H, W)`` -> ``(*, C, H*r, W*r)``.

    Example:
        >>> dl.nn.PixelShuffle(2)(dl.randn(1, 8, 3, 3)).shape
        dl.Size([1, 2, 6, 6])
    """

    def __init__(self, upscale_factor: int):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """``(*, C, H*r, W*r)`` -> ``(*, C*r*r, H, W)``.

    Example:
        >>> dl.nn.PixelUnshuffle(2)(dl.randn(1, 2, 6, 6)).shape
        dl.Size([1, 8, 3, 3])
    """

    def __init__(self, downscale_factor: int):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """Interleave the channels of ``(N, C, *)`` from ``groups`` groups (see ``F.channel_shuffle``).

    Example:
        >>> dl.nn.ChannelShuffle(2)(dl.arange(4.0).reshape(1, 4, 1)).flatten().tolist()
        [0.0, 2.0, 1.0, 3.0]
    """

    def __init__(self, groups: int):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour upsampling of ``(N, C, H, W)`` by ``size`` or ``scale_factor``.

    Example:
        >>> dl.nn.UpsamplingNearest2d(scale_factor=2)(dl.ones(1, 1, 2, 2)).shape
        dl.Size([1, 1, 4, 4])
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear upsampling of ``(N, C, H, W)`` with ``align_corners=True``.

    Example:
        >>> dl.nn.UpsamplingBilinear2d(size=(3, 4))(dl.ones(1, 1, 2, 2)).shape
        dl.Size([1, 1, 3, 4])
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
