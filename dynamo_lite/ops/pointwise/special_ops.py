"""erfc as a registry op (accurate in the tail where ``1 - erf`` rounds to 0), for dl.special."""
from __future__ import annotations

import numpy as np

from ..core.registry import register_op
from .unary import erfc_nonnegative, float_unary_meta

__all__ = ["erfc"]


def erfc_kernel(xp, x, out):
    x64 = x.astype(np.float64)
    tail = erfc_nonnegative(xp, xp.abs(x64))
    out[...] = xp.where(x64 < 0, 2.0 - tail, tail)
    return out


OPS = {"erfc": register_op("erfc", meta=float_unary_meta, kernel=erfc_kernel)}


def erfc(input):
    """The complementary error function ``1 - erf(input)``, accurate for large inputs.

    Example:
        >>> round(dl.erfc(dl.tensor([0.0])).item(), 6)
        1.0
    """
    return OPS["erfc"](input)


METHODS = {"erfc": erfc}
