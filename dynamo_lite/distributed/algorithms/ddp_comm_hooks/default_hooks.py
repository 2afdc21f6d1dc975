"""The default DDP communication hook: average a bucket with one all_reduce."""
from __future__ import annotations

from ...collectives import all_reduce
from ...state import get_world_size


def allreduce_hook(process_group, bucket):
    """Divide the bucket by the group's size and all-reduce it (SUM) without blocking; a Future of
    the averaged flat tensor. This is what DistributedDataParallel does without a hook.

    Args:
        process_group: the group to average over (None: the default group).
        bucket: the GradBucket.

    Example:
        >>> ddp.register_comm_hook(None, allreduce_hook)
    """
    tensor = bucket.buffer()
    tensor.div_(get_world_size(process_group))
    work = all_reduce(tensor, group=process_group, async_op=True)
    return work.get_future().then(lambda fut: fut.value()[0])
