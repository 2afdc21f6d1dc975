"""ParameterList and ParameterDict: registration, state dict names, and use in compiled code."""
from __future__ import annotations

import numpy as np
import pytest

import dynamo_lite as dl
from tests.helpers import assert_equal_values


class Mixer(dl.nn.Module):
    def __init__(self):
        super().__init__()
        self.weights = dl.nn.ParameterList([dl.randn(3, 3) for _ in range(2)])  # tensors become Parameters
        self.extra = dl.nn.ParameterDict({"bias": dl.nn.Parameter(dl.randn(3))})

    def forward(self, x):
        for weight in self.weights:
            x = x @ weight
        return x + self.extra["bias"] + self.weights[-1].sum() * len(self.weights)


def test_registration_and_state_dict_names():
    model = Mixer()
    assert all(isinstance(p, dl.nn.Parameter) for p in model.weights)
    assert list(model.state_dict()) == ["weights.0", "weights.1", "extra.bias"]
    model.weights.append(dl.ones(3, 3))
    model.extra["scale"] = dl.ones(3)
    assert len(model.weights) == 3 and "scale" in model.extra and list(model.extra.keys()) == ["bias", "scale"]
    assert model.weights[-1] is model.weights[2] and len(model.weights[:2]) == 2
    with pytest.raises(IndexError):
        model.weights[3]
    with pytest.raises(TypeError):
        model.weights.extend(dl.ones(2))


def test_compiled_iteration_and_indexing_match_eager(backend):
    dl.manual_seed(0)
    model = Mixer()
    x = dl.randn(2, 3)
    compiled = dl.compile(model, backend=backend, fullgraph=True)
    assert_equal_values(compiled(x), model(x))
    assert dl.stats().graph_count == 1
    model.weights.append(dl.randn(3, 3))  # a longer list: recompiled, not ignored
    assert_equal_values(compiled(x), model(x))
    assert dl.stats().recompiles == 1


def test_module_bfloat16_casts_floating_parameters_and_buffers_only():
    model = dl.nn.Sequential(dl.nn.Linear(3, 3), dl.nn.BatchNorm1d(3))
    assert model.bfloat16() is model
    assert all(p.dtype == dl.bfloat16 for p in model.parameters())
    assert model[1].running_mean.dtype == dl.bfloat16
    assert model[1].num_batches_tracked.dtype == dl.int64  # integer buffers keep their dtype
    x = dl.randn(4, 3).bfloat16()
    np.testing.assert_allclose(model.eval()(x).float().detach().numpy(), model.float()(x.float()).detach().numpy(), rtol=0.05, atol=0.05)
