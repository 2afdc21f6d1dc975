"""Dropout layers: Dropout, Dropout1d/2d/3d (whole channels), AlphaDropout, FeatureAlphaDropout."""
from __future__ import annotations

from .. import functional as F
from ..module import Module


__all__ = ["AlphaDropout", "Dropout1d", "Dropout3d", "FeatureAlphaDropout"]


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


class Dropout1d(Dropout):
    """During training, zero whole channels of ``(N, C, L)`` with probability ``p`` (rest scaled by ``1/(1-p)``).

    Example:
        >>> dl.nn.Dropout1d(0.5).eval()(dl.ones(1, 2, 3)).sum().item()
        6.0
    """

    def forward(self, input):
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout3d(Dropout):
    """During training, zero whole channels of ``(N, C, D, H, W)`` with probability ``p``.

    Example:
        >>> dl.nn.Dropout3d(0.5).eval()(dl.ones(1, 2, 1, 1, 3)).sum().item()
        6.0
    """

    def forward(self, input):
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(Dropout):
    """Alpha dropout while training (keeps SELU activations' mean and variance; see ``F.alpha_dropout``).

    Example:
        >>> dl.nn.AlphaDropout(0.2).eval()(dl.ones(3)).tolist()
        [1.0, 1.0, 1.0]
    """

    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(Dropout):
    """Alpha dropout of whole channels while training (see ``F.feature_alpha_dropout``).

    Example:
        >>> dl.nn.FeatureAlphaDropout(0.2).eval()(dl.ones(1, 3)).tolist()
        [[1.0, 1.0, 1.0]]
    """

    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training)
