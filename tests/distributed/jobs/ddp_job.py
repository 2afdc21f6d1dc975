"""DistributedDataParallel on every rank against single-process training on the global batch (each rank
computes that reference itself), plus no_sync, find_unused_parameters, construction, compile, sampler."""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from job_checks import Checks

import dynamo_lite as dl
import dynamo_lite.distributed as dist
from dynamo_lite.distributed.algorithms.ddp_comm_hooks import allreduce_hook
from dynamo_lite.nn.parallel import DistributedDataParallel as DDP
from dynamo_lite.utils.data import DataLoader, TensorDataset
from dynamo_lite.utils.data.distributed import DistributedSampler

F = dl.nn.functional
dist.init_process_group("mpi")
RANK, SIZE = dist.get_rank(), dist.get_world_size()
checks = Checks(sys.argv[1], RANK)
LOCAL, STEPS = 4, 10
rng = np.random.default_rng(0)
X = rng.standard_normal((STEPS, LOCAL * SIZE, 8)).astype(np.float32)
Y = rng.integers(0, 4, (STEPS, LOCAL * SIZE))
MINE = slice(LOCAL * RANK, LOCAL * (RANK + 1))


def make(seed: int):
    dl.manual_seed(seed)
    return dl.nn.Sequential(dl.nn.Linear(8, 32), dl.nn.Tanh(), dl.nn.Linear(32, 16), dl.nn.LayerNorm(16),
                            dl.nn.ReLU(), dl.nn.Linear(16, 4))


def params_of(model):
    return [p.detach().numpy().copy() for p in model.parameters()]


def reference(steps=STEPS):
    """Single-process SGD with momentum on the global batch."""
    model = make(0)
    opt = dl.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for s in range(steps):
        opt.zero_grad()
        F.cross_entropy(model(dl.tensor(X[s])), dl.tensor(Y[s])).backward()
        opt.step()
    return params_of(model)


def train_ddp(ddp, forward=None, steps=STEPS):
    forward = ddp if forward is None else forward
    opt = dl.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    for s in range(steps):
        opt.zero_grad()
        F.cross_entropy(forward(dl.tensor(X[s, MINE])), dl.tensor(Y[s, MINE])).backward()
        opt.step()
    return params_of(ddp.module)


def assert_close_params(actual, expected, tol=2e-5):
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        np.testing.assert_allclose(a, e, rtol=0, atol=tol)


def assert_same_on_every_rank(arrays):
    everyone = [None] * SIZE
    dist.all_gather_object(everyone, arrays)
    for other in everyone:
        for a, b in zip(arrays, other):
            assert np.array_equal(a, b), "parameters differ between ranks"


REFERENCE = reference()


def check_training_equals_single_process():
    ddp = DDP(make(0 if RANK == 0 else 10 + RANK))  # other ranks start different: construction copies rank 0's
    trained = train_ddp(ddp)
    assert_close_params(trained, REFERENCE)
    assert_same_on_every_rank(trained)
    assert ddp.reducer.rebuilt  # the buckets were rebuilt once, in the order gradients became ready


def check_small_buckets_and_thread_progress():
    for progress in ("poll", "thread"):
        ddp = DDP(make(0), bucket_cap_mb=0.0002)
        ddp.reducer.progress = progress
        assert len(ddp.reducer.buckets) > 2, ddp.reducer.bucket_indices()
        trained = train_ddp(ddp)
        assert_close_params(trained, REFERENCE)
        assert_same_on_every_rank(trained)


def check_initial_bucket_order():
    ddp = DDP(make(0), bucket_cap_mb=0.0002)
    flat = [i for bucket in ddp.reducer.bucket_indices() for i in bucket]
    assert flat == list(reversed(range(len(list(ddp.parameters()))))), flat


def check_comm_hook():
    seen = []

    def hook(state, bucket):
        seen.append((bucket.index(), len(bucket.parameters())))
        return allreduce_hook(state, bucket)

    ddp = DDP(make(0), bucket_cap_mb=0.0002)
    ddp.register_comm_hook(None, hook)
    trained = train_ddp(ddp)
    assert_close_params(trained, REFERENCE)
    assert seen and seen[0][0] == 0
    try:
        ddp.register_comm_hook(None, hook)
    except RuntimeError as exc:
        assert "only be called once" in str(exc)
    else:
        raise AssertionError("a second register_comm_hook did not raise")


