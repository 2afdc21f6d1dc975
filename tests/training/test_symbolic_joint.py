"""Joint graphs with symbolic sizes: a batch of another size keeps training compiled.

NOTE: [symbolic joint graphs] in dynamo_lite/frames/aot/joint.py.
"""
from __future__ import annotations

import copy

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite import nn
from dynamo_lite.frames.translate import autograd_graphs
from tests.helpers import assert_compiled
from tests.training.train_step_harness import (assert_same_state, cross_entropy, make_train_step,
                                               training_state)

BATCH_SIZES = [16, 16, 16, 7]


def _model():
    dl.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 16), nn.GELU(), nn.LayerNorm(16), nn.Linear(16, 4))


def _batches(sizes, dtype=dl.float32):
    dl.manual_seed(1)
    return [(dl.randn(n, 6, dtype=dtype), dl.randint(0, 4, (n,))) for n in sizes]


class JointCompiles:
    """Counts the forward/backward pairs compile_joint builds (and keeps them to inspect)."""

    def __init__(self, monkeypatch):
        self.functions = []
        original = autograd_graphs.compile_joint

        def counting(*args, **kwargs):
            function = original(*args, **kwargs)
            if function is not None:
                self.functions.append(function)
            return function

        monkeypatch.setattr(autograd_graphs, "compile_joint", counting)


@pytest.mark.parametrize("backend", ["eager", "numpy", "native"])
@pytest.mark.parametrize("dynamic", [None, True])
def test_train_loop_over_a_smaller_last_batch_stays_compiled(backend, dynamic, monkeypatch):
    joint = JointCompiles(monkeypatch)
    eager_model = _model()
    compiled_model = copy.deepcopy(eager_model)
    eager_opt = dl.optim.AdamW(eager_model.parameters(), lr=1e-2)
    compiled_opt = dl.optim.AdamW(compiled_model.parameters(), lr=1e-2)
    eager_step = make_train_step(eager_model, eager_opt, cross_entropy)
    step = dl.compile(make_train_step(compiled_model, compiled_opt, cross_entropy), backend=backend,
                      dynamic=dynamic)
    before = dl.stats()
    for epoch in range(2):
        for index, (x, y) in enumerate(_batches(BATCH_SIZES)):
            where = f"epoch {epoch} batch {index} (size {x.shape[0]})"
            expected, actual = eager_step(x, y), step(x, y)
            # the loss comes out of a compiled forward graph, its backward out of the compiled backward graph
            assert type(actual.grad_fn).__name__ == "CompiledFunctionBackward", where
            np.testing.assert_allclose(actual.detach().numpy(), expected.detach().numpy(), rtol=1e-5, atol=1e-6,
                                       err_msg=where)
            assert_same_state(training_state(compiled_model, compiled_opt), training_state(eager_model, eager_opt),
                              where=where)
    assert_compiled(before, dl.stats(), expect_breaks=1 if dynamic else 2)
    assert 1 <= len(joint.functions) <= (1 if dynamic else 2)
    symbolic = joint.functions[-1].forward_module.graph
    placeholder = next(n for n in symbolic.nodes if n.op == "placeholder")
    assert type(placeholder.meta["val"]._sizes[0]) is not int  # the last pair serves every batch size


@pytest.mark.parametrize("dtype,rtol", [(dl.float32, 1e-6), (dl.float64, 1e-12)])
def test_symbolic_backward_gives_eager_gradients(dtype, rtol, monkeypatch):
    joint = JointCompiles(monkeypatch)
    eager_model = _model().to(dtype=dtype)
    compiled = dl.compile(copy.deepcopy(eager_model), dynamic=True, backend="numpy")
    compiled_params = dict(compiled.named_parameters())
    for x, _ in _batches([5, 9, 3], dtype):
        for run, model in ((compiled, compiled), (eager_model, eager_model)):
            model.zero_grad()
            (run(x) ** 2).mean().backward()
        for name, p in eager_model.named_parameters():
            np.testing.assert_allclose(compiled_params[name].grad.numpy(), p.grad.numpy(), rtol=rtol, atol=rtol)
    assert len(joint.functions) == 1


def test_output_without_gradient_gets_zeros_of_this_calls_size():
    """A symbolic output the loss does not read: its zero gradient takes the call's size."""

    def two_outputs(x, w):
        h = x @ w
        return h.relu(), h.sum(dim=1)

    w = dl.randn(6, 3, requires_grad=True)
    compiled = dl.compile(two_outputs, dynamic=True, backend="numpy")
    for n in (4, 7):
        x = dl.randn(n, 6)
        first, _ = compiled(x, w)
        first.sum().backward()
        expected = (x.t() @ (x @ w > 0).to(dl.float32)).numpy()
        np.testing.assert_allclose(w.grad.numpy(), expected, rtol=1e-5, atol=1e-6)
        assert type(first.grad_fn).__name__ == "CompiledFunctionBackward"
        w.grad = None


def test_a_buffer_sliced_to_a_symbolic_length_in_the_backward():
    """``mask[:t, :t]`` with a symbolic ``t``: the slice bounds are size nodes of the joint
    graph (a slice object holding a SymInt once kept the traced length as a constant)."""

    class Masked(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(4, 4)
            self.register_buffer("mask", dl.ones(32, 32).tril())

        def forward(self, x):
            t = x.shape[1]
            scores = self.proj(x) @ x.transpose(1, 2)
            return scores.masked_fill(self.mask[:t, :t] == 0, 0.0).softmax(dim=-1)

    dl.manual_seed(3)
    eager_model = Masked()
    compiled_model = copy.deepcopy(eager_model)
    compiled = dl.compile(compiled_model, backend="numpy")
    for t in (9, 13, 6):
        x = dl.randn(2, t, 4)
        for run, model in ((compiled, compiled_model), (eager_model, eager_model)):
            model.zero_grad()
            (run(x) ** 2).sum().backward()
        for (name, p), q in zip(compiled_model.named_parameters(), eager_model.parameters()):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-6, err_msg=f"{name} t={t}")
    assert dl.stats().frames_compiled == 2 and not dl.stats().fallbacks


@pytest.mark.parametrize("backend", ["eager", "numpy"])
def test_a_size_read_in_the_backward_does_not_save_its_input(backend):
    """The backward of ``w.expand(n, d)`` needs only the size ``n``; eager saves nothing of
    ``x``, so changing ``x`` in place before ``backward()`` is allowed there. The compiled
    backward gets the size as an int the forward returns, not by reading ``x`` again."""

    def expanded(x, w):
        return (w.expand(x.shape[0], 3) * 2.0).sum() + x.sum()

    compiled = dl.compile(expanded, dynamic=True, backend=backend)
    for n in (4, 7):
        w = dl.randn(3, requires_grad=True)
        x = dl.randn(n, 3)
        loss = compiled(x, w)
        assert type(loss.grad_fn).__name__ == "CompiledFunctionBackward"
        x.add_(1.0)  # eager's backward never reads x
        loss.backward()
        np.testing.assert_allclose(w.grad.numpy(), np.full(3, 2.0 * n, dtype=np.float32))
    assert not dl.stats().fallbacks
