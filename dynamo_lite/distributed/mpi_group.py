"""MPIProcessGroup: the ProcessGroup over an MPI communicator (mpi4py), collectives in place.

Every collective is MPI's non-blocking one (``Iallreduce``, ``Ibcast``, ...) on the arrays it
is given, which are the tensors' own buffers (NOTE: [process group interface]); reductions
are in place (``MPI.IN_PLACE``). The communicator is a duplicate of the one given, so the
group's messages never mix with the application's own MPI traffic.
"""
from __future__ import annotations

import numpy as np
from mpi4py import MPI

from .process_group import ProcessGroup
from .reduce_op import ReduceOp
from .work import Work

#: ReduceOp -> MPI operation
MPI_OPS = {
    ReduceOp.SUM: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD, ReduceOp.MIN: MPI.MIN, ReduceOp.MAX: MPI.MAX,
    ReduceOp.BAND: MPI.BAND, ReduceOp.BOR: MPI.BOR, ReduceOp.BXOR: MPI.BXOR,
}
#: the operations on booleans (MPI defines only logical ones for C_BOOL): sum and max are "any", product and min "all"
MPI_BOOL_OPS = {
    ReduceOp.SUM: MPI.LOR, ReduceOp.MAX: MPI.LOR, ReduceOp.BOR: MPI.LOR,
    ReduceOp.PRODUCT: MPI.LAND, ReduceOp.MIN: MPI.LAND, ReduceOp.BAND: MPI.LAND, ReduceOp.BXOR: MPI.LXOR,
}


def _op(array, op: ReduceOp):
    table = MPI_BOOL_OPS if array.dtype == np.bool_ else MPI_OPS
    return table[op]


def _bytes(array):
    """The raw bytes of a contiguous array, as MPI moves them (any dtype, bfloat16 included)."""
    return array.reshape(-1).view(np.uint8)


class MPIProcessGroup(ProcessGroup):
    """A ProcessGroup over an MPI communicator.

    Args:
        comm: the communicator (default ``MPI.COMM_WORLD``); the group uses a duplicate of it.
        ranks: the global rank of each member (default: the communicator's own ranks).
    """

    backend = "mpi"

    def __init__(self, comm=None, ranks=None):
        self.comm = (MPI.COMM_WORLD if comm is None else comm).Dup()
        super().__init__(range(self.comm.Get_size()) if ranks is None else ranks)
        self._rank = self.comm.Get_rank()

    def rank(self) -> int:
        return self._rank

    def allreduce(self, array, op: ReduceOp) -> Work:
        return Work(self.comm.Iallreduce(MPI.IN_PLACE, array, _op(array, op)), keep=array)

    def broadcast(self, array, root: int) -> Work:
        return Work(self.comm.Ibcast(_bytes(array), root), keep=array)

    def allgather(self, output, array) -> Work:
        return Work(self.comm.Iallgather(_bytes(array), _bytes(output)), keep=(output, array))

    def reduce_scatter(self, output, array, op: ReduceOp) -> Work:
        return Work(self.comm.Ireduce_scatter_block(array, output, _op(array, op)), keep=(output, array))

    def reduce(self, array, root: int, op: ReduceOp) -> Work:
        if self._rank == root:
            request = self.comm.Ireduce(MPI.IN_PLACE, array, _op(array, op), root)
        else:
            request = self.comm.Ireduce(array, None, _op(array, op), root)
        return Work(request, keep=array)

    def gather(self, output, array, root: int) -> Work:
        receive = _bytes(output) if self._rank == root else None
        return Work(self.comm.Igather(_bytes(array), receive, root), keep=(output, array))

    def scatter(self, output, array, root: int) -> Work:
        send = _bytes(array) if self._rank == root else None
        return Work(self.comm.Iscatter(send, _bytes(output), root), keep=(output, array))

    def barrier(self) -> Work:
        return Work(self.comm.Ibarrier())

    def broadcast_object(self, obj, root: int):
        return self.comm.bcast(obj, root)

    def allgather_object(self, obj) -> list:
        return self.comm.allgather(obj)

    def gather_object(self, obj, root: int):
        return self.comm.gather(obj, root)

    def scatter_object(self, objects, root: int):
        return self.comm.scatter(objects, root)

    def split(self, ranks) -> ProcessGroup | None:
        ranks = list(ranks)
        me = self.ranks[self._rank]
        color = 0 if me in ranks else MPI.UNDEFINED
        comm = self.comm.Split(color, ranks.index(me) if me in ranks else 0)
        if comm == MPI.COMM_NULL:
            return None
        try:
            return MPIProcessGroup(comm, ranks)
        finally:
            comm.Free()

    def destroy(self) -> None:
        if self.comm != MPI.COMM_NULL:
            self.comm.Free()


def world_rank_and_size() -> tuple:
    """(rank, size) of MPI's world."""
    return MPI.COMM_WORLD.Get_rank(), MPI.COMM_WORLD.Get_size()


def local_rank() -> int:
    """This process's rank among the world's processes on the same machine."""
    node = MPI.COMM_WORLD.Split_type(MPI.COMM_TYPE_SHARED)
    try:
        return node.Get_rank()
    finally:
        node.Free()
