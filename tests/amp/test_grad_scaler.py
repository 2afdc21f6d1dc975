"""dl.amp.GradScaler against a sequence recorded from torch 2.13 (``fixtures/record_grad_scaler.py``
runs ``scaler_cases.py`` with torch): scale growth and backoff, skipped steps on inf/NaN
gradients, an explicit unscale_ before clipping, state_dict, and torch's errors."""
from __future__ import annotations

import builtins
import json
import pathlib

import numpy as np
import pytest

import dynamo_lite as dl

from . import scaler_cases as C

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
RECORDED = np.load(FIXTURES / "grad_scaler.npz")
EXPECTED = json.loads((FIXTURES / "grad_scaler.json").read_text())


def test_training_sequence_matches_torch():
    records, state = C.training_sequence(dl)
    for i, record in enumerate(records):
        assert record["scale"] == RECORDED[f"{i}/scale"], i
        assert record["tracker"] == RECORDED[f"{i}/tracker"], i
        np.testing.assert_allclose(record["weight"], RECORDED[f"{i}/weight"], rtol=1e-6, atol=1e-7, err_msg=str(i))
        np.testing.assert_allclose(record["bias"], RECORDED[f"{i}/bias"], rtol=1e-6, atol=1e-7, err_msg=str(i))
    assert state == EXPECTED["state_dict"]


@pytest.mark.parametrize("name", sorted(EXPECTED["errors"]))
def test_errors_match_torch(name):
    error_type, message = EXPECTED["errors"][name]
    with pytest.raises(getattr(builtins, error_type)) as caught:
        C.error_calls(dl)[name]()
    assert str(caught.value) == message


def test_state_dict_round_trip_and_disabled_scaler():
    scaler = dl.amp.GradScaler("cpu", init_scale=8.0, growth_interval=3)
    p = dl.nn.Parameter(dl.ones(2))
    scaler.scale(p.sum()).backward()
    other = dl.amp.GradScaler("cpu")
    other.load_state_dict(scaler.state_dict())
    assert other.state_dict() == scaler.state_dict() == {"scale": 8.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                                                          "growth_interval": 3, "_growth_tracker": 0}
    off = dl.amp.GradScaler("cpu", enabled=False)
    loss = p.sum()
    assert off.scale(loss) is loss and off.get_scale() == 1.0 and off.state_dict() == {}
    scaler.update(2.0)
    assert scaler.get_scale() == 2.0


def test_cuda_scaler_without_a_device_disables_itself_with_torchs_warning():
    if dl.cuda.is_available():
        pytest.skip("a CUDA device is present")
    with pytest.warns(UserWarning, match="torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling."):
        scaler = dl.amp.GradScaler()
    assert not scaler.is_enabled()
