"""Scan bodies on the cupy backend (NOTE: [cupy scan bodies]), run on the host emulation, vs eager."""
from __future__ import annotations

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite.backends.cupy.scan import CupyScanRunner
from tests.cupy_emulated import cupy_emulated  # noqa: F401 (a fixture)
from tests.frames.recurrent_models import LoopGRU, LoopLSTM
from tests.helpers import assert_compiled, assert_equal_values

LENGTHS = [5, 9, 17, 12]


def _lstm_inputs(T):
    return dl.randn(T, 3, 6), dl.randn(3, 8), dl.randn(3, 8)


def _gru_inputs(T):
    return dl.randn(2, T, 6), dl.randn(2, 10).t().contiguous().t()  # a transposed initial state


MODELS = {"lstm": (lambda: LoopLSTM(6, 8), _lstm_inputs), "gru": (lambda: LoopGRU(6, 10), _gru_inputs)}


@pytest.fixture
def runners(monkeypatch):
    made = []
    original = CupyScanRunner.__init__

    def recording(self, *args, **kwargs):
        original(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(CupyScanRunner, "__init__", recording)
    return made


@pytest.mark.parametrize("name", MODELS)
def test_training_sweep_runs_lowered_bodies_and_equals_eager(name, cupy_emulated, runners):
    make, inputs = MODELS[name]
    dl.manual_seed(5)
    model = make()
    compiled = dl.compile(model, backend=cupy_emulated)
    before = dl.stats()
    for T in LENGTHS:
        args = inputs(T)
        expected = model(*args)
        first = expected[0] if isinstance(expected, tuple) else expected
        first.square().sum().backward()
        wanted = [p.grad.clone() for p in model.parameters()]
        model.zero_grad()
        actual = compiled(*args)
        assert_equal_values(actual, expected, rtol=1e-4, atol=1e-5)
        (actual[0] if isinstance(actual, tuple) else actual).square().sum().backward()
        for p, g in zip(model.parameters(), wanted):
            np.testing.assert_allclose(p.grad.numpy(), g.numpy(), rtol=1e-4, atol=1e-5)
        model.zero_grad()
    after = dl.stats()
    assert_compiled(before, after)
    assert after.frames_compiled - before.frames_compiled <= 2
    used = [r for r in runners if r.function is not None]
    # the forward scan's body and the reverse scan's, lowered once per graph the backend compiles
    # (the cupy backend compiles a graph per input shape; its kernel sources are cached across them)
    assert len(used) >= 2 and len(used) % 2 == 0
    for runner in used:
        assert runner.function is not runner.gm.forward
        assert any(type(n.target).__name__ == "KernelCall" for n in runner.function.graph.nodes)
