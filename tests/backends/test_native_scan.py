"""Scan loops on the native backend: the whole loop in C (NOTE: [native scan loops]), forward and reverse scan, vs eager."""
from __future__ import annotations

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite.backends.native.scan_loop import NativeScanLoop
from tests.backends.native_cases import needs_compiler
from tests.frames.recurrent_models import LoopGRU, LoopLSTM
from tests.helpers import assert_compiled, assert_equal_values

LENGTHS = [5, 9, 17, 33, 12, 7, 64]
# The loop's kernels compute exp/tanh with their own polynomials, a few ulp from NumPy's, over many steps.
TOLERANCE = {"rtol": 1e-4, "atol": 1e-5}


def _lstm_inputs(T):
    return dl.randn(T, 3, 6), dl.randn(3, 8), dl.randn(3, 8)


def _gru_inputs(T):
    return dl.randn(2, T, 6), dl.randn(2, 10)


MODELS = {"lstm": (lambda: LoopLSTM(6, 8), _lstm_inputs), "gru": (lambda: LoopGRU(6, 10), _gru_inputs)}


@pytest.fixture
def runners(monkeypatch):
    """Every NativeScanLoop made while the test runs."""
    made = []
    original = NativeScanLoop.__init__

    def recording(self, *args, **kwargs):
        original(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(NativeScanLoop, "__init__", recording)
    return made


def _assert_loops_ran_in_c(runners, expected: int) -> None:
    used = [r for r in runners if r.function is not None]
    assert len(used) == expected, [r.refused for r in runners]
    for runner in used:
        assert runner.refused is None, runner.refused
        assert runner.loops_in_c >= 1


def _first(out):
    return out[0] if isinstance(out, tuple) else out


@needs_compiler
@pytest.mark.parametrize("name", MODELS)
def test_sweep_of_lengths_runs_one_c_loop(name, runners):
    make, inputs = MODELS[name]
    dl.manual_seed(0)
    model = make()
    compiled = dl.compile(model, backend="native")
    before = dl.stats()
    with dl.no_grad():
        for T in LENGTHS:
            args = inputs(T)
            assert_equal_values(compiled(*args), model(*args), **TOLERANCE)
    after = dl.stats()
    assert_compiled(before, after)
    assert after.frames_compiled - before.frames_compiled <= 2
    _assert_loops_ran_in_c(runners, 1)  # the first length is unrolled; every later one is the scan
    assert runners[0].loops_in_c == len(LENGTHS) - 1


@needs_compiler
@pytest.mark.parametrize("name", MODELS)
def test_training_sweep_gradients_equal_eager_with_both_loops_in_c(name, runners):
    make, inputs = MODELS[name]
    dl.manual_seed(1)
    model = make()
    compiled = dl.compile(model, backend="native")
    before = dl.stats()
    for T in LENGTHS:
        args = inputs(T)
        expected = model(*args)
        _first(expected).square().sum().backward()
        wanted = [p.grad.clone() for p in model.parameters()]
        model.zero_grad()
        actual = compiled(*args)
        assert_equal_values(actual, expected, **TOLERANCE)
        _first(actual).square().sum().backward()
        for p, g in zip(model.parameters(), wanted):
            scale = float(np.abs(g.numpy()).max()) or 1.0
            np.testing.assert_allclose(p.grad.numpy(), g.numpy(), rtol=1e-4, atol=1e-5 * scale)
        model.zero_grad()
    after = dl.stats()
    assert_compiled(before, after)
    assert after.frames_compiled - before.frames_compiled <= 2
    _assert_loops_ran_in_c(runners, 2)  # the forward scan and the reverse scan of the backward
    assert all(r.loops_in_c == len(LENGTHS) - 1 for r in runners if r.function is not None)


def _loop_with_python_step(x, h):
    outs = []
    for t in range(x.size(0)):
        h = dl.tanh(x[t] + h).cumsum(0)  # cumsum has no C kernel: this body cannot loop in C
        outs.append(h)
    return dl.stack(outs), h


@needs_compiler
def test_a_body_with_python_work_runs_per_step_and_equal(runners):
    compiled = dl.compile(_loop_with_python_step, backend="native", dynamic=True)
    before = dl.stats()
    for T in (3, 6):
        x, h = dl.randn(T, 5), dl.randn(5)
        assert_equal_values(compiled(x, h), _loop_with_python_step(x, h), **TOLERANCE)
    assert_compiled(before, dl.stats())
    used = [r for r in runners if r.function is not None]
    assert len(used) == 1 and used[0].loops_in_c == 0
    assert "Python" in used[0].refused


def _carries_swapped(x, a, b):
    outs = []
    for t in range(x.size(0)):
        a, b = b, dl.tanh(a + x[t])
        outs.append(a * 2)
    return dl.stack(outs), a, b


@needs_compiler
def test_carries_that_swap_stay_equal(runners):
    compiled = dl.compile(_carries_swapped, backend="native", dynamic=True)
    for T in (4, 7):
        x, a, b = dl.randn(T, 3, 4), dl.randn(3, 4), dl.randn(3, 4)
        assert_equal_values(compiled(x, a, b), _carries_swapped(x, a, b), **TOLERANCE)


def _strided_input(x, h):
    outs = []
    for t in range(x.size(1)):
        h = dl.sigmoid(x[:, t] * 2 + h)
        outs.append(h)
    return dl.stack(outs, 1)


@needs_compiler
def test_a_step_slice_along_an_inner_dim_moves_by_its_stride(runners):
    compiled = dl.compile(_strided_input, backend="native", dynamic=True)
    for T in (3, 8):
        x, h = dl.randn(4, T, 5), dl.randn(4, 5)
        assert_equal_values(compiled(x, h), _strided_input(x, h), **TOLERANCE)
    assert any(r.loops_in_c for r in runners)
