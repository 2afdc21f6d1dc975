"""DistributedDataParallel: one model replica per process, gradients averaged across processes in backward."""
from __future__ import annotations

import contextlib

from ...distributed.buckets import DDP_BUCKET_LIMITS, FIRST_BUCKET_BYTES
from ...distributed.collectives import broadcast
from ...distributed.reducer import Reducer
from ...distributed.state import resolve
from ..module import Module

NO_TRAINABLE_PARAMETERS = ("DistributedDataParallel is not needed when a module doesn't have any parameter that "
                           "requires a gradient.")


class DistributedDataParallel(Module):
    """Data-parallel training: each process runs ``module`` on its part of the batch; ``backward()``
    leaves every process with the gradients averaged over all of them.

    At construction, the parameters' shapes are checked across the processes and the parameters
    and buffers of rank 0 are copied to every process. Before each forward the buffers are
    broadcast from rank 0 (``broadcast_buffers``). In backward, gradients are reduced in buckets
    of ``bucket_cap_mb`` MiB as they become ready (NOTE: [DDP reduction]).

    Args:
        module: the model.
        process_group: the group to average over (default: the default group).
        bucket_cap_mb: the bucket size in MiB (default 25).
        find_unused_parameters: allow parameters that get no gradient in an iteration.
        broadcast_buffers: broadcast the buffers from rank 0 before each forward.
        init_sync: copy rank 0's parameters and buffers at construction.

    Example:
        >>> dist.init_process_group("mpi")
        >>> model = DistributedDataParallel(dl.nn.Linear(4, 2))
        >>> model(x).sum().backward()   # .grad averaged over the ranks
    """

    def __init__(self, module, device_ids=None, output_device=None, dim: int = 0, broadcast_buffers: bool = True,
                 init_sync: bool = True, process_group=None, bucket_cap_mb=None, find_unused_parameters: bool = False,
                 check_reduction: bool = False, gradient_as_bucket_view: bool = False, static_graph: bool = False):
        super().__init__()
        group = resolve(process_group)
        named = [(name, p) for name, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise RuntimeError(NO_TRAINABLE_PARAMETERS)
        self.module = module
        self.process_group = group
        self.device_ids = device_ids
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        _verify_same_parameters(group, named)
        if init_sync:
            _sync_module_states(group, module)
        # torch's limits: a 1 MiB first bucket (reduction starts early) unless the user chose the size
        limits = [FIRST_BUCKET_BYTES, self.bucket_bytes_cap] if bucket_cap_mb is None else [self.bucket_bytes_cap]
        self.reducer = Reducer([p for _, p in named], [name for name, _ in named], group, limits,
                               find_unused_parameters)
        self._comm_hook_registered = False
        for _, p in named:  # dl.compile cuts a training graph where these buckets end (NOTE: [DDP graph split])
            setattr(p, DDP_BUCKET_LIMITS, tuple(limits))

    def forward(self, *inputs, **kwargs):
        self.reducer.pre_forward(self)
        output = self.module(*inputs, **kwargs)
        self.reducer.post_forward(self, output)
        return output

    @contextlib.contextmanager
    def no_sync(self):
        """Inside the block, backward accumulates local gradients without communication; the first
        backward after it averages everything accumulated.

        Example:
            >>> with ddp.no_sync():
            ...     ddp(x1).sum().backward()
            >>> ddp(x2).sum().backward()   # averages the gradients of both micro-batches
        """
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous

    def register_comm_hook(self, state, hook) -> None:
        """Reduce each gradient bucket with ``hook(state, bucket) -> Future`` (of the reduced flat tensor)
        instead of the default averaging all_reduce.

        Example:
            >>> from dynamo_lite.distributed.algorithms.ddp_comm_hooks import allreduce_hook
            >>> ddp.register_comm_hook(None, allreduce_hook)
        """
        if self._comm_hook_registered:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be called once.")
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        self._comm_hook_registered = True
        self.reducer.comm_hook, self.reducer.comm_state = hook, state


def _verify_same_parameters(group, named) -> None:
    """torch's check that every rank holds the same parameters (count, shapes, dtypes)."""
    mine = [(tuple(p.shape), p.dtype.name if hasattr(p.dtype, "name") else str(p.dtype)) for _, p in named]
    everyone = group.allgather_object(mine)
    rank = group.rank()
    for other, theirs in enumerate(everyone):
        if len(theirs) != len(mine):
            raise RuntimeError(f"DDP expects same model across all ranks, but Rank {rank} has {len(mine)} params, "
                               f"while rank {other} has inconsistent {len(theirs)} params.")
        for index, (a, b) in enumerate(zip(mine, theirs)):
            if a != b:
                raise RuntimeError(
                    f"DDP expects same model across all ranks, but Rank {rank} has parameter {named[index][0]} with "
                    f"shape {list(a[0])} and dtype {a[1]}, while rank {other} has shape {list(b[0])} and dtype {b[1]}.")


def _sync_module_states(group, module) -> None:
    """Copy rank 0's parameters and buffers into every rank's module."""
    if group.size() == 1:
        return
    root = group.ranks[0]
    for tensor in [*module.parameters(), *module.buffers()]:
        broadcast(tensor, root, group=group)
