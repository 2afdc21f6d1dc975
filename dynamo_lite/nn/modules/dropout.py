"""Dropout and Dropout2d: zero random elements (or channels) while training."""
from __future__ import annotations

from .. import functional as F
from ..module import Module


class Dropout(Module):
    """During training, zero each element with probability ``p`` and scale the rest by
    ``1/(1-p)``; in eval mode return the input unchanged.

    Args:
        p: probability of an element being zeroed.
        inplace: do the operation in place.

    Example:
        >>> drop = dl.nn.Dropout(0.2).eval()
        >>> drop(dl.ones(3)).tolist()
        [1.0, 1.0, 1.0]
    """

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout2d(Dropout):
    """During training, zero whole channels of (N, C, H, W) with probability ``p`` (rest scaled by ``1/(1-p)``).

    Example:
        >>> dl.nn.Dropout2d(0.5).eval()(dl.ones(1, 2, 2, 2)).sum().item()
        8.0
    """

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training, self.inplace)