def check_construction_broadcast():
    model = make(20 + RANK)
    model.register_buffer("step_count", dl.tensor([float(RANK + 7)]))
    DDP(model)
    expected = make(20)
    for p, q in zip(model.parameters(), expected.parameters()):
        assert np.array_equal(p.detach().numpy(), q.detach().numpy())
    assert model.step_count.tolist() == [7.0]


def check_buffers_broadcast_before_forward():
    model = make(0)
    model.register_buffer("seen", dl.tensor([0.0]))
    ddp = DDP(model)
    with dl.no_grad():
        model.seen.fill_(float(RANK + 3))
    ddp(dl.tensor(X[0, MINE]))
    assert model.seen.tolist() == [3.0]
    ddp2 = DDP(make(0), broadcast_buffers=False)
    ddp2.module.register_buffer("seen", dl.tensor([float(RANK)]))
    ddp2(dl.tensor(X[0, MINE]))
    assert ddp2.module.seen.tolist() == [float(RANK)]


def check_state_dict_and_module():
    model = make(0)
    ddp = DDP(model)
    assert ddp.module is model
    assert list(ddp.state_dict()) == ["module." + key for key in model.state_dict()]


def check_no_sync_accumulation():
    """Two micro-batches under no_sync and one synchronized equal single-process accumulation."""
    single = make(0)
    for s in range(3):
        F.cross_entropy(single(dl.tensor(X[s])), dl.tensor(Y[s])).backward()
    ddp = DDP(make(0))
    with ddp.no_sync():
        for s in range(2):
            F.cross_entropy(ddp(dl.tensor(X[s, MINE])), dl.tensor(Y[s, MINE])).backward()
    local = [p.grad.numpy().copy() for p in ddp.parameters()]
    everyone = [None] * SIZE
    dist.all_gather_object(everyone, local)
    assert any(not np.array_equal(a, b) for a, b in zip(everyone[0], everyone[-1])), "no_sync synchronized"
    F.cross_entropy(ddp(dl.tensor(X[2, MINE])), dl.tensor(Y[2, MINE])).backward()
    for p, q in zip(ddp.parameters(), single.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=0, atol=2e-5)


class TwoHeads(dl.nn.Module):
    def __init__(self):
        super().__init__()
        dl.manual_seed(0)
        self.body = dl.nn.Linear(8, 8)
        self.head_a = dl.nn.Linear(8, 4)
        self.head_b = dl.nn.Linear(8, 4)

    def forward(self, x, use_b: bool):
        h = self.body(x).relu()
        return self.head_b(h) if use_b else self.head_a(h)


def check_find_unused_parameters():
    ddp = DDP(TwoHeads(), find_unused_parameters=True)
    single = TwoHeads()
    for s in range(2):  # head_b is used by no rank
        ddp.zero_grad()
        single.zero_grad()
        F.cross_entropy(ddp(dl.tensor(X[s, MINE]), False), dl.tensor(Y[s, MINE])).backward()
        F.cross_entropy(single(dl.tensor(X[s]), False), dl.tensor(Y[s])).backward()
        assert ddp.module.head_b.weight.grad is None
        for name in ("body", "head_a"):
            np.testing.assert_allclose(getattr(ddp.module, name).weight.grad.numpy(),
                                       getattr(single, name).weight.grad.numpy(), rtol=0, atol=2e-5)
    # head_b used on rank 0 only: every rank gets its gradient averaged over all ranks (others add zero)
    ddp.zero_grad()
    single.zero_grad()
    F.cross_entropy(ddp(dl.tensor(X[2, MINE]), RANK == 0), dl.tensor(Y[2, MINE])).backward()
    F.cross_entropy(single(dl.tensor(X[2, :LOCAL]), True), dl.tensor(Y[2, :LOCAL])).backward()
    np.testing.assert_allclose(ddp.module.head_b.weight.grad.numpy(), single.head_b.weight.grad.numpy() / SIZE,
                               rtol=0, atol=2e-5)


