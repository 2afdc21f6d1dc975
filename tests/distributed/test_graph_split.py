"""dl.compile of a DDP model cuts the training graph where gradient buckets end (one process, no MPI)."""
from __future__ import annotations

import numpy as np

import dynamo_lite as dl
from dynamo_lite.frames.aot.bucket_split import _merge_non_tensor_cuts
from dynamo_lite.nn.parallel import DistributedDataParallel as DDP


def make():
    dl.manual_seed(0)
    return dl.nn.Sequential(dl.nn.Linear(8, 32), dl.nn.Tanh(), dl.nn.Linear(32, 16), dl.nn.LayerNorm(16),
                            dl.nn.ReLU(), dl.nn.Linear(16, 4))


def compiled_backward_nodes(output) -> int:
    count, stack, seen = 0, [output.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        count += node.name() == "CompiledFunctionBackward"
        stack.extend(next_node for next_node, _ in node.next_functions)
    return count


def test_one_backward_node_per_bucket_and_same_gradients(single_process):
    ddp = DDP(make(), bucket_cap_mb=0.0002)
    eager = DDP(make(), bucket_cap_mb=0.0002)
    compiled = dl.compile(ddp)
    x = dl.randn(5, 8)
    out = compiled(x)
    assert compiled_backward_nodes(out) == len(ddp.reducer.buckets) == 3
    out.square().sum().backward()
    eager(x).square().sum().backward()
    stats = dl.stats()
    assert stats.graph_count == 1 and not stats.fallbacks
    for p, q in zip(ddp.parameters(), eager.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6, atol=1e-6)


def test_default_buckets_and_plain_modules_are_not_split(single_process):
    out = dl.compile(DDP(make()))(dl.randn(5, 8))  # 1 MiB first bucket: everything in one
    assert compiled_backward_nodes(out) == 1
    dl.reset()
    assert compiled_backward_nodes(dl.compile(make())(dl.randn(5, 8))) == 1


def test_no_cut_where_a_tuple_would_cross():
    """A cut between ``split`` (a tuple) and its ``getitem`` users is merged away; tensor cuts stay."""
    tensor = dl.TensorMeta((2,), dl.float32)

    class FakeNode:
        def __init__(self, name, inputs, value):
            self.name, self.all_input_nodes, self.meta, self.users = name, list(inputs), {"val": value}, {}
            for source in inputs:
                source.users[self] = None

    linear = FakeNode("linear", [], tensor)
    split = FakeNode("split", [linear], (tensor, tensor))
    left = FakeNode("getitem", [split], tensor)
    linear_b = FakeNode("linear_b", [left], tensor)
    assert _merge_non_tensor_cuts([[linear, split], [left, linear_b]]) == [[linear, split, left, linear_b]]
    assert _merge_non_tensor_cuts([[linear, split, left], [linear_b]]) == [[linear, split, left], [linear_b]]


def test_split_model_trains_as_eager(single_process):
    class Halves(dl.nn.Module):
        def __init__(self):
            super().__init__()
            dl.manual_seed(1)
            self.a = dl.nn.Linear(8, 8)
            self.b = dl.nn.Linear(4, 4)

        def forward(self, x):
            left, right = self.a(x).split(4, dim=1)
            return self.b(left) + right

    ddp, eager = DDP(Halves(), bucket_cap_mb=0.00001), DDP(Halves(), bucket_cap_mb=0.00001)
    x = dl.randn(3, 8)
    out = dl.compile(ddp)(x)
    assert compiled_backward_nodes(out) == 2
    out.sum().backward()
    eager(x).sum().backward()
    assert not dl.stats().fallbacks
    for p, q in zip(ddp.parameters(), eager.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6, atol=1e-6)
