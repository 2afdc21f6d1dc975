"""ProcessGroup: the interface a communication library implements, and the single-process group.

NOTE: [process group interface] A group works on contiguous arrays (NumPy on CPU; CuPy
for a device group) and starts every collective non-blocking, returning a ``Work``
(NOTE: [collective completion]). The tensor-level API in ``collectives.py`` turns tensors
into such arrays (the tensor's own buffer when it is contiguous; a staging copy written
back otherwise), handles ``ReduceOp.AVG`` (a SUM then a division) and waits unless
``async_op=True``. Reductions get arrays of the elements' real dtype; data movement
(broadcast, gathers, scatter) may get any dtype and moves bytes. Ranks given to a group
method are ranks *in that group*; the API maps global ranks first.
"""
from __future__ import annotations

import numpy as np

from .reduce_op import ReduceOp
from .work import Work


class ProcessGroup:
    """A set of processes that run collectives together.

    Attributes:
        ranks: the global rank of each member, in group-rank order.
    """

    backend = "undefined"

    def __init__(self, ranks):
        self.ranks = list(ranks)

    def rank(self) -> int:
        """This process's rank in the group."""
        raise NotImplementedError

    def size(self) -> int:
        """How many processes the group has."""
        return len(self.ranks)

    def name(self) -> str:
        return self.backend

    # every method below starts a collective and returns a Work
    def allreduce(self, array, op: ReduceOp) -> Work:
        raise NotImplementedError

    def broadcast(self, array, root: int) -> Work:
        raise NotImplementedError

    def allgather(self, output, array) -> Work:
        """``output`` (size x array.size elements) receives every rank's ``array`` in rank order."""
        raise NotImplementedError

    def reduce_scatter(self, output, array, op: ReduceOp) -> Work:
        """``output`` receives block ``rank`` of the reduction of every rank's ``array``."""
        raise NotImplementedError

    def reduce(self, array, root: int, op: ReduceOp) -> Work:
        raise NotImplementedError

    def gather(self, output, array, root: int) -> Work:
        """``output`` (on ``root`` only; None elsewhere) receives every rank's ``array``."""
        raise NotImplementedError

    def scatter(self, output, array, root: int) -> Work:
        """Block ``rank`` of ``array`` (given on ``root`` only) lands in every rank's ``output``."""
        raise NotImplementedError

    def barrier(self) -> Work:
        raise NotImplementedError

    # object collectives are blocking and return their value
    def broadcast_object(self, obj, root: int):
        raise NotImplementedError

    def allgather_object(self, obj) -> list:
        raise NotImplementedError

    def gather_object(self, obj, root: int):
        raise NotImplementedError

    def scatter_object(self, objects, root: int):
        raise NotImplementedError

    def split(self, ranks) -> ProcessGroup | None:
        """A group of the given global ranks (every member of this group calls it); None on a
        process that is not one of them."""
        raise NotImplementedError

    def destroy(self) -> None:
        """Release what the group holds."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} rank={self.rank()} size={self.size()}>"


def _copy(output, array) -> None:
    np.copyto(output.reshape(-1), array.reshape(-1))


class SingleProcessGroup(ProcessGroup):
    """The group of one process: every collective is a local copy (``world_size == 1`` without MPI).

    Example:
        >>> dl.distributed.init_process_group(backend="mpi", world_size=1, rank=0)  # no mpi4py installed
    """

    backend = "single"

    def __init__(self, global_rank: int = 0):
        super().__init__([global_rank])

    def rank(self) -> int:
        return 0

    def allreduce(self, array, op: ReduceOp) -> Work:
        return Work()

    def broadcast(self, array, root: int) -> Work:
        return Work()

    def allgather(self, output, array) -> Work:
        _copy(output, array)
        return Work()

    def reduce_scatter(self, output, array, op: ReduceOp) -> Work:
        _copy(output, array)
        return Work()

    def reduce(self, array, root: int, op: ReduceOp) -> Work:
        return Work()

    def gather(self, output, array, root: int) -> Work:
        _copy(output, array)
        return Work()

    def scatter(self, output, array, root: int) -> Work:
        _copy(output, array)
        return Work()

    def barrier(self) -> Work:
        return Work()

    def broadcast_object(self, obj, root: int):
        return obj

    def allgather_object(self, obj) -> list:
        return [obj]

    def gather_object(self, obj, root: int):
        return [obj]

    def scatter_object(self, objects, root: int):
        return objects[0]

    def split(self, ranks) -> ProcessGroup | None:
        return SingleProcessGroup(self.ranks[0]) if self.ranks[0] in list(ranks) else None
