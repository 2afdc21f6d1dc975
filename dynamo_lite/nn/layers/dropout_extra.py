"""More dropout layers: Dropout1d, Dropout3d (whole channels), AlphaDropout, FeatureAlphaDropout (for SELU nets)."""
from __future__ import annotations

from .. import functional as F
from .dropout import Dropout


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


__all__ = ["AlphaDropout", "Dropout1d", "Dropout3d", "FeatureAlphaDropout"]
