"""Kernels run under NumPy's all-ignore error state and give the caller's state back unchanged."""
import warnings

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite.ops.core.kernel_utils import quiet


def test_kernels_do_not_warn_and_the_callers_state_still_warns():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert dl.isinf(dl.log(dl.zeros(2))).all().item()
        assert dl.isinf(dl.tensor([1.0, 1.0]) / dl.zeros(2)).all().item()
        assert dl.isnan(dl.zeros(2) / dl.zeros(2)).all().item()
        assert caught == []
        np.log(np.zeros(1))  # outside a kernel NumPy warns as the caller asked
        assert len(caught) == 1


def test_quiet_nests_and_restores_a_raising_state():
    with np.errstate(divide="raise"):
        with quiet(np):
            with quiet(np):
                np.log(np.zeros(1))
            np.log(np.zeros(1))
        with pytest.raises(FloatingPointError):
            np.log(np.zeros(1))
        assert np.geterr()["divide"] == "raise"


def test_quiet_restores_the_state_after_an_exception():
    before = np.geterr()
    with pytest.raises(ValueError):
        with quiet(np):
            raise ValueError("boom")
    assert np.geterr() == before


def test_quiet_keeps_the_callers_error_callback():
    calls = []
    with np.errstate(call=lambda *a: calls.append(a), divide="call"):
        with quiet(np):
            np.log(np.zeros(1))
            assert np.geterrcall() is not None
        assert calls == []
        np.log(np.zeros(1))
        assert len(calls) == 1
