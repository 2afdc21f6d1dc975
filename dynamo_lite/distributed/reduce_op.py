"""ReduceOp: how a collective combines the ranks' values (SUM, PRODUCT, MIN, MAX, AVG, bitwise)."""
from __future__ import annotations

import enum


class ReduceOp(enum.Enum):
    """The reduction of ``all_reduce``, ``reduce`` and ``reduce_scatter_tensor``.

    ``AVG`` is the sum divided by the group's size, for floating-point tensors.

    Example:
        >>> dl.distributed.all_reduce(t, op=dl.distributed.ReduceOp.MAX)
    """

    SUM = "sum"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"
    AVG = "avg"

    def __repr__(self) -> str:
        return f"<ReduceOp.{self.name}>"


#: torch's alias of ReduceOp
reduce_op = ReduceOp
