"""dl.compile while autograd records: gradients equal eager's, compiled graphs run under no_grad.

NOTE: [compiled graphs and autograd] in dynamo_lite/frames/translate/autograd_graphs.py.
"""
from __future__ import annotations

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite import nn
from dynamo_lite.frames.translate import autograd_graphs

BACKENDS = ["eager", "numpy"]


def make_model():
    dl.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.LayerNorm(8), nn.Linear(8, 3))


@pytest.fixture(autouse=True)
def fresh():
    dl.reset()
    yield
    dl.reset()


def _grads(model):
    return [p.grad.numpy().copy() for p in model.parameters()]


@pytest.mark.parametrize("backend", BACKENDS)
def test_compiled_forward_in_grad_mode_gives_eager_gradients(backend):
    eager, compiled_model = make_model(), make_model()
    compiled = dl.compile(compiled_model, backend=backend)
    x = dl.randn(5, 4)
    target = dl.tensor([0, 2, 1, 1, 0])
    for _ in range(2):
        for model, fn in ((eager, eager), (compiled_model, compiled)):
            model.zero_grad()
            out = fn(x)
            assert out.requires_grad and out.grad_fn is not None
            nn.functional.cross_entropy(out, target).backward()
        for a, b in zip(_grads(eager), _grads(compiled_model)):
            np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-7)
    assert dl.stats().frames_compiled == 1 and dl.stats().graph_count == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_grad_runs_the_compiled_graph_and_grad_mode_is_guarded(backend, monkeypatch):
    model = make_model()
    compiled = dl.compile(model, backend=backend)
    x = dl.randn(5, 4)
    calls = []
    original = autograd_graphs.GradModeInterpreter.run
    monkeypatch.setattr(autograd_graphs.GradModeInterpreter, "run", lambda self, *a: calls.append(1) or original(self, *a))
    with dl.no_grad():
        out = compiled(x)
    assert not out.requires_grad and calls == []
    np.testing.assert_allclose(out.numpy(), model(x).detach().numpy(), rtol=1e-5, atol=1e-6)
    out = compiled(x)  # grad mode on: another translation, compiled as a forward and a backward graph
    assert out.requires_grad and out.grad_fn.name() == "CompiledFunctionBackward" and calls == []
    assert dl.stats().frames_compiled == 2


def test_grad_mode_blocks_inside_compiled_code_keep_their_mode():
    w = dl.ones(3, requires_grad=True)

    def f(x):
        y = x * w
        with dl.no_grad():
            z = y * 2
        return y + z

    out = dl.compile(f, backend="numpy")(dl.ones(3))
    expected = f(dl.ones(3))
    assert out.tolist() == expected.tolist()
    out.sum().backward()
    assert w.grad.tolist() == [1.0, 1.0, 1.0]  # nothing flows through the no_grad block
    assert dl.stats().graph_count == 1


def test_autograd_calls_and_state_inside_compiled_code_run_eagerly():
    def f(x):
        y = (x * x).sum()
        (g,) = dl.autograd.grad(y, x)
        return g * 2, x.requires_grad

    x = dl.ones(3, requires_grad=True)
    g, flag = dl.compile(f, backend="numpy")(x)
    assert g.tolist() == [4.0, 4.0, 4.0] and flag is True
