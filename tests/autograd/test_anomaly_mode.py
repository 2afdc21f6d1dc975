"""dl.autograd.detect_anomaly / set_detect_anomaly: a NaN produced in backward raises torch's RuntimeError.

Messages and mode semantics as PyTorch 2.13 shows them for the same code (set_detect_anomaly
switches at once and, used as a context manager, restores the previous mode on exit).
"""
from __future__ import annotations

import warnings

import pytest

import dynamo_lite as dl


def _nan_in_sqrt_backward(x):
    return (x.sqrt() * 0).sum()  # d sqrt(x) at 0 is inf, times 0: NaN


def test_nan_gradient_raises_naming_the_backward_function_and_warns_with_the_forward_stack():
    x = dl.zeros(2, requires_grad=True)
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        with dl.autograd.detect_anomaly():
            loss = _nan_in_sqrt_backward(x)
            with pytest.warns(UserWarning, match="Error detected in SqrtBackward0") as caught:
                with pytest.raises(RuntimeError) as error:
                    loss.backward()
    assert str(error.value) == "Function 'SqrtBackward0' returned nan values in its 0th output."
    stack = str(caught[-1].message)
    assert "_nan_in_sqrt_backward" in stack and "recording.py" not in stack
    assert not dl.autograd.is_anomaly_enabled()


def test_without_the_mode_nan_flows_through():
    x = dl.zeros(2, requires_grad=True)
    _nan_in_sqrt_backward(x).backward()
    assert x.grad.isnan().all()


def test_check_nan_false_and_decorator_form():
    x = dl.zeros(2, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with dl.autograd.detect_anomaly(check_nan=False):
            assert dl.autograd.is_anomaly_enabled() and not dl.autograd.is_anomaly_check_nan_enabled()
            _nan_in_sqrt_backward(x).backward()

        @dl.autograd.detect_anomaly()
        def step():
            _nan_in_sqrt_backward(x).backward()

        with pytest.raises(RuntimeError, match="SqrtBackward0"):
            step()
    assert not dl.autograd.is_anomaly_enabled() and dl.autograd.is_anomaly_check_nan_enabled()


def test_set_detect_anomaly_switches_now_and_restores_as_a_context_manager():
    try:
        dl.autograd.set_detect_anomaly(True)
        assert dl.autograd.is_anomaly_enabled()
        with dl.autograd.set_detect_anomaly(False):
            assert not dl.autograd.is_anomaly_enabled()
        assert dl.autograd.is_anomaly_enabled()
    finally:
        dl.autograd.set_detect_anomaly(False)
    assert not dl.autograd.is_anomaly_enabled()
