"""dl.optim.swa_utils against PyTorch: AveragedModel (SWA, EMA, avg_fn, multi_avg_fn, use_buffers),
update_bn and SWALR.

The fixture fixtures/swa.json was made by fixtures/record_swa.py (PyTorch 2.13): it draws the
data with NumPy (seed 0), runs swa_case.run with torch, and stores the data and the values.
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite.optim import swa_utils

from . import swa_case

FIXTURE = json.loads((pathlib.Path(__file__).parent / "fixtures" / "swa.json").read_text())


@pytest.fixture(scope="module")
def ours():
    arrays = {k: np.asarray(v, dtype=np.float32) for k, v in FIXTURE["arrays"].items()}
    return swa_case.run(dl, arrays)


def _compare(got, want, name):
    if isinstance(want, dict):
        assert sorted(got) == sorted(want), name
        for key in want:
            _compare(got[key], want[key], f"{name}.{key}")
        return
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64),
                               rtol=1e-6, atol=1e-7, err_msg=name)


@pytest.mark.parametrize("name", sorted(FIXTURE["expected"]))
def test_matches_torch(ours, name):
    _compare(ours[name], FIXTURE["expected"][name], name)


def test_averaged_model_forwards_to_its_copy_and_counts_updates():
    model = dl.nn.Linear(2, 1)
    averaged = swa_utils.AveragedModel(model)
    assert averaged.module is not model and averaged.n_averaged.item() == 0
    x = dl.ones(3, 2)
    with dl.no_grad():
        model.weight.fill_(2.0)
        averaged.update_parameters(model)  # the first update copies
        model.weight.fill_(4.0)
        averaged.update_parameters(model)
    assert averaged.module.weight.tolist() == [[3.0, 3.0]] and averaged.n_averaged.item() == 2
    np.testing.assert_allclose(averaged(x).detach().numpy(), averaged.module(x).detach().numpy())
    assert "n_averaged" in averaged.state_dict()


def test_bad_arguments_raise_torch_errors():
    model = dl.nn.Linear(2, 1)
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn should be provided"):
        swa_utils.AveragedModel(model, avg_fn=swa_utils.get_swa_avg_fn(), multi_avg_fn=swa_utils.get_swa_multi_avg_fn())
    optimizer = dl.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(ValueError, match="anneal_strategy must by one of 'cos' or 'linear', instead got step"):
        swa_utils.SWALR(optimizer, swa_lr=0.01, anneal_strategy="step")
    with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0, got -1"):
        swa_utils.SWALR(optimizer, swa_lr=0.01, anneal_epochs=-1)
    with pytest.raises(ValueError, match="swa_lr must have the same length as optimizer.param_groups"):
        swa_utils.SWALR(optimizer, swa_lr=[0.1, 0.2])


def test_update_bn_without_batchnorm_is_a_no_op_and_restores_the_mode():
    model = dl.nn.Linear(2, 1).eval()
    swa_utils.update_bn([dl.ones(1, 2)], model)
    net = dl.nn.Sequential(dl.nn.Linear(2, 2), dl.nn.BatchNorm1d(2)).eval()
    swa_utils.update_bn([dl.randn(4, 2), dl.randn(4, 2)], net)
    assert not net.training and net[1].momentum == 0.1 and net[1].num_batches_tracked.item() == 2
