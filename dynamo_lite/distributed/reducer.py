"""The gradient reducer of DistributedDataParallel: buckets filled by post-accumulate hooks, reduced as they fill.

NOTE: [DDP reduction] Each parameter gets a post-accumulate-grad hook. A DDP forward arms
the reducer (when gradients will be synchronized); then, during backward, the hook of a
parameter copies its ``.grad`` into its bucket's slot (NOTE: [gradient buckets]), and when
a bucket's last member arrived, the buckets that are complete, in bucket order, are handed
to the communication hook (default: divide by the world size, non-blocking all_reduce), so
their reduction runs while the backward computes the remaining gradients. How the
reductions progress is ``progress``: "poll" tests the outstanding requests from every
later hook (an MPI library progresses inside its calls); "thread" runs each reduction to
completion on one background thread. When the last parameter is ready, the reducer waits
for every bucket and copies the averaged values back into the ``.grad`` tensors, so the
gradients are final when ``backward()`` returns. With ``find_unused_parameters`` the
forward's output graph is walked to find parameters that will get no gradient; they count
as ready at once, and a parameter used by no rank keeps its ``.grad`` untouched.

NOTE: [DDP under dl.compile] The reducer's methods run eagerly (trace rules): DDP's
forward is a call into the reducer, the wrapped module's forward (compiled into a graph),
and another call into the reducer. The compiled backward is one autograd node whose edges
reach the parameters' AccumulateGrad nodes, so the same hooks fire after it.
"""
from __future__ import annotations

import concurrent.futures
import time

import numpy as np

from ..autograd.grad_mode import GRAD_MODE
from ..autograd.node import AccumulateGrad
from ..ops.core.api import from_numpy
from ..tensor.tensor import Tensor
from .algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
from .buckets import Bucket, GradBucket, assign_buckets
from .collectives import broadcast
from .reduce_op import ReduceOp

UNFINISHED_REDUCTION = (
    "Expected to have finished reduction in the prior iteration before starting a new one. This error indicates "
    "that your module has parameters that were not used in producing loss. You can enable unused parameter "
    "detection by passing the keyword argument `find_unused_parameters=True` to "
    "`dynamo_lite.nn.parallel.DistributedDataParallel`, and by making sure all `forward` function outputs "
    "participate in calculating loss.\nIf you already have done the above, then the distributed data parallel "
    "module wasn't able to locate the output tensors in the return value of your module's `forward` function. "
    "Please include the loss function and the structure of the return value of `forward` of your module when "
    "reporting this issue (e.g. list, dict, iterable).\nParameter indices which did not receive grad for rank "
    "{rank}: {indices}\nParameters which did not receive grad for rank {rank}: {names}"
)
MARKED_TWICE = (
    "Expected to mark a variable ready only once. This error is caused by one of the following reasons: 1) Use of "
    "a module parameter outside the `forward` function. Please make sure model parameters are not shared across "
    "multiple concurrent forward-backward passes. 2) Reused parameters in multiple reentrant backward passes. "
    "Parameter at index {index} with name {name} has been marked as ready twice. This means that multiple autograd "
    "engine hooks have fired for this particular parameter during this iteration."
)


def output_tensors(value) -> list:
    """The tensors inside a forward's output (tuples, lists, dicts, nested)."""
    found, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Tensor):
            found.append(item)
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return found


def reached_leaves(tensors) -> set:
    """ids of the leaves whose AccumulateGrad the autograd graph of ``tensors`` reaches."""
    seen, leaves = set(), set()
    stack = [t._grad_fn for t in tensors if t._grad_fn is not None]
    leaves.update(id(t) for t in tensors if t._grad_fn is None and t._requires_grad)
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            leaves.add(id(node.variable))
        stack.extend(next_node for next_node, _ in node.next_functions)
    return leaves


