"""bfloat16 storage: the upper 16 bits of a float32, widened to float32 to compute, rounded back to store.

NOTE: [bfloat16] NumPy has no bfloat16, so a bfloat16 tensor's array holds the raw bits
as ``uint16``. Ops never see those bits: eager dispatch hands kernels float32 arrays
(``widen``) and rounds their float32 results to the nearest bfloat16, ties to even
(``narrow``), as torch computes bfloat16 on CPU. Compiled backends that call kernels on
arrays directly do not take bfloat16 graphs (they run eagerly, see ``backends/numpy``).
"""
from __future__ import annotations

import numpy as np

_CANONICAL_NAN = 0x7FC0


def widen(xp, bits):
    """float32 values of an array of bfloat16 bits."""
    wide = bits.astype(np.uint32)  # an array even for 0-dim bits (a shift would give a scalar)
    wide <<= 16
    return wide.view(np.float32)


def narrow(xp, values):
    """The bfloat16 bits nearest to float32 (or wider) ``values``: round to nearest, ties to even."""
    bits = xp.ascontiguousarray(xp.asarray(values, dtype=np.float32)).view(np.uint32)
    rounded = (bits + (((bits >> 16) & 1) + 0x7FFF)) >> 16
    return xp.where(bits & 0x7FFFFFFF > 0x7F800000, _CANONICAL_NAN, rounded).astype(np.uint16)
