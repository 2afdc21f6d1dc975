"""Fold and Unfold: sliding-window patches to columns and back (col2im/im2col)."""
from __future__ import annotations

from .. import functional as F
from ..module import Module

__all__ = ["Fold", "Unfold"]


class Unfold(Module):
    """Sliding blocks as columns (im2col; see ``F.unfold``).

    Example:
        >>> dl.nn.Unfold(2)(dl.randn(1, 2, 4, 4)).shape
        dl.Size([1, 8, 9])
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")


class Fold(Unfold):
    """Sum columns of sliding blocks back into ``(N, C, *output_size)`` (col2im; see ``F.fold``).

    Example:
        >>> dl.nn.Fold((4, 4), 2)(dl.randn(1, 8, 9)).shape
        dl.Size([1, 2, 4, 4])
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__(kernel_size, dilation, padding, stride)
        self.output_size = output_size

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}, {super().extra_repr()}"
