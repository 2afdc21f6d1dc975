"""Flatten and Unflatten: merge a range of dims into one, or split one dim into several."""
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


class Unflatten(Module):
    """Split dim ``dim`` into ``unflattened_size`` (the inverse of Flatten).

    Example:
        >>> dl.nn.Unflatten(1, (2, 5))(dl.zeros(3, 10)).shape
        dl.Size([3, 2, 5])
    """

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if not isinstance(dim, int):
            raise TypeError(f"invalid argument: dim must be an int, got {type(dim).__name__}")
        self.dim = dim
        self.unflattened_size = tuple(unflattened_size)

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