def check_unused_parameters_error():
    ddp = DDP(TwoHeads())
    F.cross_entropy(ddp(dl.tensor(X[0, MINE]), False), dl.tensor(Y[0, MINE])).backward()
    try:
        ddp(dl.tensor(X[1, MINE]), False)
    except RuntimeError as exc:
        text = str(exc)
        assert text.startswith("Expected to have finished reduction in the prior iteration"), text
        assert "find_unused_parameters=True" in text and "head_b.weight, head_b.bias" in text, text
        assert f"did not receive grad for rank {RANK}: 4 5" in text, text
    else:
        raise AssertionError("an unused parameter without find_unused_parameters did not raise")


def check_mismatched_models_raise():
    model = dl.nn.Linear(8, 4 if RANK == 0 else 5)
    try:
        DDP(model)
    except RuntimeError as exc:
        assert "DDP expects same model across all ranks" in str(exc), str(exc)
    else:
        raise AssertionError("different models on different ranks did not raise")


def check_compiled_equals_eager():
    dl.reset()
    ddp = DDP(make(0))
    compiled = dl.compile(ddp)
    trained = train_ddp(ddp, compiled)
    stats = dl.stats()
    assert stats.graph_count == 1 and not stats.fallbacks, stats
    assert stats.graph_breaks == 2, stats  # the reducer's two eager calls around the compiled module forward
    eager = train_ddp(DDP(make(0)))
    assert_close_params(trained, eager, tol=1e-6)
    assert_close_params(trained, REFERENCE)
    assert_same_on_every_rank(trained)
    dl.reset()


def backward_nodes(output) -> int:
    """How many compiled backward nodes the autograd graph of ``output`` holds."""
    count, stack, seen = 0, [output.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        count += node.name() == "CompiledFunctionBackward"
        stack.extend(next_node for next_node, _ in node.next_functions)
    return count


def check_compiled_split_at_buckets():
    """Small buckets: the compiled graph is cut where buckets end (one backward node per bucket)."""
    dl.reset()
    ddp = DDP(make(0), bucket_cap_mb=0.0002)
    compiled = dl.compile(ddp)
    with ddp.no_sync():  # a forward whose backward is never run
        assert backward_nodes(compiled(dl.tensor(X[0, MINE]))) == len(ddp.reducer.buckets) == 3
    trained = train_ddp(ddp, compiled)
    stats = dl.stats()
    assert stats.graph_count == 1 and stats.graph_breaks == 2 and not stats.fallbacks, stats
    eager = train_ddp(DDP(make(0), bucket_cap_mb=0.0002))
    assert_close_params(trained, eager, tol=1e-6)
    assert_close_params(trained, REFERENCE)
    assert_same_on_every_rank(trained)
    dl.reset()


def check_sampler_with_workers():
    dataset = TensorDataset(dl.arange(23))
    seen = {}
    for drop_last in (False, True):
        sampler = DistributedSampler(dataset, shuffle=True, seed=3, drop_last=drop_last)
        sampler.set_epoch(1)
        loader = DataLoader(dataset, batch_size=2, sampler=sampler, num_workers=2)
        got = [int(i) for (batch,) in loader for i in batch.tolist()]
        assert got == list(sampler), (got, list(sampler))
        everyone = [None] * SIZE
        dist.all_gather_object(everyone, got)
        flat = [i for part in everyone for i in part]
        assert len(flat) == sampler.total_size
        if drop_last:
            assert len(set(flat)) == len(flat)
        else:
            assert set(flat) == set(range(23))
        seen[drop_last] = got
    assert len(seen[False]) == -(-23 // SIZE)


for name, fn in [("training_equals_single_process", check_training_equals_single_process),
                 ("small_buckets_and_thread_progress", check_small_buckets_and_thread_progress),
                 ("initial_bucket_order", check_initial_bucket_order), ("comm_hook", check_comm_hook),
                 ("construction_broadcast", check_construction_broadcast),
                 ("buffers_broadcast_before_forward", check_buffers_broadcast_before_forward),
                 ("state_dict_and_module", check_state_dict_and_module),
                 ("no_sync_accumulation", check_no_sync_accumulation),
                 ("find_unused_parameters", check_find_unused_parameters),
                 ("unused_parameters_error", check_unused_parameters_error),
                 ("mismatched_models_raise", check_mismatched_models_raise),
                 ("compiled_equals_eager", check_compiled_equals_eager),
                 ("compiled_split_at_buckets", check_compiled_split_at_buckets),
                 ("sampler_with_workers", check_sampler_with_workers)]:
    checks.run(name, fn)
checks.save()
dist.destroy_process_group()
