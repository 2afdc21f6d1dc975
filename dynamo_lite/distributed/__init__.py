"""dl.distributed: torch.distributed's API over MPI (mpi4py), for data-parallel training.

Start the processes with ``mpiexec -n N python script.py`` or
``python -m dynamo_lite.distributed.run --nproc-per-node N script.py``; each calls
``init_process_group("mpi")``. docs/distributed.md has the design and the launch recipes.
"""
from .collectives import (
    all_gather, all_gather_into_tensor, all_reduce, barrier, broadcast, gather, reduce, reduce_scatter,
    reduce_scatter_tensor, scatter,
)
from .object_collectives import all_gather_object, broadcast_object_list, gather_object, scatter_object_list
from .process_group import ProcessGroup, SingleProcessGroup
from .reduce_op import ReduceOp, reduce_op
from .state import (
    GroupMember, destroy_process_group, get_backend, get_global_rank, get_group_rank, get_node_local_rank,
    get_process_group_ranks, get_rank, get_world_size, init_process_group, is_available, is_gloo_available,
    is_initialized, is_mpi_available, is_nccl_available, new_group,
)
from .work import Future, Work

group = GroupMember  # torch's ``dist.group.WORLD``

__all__ = [
    "Future", "GroupMember", "ProcessGroup", "ReduceOp", "SingleProcessGroup", "Work", "all_gather",
    "all_gather_into_tensor", "all_gather_object", "all_reduce", "barrier", "broadcast", "broadcast_object_list",
    "destroy_process_group", "gather", "gather_object", "get_backend", "get_global_rank", "get_group_rank",
    "get_node_local_rank", "get_process_group_ranks", "get_rank", "get_world_size", "group", "init_process_group",
    "is_available", "is_gloo_available", "is_initialized", "is_mpi_available", "is_nccl_available", "new_group",
    "reduce", "reduce_op", "reduce_scatter", "reduce_scatter_tensor", "scatter", "scatter_object_list",
]