class Reducer:
    """Averages the gradients of ``params`` over ``group`` during backward (NOTE: [DDP reduction]).

    Args:
        params: the parameters that require grad, in ``module.parameters()`` order.
        names: their names (for error messages).
        group: the ProcessGroup.
        bucket_limits: the bucket byte limits: the first bucket's, then the others' (the last repeats).
        find_unused_parameters: walk the forward's output graph for parameters that get no gradient.
    """

    def __init__(self, params, names, group, bucket_limits, find_unused_parameters: bool = False):
        self.params, self.names, self.group = list(params), list(names), group
        self.limits = list(bucket_limits)
        self.find_unused_parameters = find_unused_parameters
        self.comm_hook, self.comm_state = allreduce_hook, group
        self.progress = "poll"
        self.armed = False
        self.next_bucket = 0
        self.last_wait_seconds = 0.0  # how long the last backward waited for reductions after its last gradient
        self.ready = [False] * len(self.params)
        self.used = np.zeros(len(self.params), np.int32)
        self.ready_order: list = []
        self.rebuilt = find_unused_parameters  # torch rebuilds once, and only without unused-parameter search
        self._executor = None
        self._build(list(reversed(range(len(self.params)))))
        self._handles = [p.register_post_accumulate_grad_hook(self._hook_for(i)) for i, p in enumerate(self.params)]

    # -- buckets ------------------------------------------------------------------------
    def _build(self, order) -> None:
        self.buckets = [Bucket(i, self.params, indices)
                        for i, indices in enumerate(assign_buckets(self.params, order, self.limits))]
        self.location = {}
        for bucket in self.buckets:
            for position, index in enumerate(bucket.indices):
                self.location[index] = (bucket, position)

    def bucket_indices(self) -> list:
        """The parameter indices of each bucket, in bucket order."""
        return [list(b.indices) for b in self.buckets]

    def _rebuild_in_ready_order(self) -> None:
        order = self.group.broadcast_object(self.ready_order if self.group.rank() == 0 else None, 0)
        self.rebuilt = True
        if sorted(order) == list(range(len(self.params))):
            self._build(order)

    # -- forward ------------------------------------------------------------------------
    def pre_forward(self, ddp) -> None:
        """Before the wrapped module runs: check the last reduction finished, rebuild the buckets once,
        broadcast the buffers from rank 0."""
        if self.armed:
            self._raise_unfinished()
        if not self.rebuilt and len(self.ready_order) == len(self.params):
            self._rebuild_in_ready_order()
        if ddp.broadcast_buffers and ddp.require_forward_param_sync and self.group.size() > 1:
            for buffer in ddp.module.buffers():
                broadcast(buffer, self.group.ranks[0], group=self.group)

    def post_forward(self, ddp, output) -> None:
        """After the wrapped module ran: arm the hooks for the backward of ``output``."""
        if not (GRAD_MODE.enabled and ddp.require_backward_grad_sync):
            return
        self.armed = True
        self.ready = [False] * len(self.params)
        self.used[:] = 0
        self.next_bucket = 0
        for bucket in self.buckets:
            bucket.reset()
        if self.find_unused_parameters:
            reached = reached_leaves(output_tensors(output))
            unused = [i for i, p in enumerate(self.params) if id(p) not in reached]
            for index in unused:
                self._mark_ready(index, None)

    def _raise_unfinished(self) -> None:
        missing = [i for i, ready in enumerate(self.ready) if not ready]
        self._drain()
        self.armed = False
        raise RuntimeError(UNFINISHED_REDUCTION.format(
            rank=self.group.rank(), indices=" ".join(map(str, missing)),
            names=", ".join(self.names[i] for i in missing)))

    # -- backward -----------------------------------------------------------------------
    def _hook_for(self, index: int):
        def hook(param):
            if self.armed:
                self._mark_ready(index, param)
        return hook

    def _mark_ready(self, index: int, param) -> None:
        if self.ready[index]:
            raise RuntimeError(MARKED_TWICE.format(index=index, name=self.names[index]))
        self.ready[index] = True
        bucket, position = self.location[index]
        slot = bucket.slot(position)
        if param is None:
            slot.fill(0)
        else:
            np.copyto(slot, param.grad._array())
            self.used[index] = 1
            if not self.rebuilt:
                self.ready_order.append(index)
        bucket.pending -= 1
        self._launch_ready_buckets()
        if all(self.ready):
            self._finalize()

    def _launch_ready_buckets(self) -> None:
        while self.next_bucket < len(self.buckets) and self.buckets[self.next_bucket].pending == 0:
            bucket = self.buckets[self.next_bucket]
            grad_bucket = GradBucket(bucket, bucket.index == len(self.buckets) - 1)
            if self.progress == "thread":
                bucket.future = self._thread_pool().submit(self._reduce_now, grad_bucket)
            else:
                bucket.future = self.comm_hook(self.comm_state, grad_bucket)
            self.next_bucket += 1
        if self.progress == "poll":
            for bucket in self.buckets[:self.next_bucket]:
                if bucket.future is not None:
                    bucket.future.done()

    def _reduce_now(self, grad_bucket):
        return self.comm_hook(self.comm_state, grad_bucket).wait()

    def _thread_pool(self):
        if self._executor is None:
            self._executor = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="dynamo_lite-ddp")
        return self._executor

    def _result(self, bucket):
        future = bucket.future
        return future.result() if isinstance(future, concurrent.futures.Future) else future.wait()

    def _drain(self) -> None:
        """Wait for every launched reduction (their buffers must outlive them)."""
        for bucket in self.buckets[:self.next_bucket]:
            if bucket.future is not None:
                self._result(bucket)
                bucket.future = None

    def _finalize(self) -> None:
        self.armed = False
        started = time.perf_counter()
        results = [self._result(bucket)._array().reshape(-1) for bucket in self.buckets]
        self.last_wait_seconds = time.perf_counter() - started
        used = self.used
        if self.find_unused_parameters and self.group.size() > 1:
            used = self.used.copy()
            self.group.allreduce(used, ReduceOp.SUM).wait()
        for bucket, result in zip(self.buckets, results):
            for position, index in enumerate(bucket.indices):
                if not used[index]:
                    continue
                p, start = bucket.params[position], bucket.offsets[position]
                values = result[start:start + p.numel()].reshape(p.shape)
                if p.grad is None:
                    p.grad = _tensor_like(values, p)
                else:
                    np.copyto(p.grad._array(), values)
                    p.grad._bump_version()

    def remove_hooks(self) -> None:
        for handle in self._handles:
            handle.remove()


def _tensor_like(values, param):
    return from_numpy(np.array(values, dtype=values.dtype)).to(param._dtype)

