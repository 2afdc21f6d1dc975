"""Flatten: merges a range of dimensions into one."""
from __future__ import annotations

from ..module import Module


class Flatten(Module):
    """Flattens dims ``start_dim..end_dim`` into one (by default all but the batch dim).

    Example:
        >>> dl.nn.Flatten()(dl.zeros(32, 1, 5, 5)).shape
        dl.Size([32, 25])
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"
