"""dl.autocast and GradScaler in compiled code (NOTE: [autocast in compiled code]): an autocast
block breaks the graph where it is entered and left, its body is traced with the casts in the
graph, and translations are guarded on the autocast state."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import dynamo_lite as dl
from tests.helpers import assert_compiled, assert_same

F = dl.nn.functional


def block_inside(a, b, target):
    h = a * 2
    with dl.autocast("cpu"):
        logits = h @ b
        loss = F.cross_entropy(logits, target)
    return loss, logits.float(), logits.dtype  # (assert_same compares float32 arrays)


def plain(a, b):
    return F.mse_loss(a @ b, dl.zeros(4, 3)), a @ b, dl.cdist(a @ b, a @ b)


def _inputs():
    dl.manual_seed(0)
    return dl.randn(4, 5), dl.randn(5, 3), dl.tensor([0, 2, 1, 1])


def test_block_inside_compiled_code_equals_eager_with_its_breaks():
    a, b, target = _inputs()
    compiled = assert_same(block_inside, a, b, target, backend="numpy", expect_breaks=3)
    loss, _, logits_dtype = compiled(a, b, target)
    assert loss.dtype == dl.float32 and logits_dtype == dl.bfloat16


def test_fullgraph_refuses_an_autocast_block():
    a, b, target = _inputs()
    with pytest.raises(dl.Unsupported, match="autocast"):
        dl.compile(block_inside, backend="numpy", fullgraph=True)(a, b, target)


def test_translations_are_guarded_on_the_autocast_state():
    a, b, _ = _inputs()
    compiled = dl.compile(plain, backend="numpy")
    before = dl.stats()
    outside = compiled(a, b)
    with dl.autocast("cpu"):
        inside, eager_inside = compiled(a, b), plain(a, b)
    with dl.autocast("cpu", dtype=dl.float16):
        half = compiled(a, b)
    again = compiled(a, b)
    assert [t.dtype for t in outside] == [t.dtype for t in again] == [dl.float32] * 3
    assert [t.dtype for t in inside] == [dl.float32, dl.bfloat16, dl.float32]
    assert [t.dtype for t in half] == [dl.float32, dl.float16, dl.float32]
    for got, want in zip(inside, eager_inside):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())
    after = dl.stats()
    assert_compiled(before, after)
    assert after.recompiles - before.recompiles == 2 and after.graph_count - before.graph_count == 3


def test_port_bf16_autocast_training_with_grad_scaler_compiled_equals_eager():
    """A mixed-precision step as written for torch: forward under autocast, scaled backward, scaler step."""
    dl.manual_seed(0)
    model = dl.nn.Sequential(dl.nn.Linear(6, 16), dl.nn.ReLU(), dl.nn.Linear(16, 3))
    twin = copy.deepcopy(model)

    def make_step(net):
        optimizer = dl.optim.SGD(net.parameters(), lr=0.05)
        scaler = dl.amp.GradScaler("cpu", init_scale=256.0, growth_interval=2)

        def step(x, y):
            optimizer.zero_grad()
            with dl.autocast("cpu", dtype=dl.bfloat16):
                loss = F.cross_entropy(net(x), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            return loss, scaler.get_scale()

        return step

    eager_step, compiled_step = make_step(model), dl.compile(make_step(twin), backend="numpy")
    before = dl.stats()
    for _ in range(4):
        x, y = dl.randn(8, 6), dl.randint(0, 3, (8,))
        (loss, scale), (expected_loss, expected_scale) = compiled_step(x, y), eager_step(x, y)
        assert loss.dtype == expected_loss.dtype == dl.float32 and scale == expected_scale
        np.testing.assert_array_equal(loss.detach().numpy(), expected_loss.detach().numpy())
    for p, q in zip(model.parameters(), twin.parameters()):
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=1e-6, atol=1e-7)
    after = dl.stats()
    assert_compiled(before, after, expect_breaks=after.graph_breaks - before.graph_breaks)
    assert after.graph_count > before.graph_count
