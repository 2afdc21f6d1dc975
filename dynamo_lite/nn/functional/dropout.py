"""nn.functional dropouts: dropout, dropout1d/2d/3d, alpha_dropout, feature_alpha_dropout.

NOTE: [alpha dropout] Alpha dropout keeps a SELU network's activations at zero mean and
unit variance: a dropped element becomes SELU's negative saturation value ``-ALPHA``
instead of 0, then ``a * x + b`` restores the moments, with
``a = ((ALPHA**2 * p + 1) * (1 - p)) ** -0.5`` and ``b = a * ALPHA * p`` for kept
elements. The feature variant drops whole channels (dims 0 and 1 index the mask).
"""
from __future__ import annotations

import math

from ...ops.core import api as ops



__all__ = ["dropout", "alpha_dropout", "dropout3d", "feature_alpha_dropout", "dropout1d", "dropout2d"]

#: SELU's negative saturation value, ``SELU_SCALE * SELU_ALPHA``.
ALPHA = 1.7580993408473766


def _check_probability(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _alpha_dropout(input, p: float, training: bool, inplace: bool, feature: bool):
    _check_probability(p)
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        value = input * 0.0
    else:
        if feature and input.dim() < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        mask_shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2) if feature else tuple(input.shape)
        keep = (ops.rand(mask_shape, dtype=input.dtype, device=input.device) >= p).to(input.dtype)
        a = 1.0 / math.sqrt((ALPHA * ALPHA * p + 1) * (1 - p))
        value = input * (keep * a) + (keep - 1) * (ALPHA * a) + ALPHA * a * p
    return input.copy_(value) if inplace else value


def alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False):
    """Dropout for SELU networks (see NOTE: [alpha dropout]); the identity unless ``training``.

    Example:
        >>> x = dl.randn(4)
        >>> F.alpha_dropout(x, 0.2) is x
        True
    """
    return _alpha_dropout(input, p, training, inplace, feature=False)


def feature_alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False):
    """Alpha dropout of whole channels of ``(N, C, ...)``; the identity unless ``training``.

    Example:
        >>> F.feature_alpha_dropout(dl.ones(2, 3, 4), 0.5, training=True).shape
        dl.Size([2, 3, 4])
    """
    return _alpha_dropout(input, p, training, inplace, feature=True)


def dropout3d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of ``(N, C, D, H, W)`` (or ``(C, D, H, W)``) with probability ``p``.

    Example:
        >>> F.dropout3d(dl.ones(1, 2, 2, 2, 2), 0.5, training=False).sum().item()
        16.0
    """
    return _channel_dropout(input, p, training, inplace, 5, "dropout3d")


def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero elements with probability ``p`` (scaling the rest by ``1/(1-p)``) when training.

    Returns ``input`` itself when not training or ``p == 0``. The mask comes from the
    default generator, so ``dl.manual_seed`` reproduces it.

    Example:
        >>> x = dl.ones(4)
        >>> F.dropout(x, 0.5, training=False) is x
        True
    """
    return ops.dropout(input, p, training, inplace)


def _channel_dropout(input, p: float, training: bool, inplace: bool, batched_rank: int, name: str):
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.dim() not in (batched_rank - 1, batched_rank):
        raise RuntimeError(f"{name}: Expected {batched_rank - 1}D or {batched_rank}D input, but received a "
                           f"{input.dim()}D input")
    if not training or p == 0:
        return input
    lead = 2 if input.dim() == batched_rank else 1
    mask_shape = tuple(input.shape[:lead]) + (1,) * (input.dim() - lead)
    keep = ops.rand(mask_shape, dtype=input.dtype, device=input.device) >= p
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    value = input * keep * scale
    return input.copy_(value) if inplace else value


def dropout2d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of ``(N, C, H, W)`` (or ``(C, H, W)``) with probability ``p``.

    Example:
        >>> x = dl.ones(1, 2, 3, 3)
        >>> F.dropout2d(x, 0.5, training=False) is x
        True
    """
    return _channel_dropout(input, p, training, inplace, 4, "dropout2d")


def dropout1d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of ``(N, C, L)`` (or ``(C, L)``) with probability ``p``."""
    return _channel_dropout(input, p, training, inplace, 3, "dropout1d")
