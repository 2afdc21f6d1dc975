"""Losses, nn ops, views and in-place writes: values and float64 gradients equal PyTorch's.

The expected answers were recorded once with PyTorch by record_torch_fixtures.py (see
its docstring) into fixtures/torch_grads.json; these tests only read that file.
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import dynamo_lite as dl
import dynamo_lite.nn as nn
import dynamo_lite.nn.functional as F

from .torch_cases import CASES, HELPERS, MODULE_CASES

FIXTURES = json.loads((pathlib.Path(__file__).parent / "fixtures" / "torch_grads.json").read_text())


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    specs, expression = CASES[name]
    recorded = FIXTURES[name]
    tensors = {}
    for arg, _, kind in specs:
        values, dtype = recorded["inputs"][arg]
        tensors[arg] = dl.from_numpy(np.asarray(values, dtype=dtype))
        if kind in ("x", "p"):
            tensors[arg].requires_grad_()
    result = eval(expression, dict(tensors, lib=dl, F=F, nn=nn, **HELPERS))
    extras = []
    if isinstance(result, tuple):
        result, *extras = result
    result.backward()
    np.testing.assert_allclose(result.item(), recorded["loss"], rtol=1e-10, atol=1e-12)
    assert {a for a, t in tensors.items() if t.grad is not None} == set(recorded["grads"])
    for arg, expected in recorded["grads"].items():
        np.testing.assert_allclose(tensors[arg].grad.numpy(), np.asarray(expected), rtol=1e-9, atol=1e-12,
                                   err_msg=f"gradient of {arg}")
    for value, expected in zip(extras, recorded["extras"]):
        np.testing.assert_allclose(value.numpy(), np.asarray(expected), rtol=1e-10, atol=1e-12)


def _from_lists(values):
    return dl.from_numpy(np.asarray(values, dtype=np.float64))


@pytest.mark.parametrize("name", sorted(MODULE_CASES))
def test_module_gradients_match_torch(name):
    constructor, specs, expression = MODULE_CASES[name]
    recorded = FIXTURES["module:" + name]
    module = eval(constructor, {"lib": dl}).double()
    module.load_state_dict({k: _from_lists(v) if not isinstance(v, int) else dl.tensor(v)
                            for k, v in recorded["state"].items()})
    tensors = {arg: _from_lists(recorded["inputs"][arg][0]).requires_grad_() for arg, _, _ in specs}
    loss = eval(expression, dict(tensors, lib=dl, m=module))
    loss.backward()
    np.testing.assert_allclose(loss.item(), recorded["loss"], rtol=1e-9)
    for arg, expected in recorded["grads"].items():
        np.testing.assert_allclose(tensors[arg].grad.numpy(), np.asarray(expected), rtol=1e-8, atol=1e-10)
    params = dict(module.named_parameters())
    assert set(params) == set(recorded["param_grads"])
    for key, expected in recorded["param_grads"].items():
        np.testing.assert_allclose(params[key].grad.numpy(), np.asarray(expected), rtol=1e-8, atol=1e-10,
                                   err_msg=f"gradient of {key}")
    buffers = dict(module.named_buffers())
    for key, expected in recorded["buffers_after"].items():
        np.testing.assert_allclose(np.asarray(buffers[key].tolist()), np.asarray(expected), rtol=1e-10)


def test_every_fixture_has_a_case():
    assert set(FIXTURES) == set(CASES) | {"module:" + name for name in MODULE_CASES}
