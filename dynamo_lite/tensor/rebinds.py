"""The process-wide count of tensors rebound in place (same object, new storage or geometry).

Compiled guards that trust a version tag for a tensor's dtype, shape and strides (a
module's parameters and buffers, an optimizer's state: NOTE: [module version tags] in
nn/versioning.py) also compare this count: rebinding is rare, so one counter costs nothing.
"""
from __future__ import annotations


class RebindCount:
    """How many times any tensor's data was swapped in place, or a Parameter's requires_grad flipped."""

    __slots__ = ("count",)

    def __init__(self):
        self.count = 0


REBINDS = RebindCount()


def tensor_rebound() -> None:
    """Record that a tensor kept its identity but changed storage, dtype, shape or strides."""
    REBINDS.count += 1
