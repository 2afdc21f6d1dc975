"""Every model-zoo workload runs eagerly and matches its hand-written NumPy reference."""
import numpy as np
import pytest

import dynamo_lite as dl
from benchmarks import models
from benchmarks.models import WORKLOADS
from benchmarks.numpy_reference import REFERENCES, as_arrays


def _as_tuple(value):
    return value if isinstance(value, tuple) else (value,)


def _params(model):
    return as_arrays(model, ())[0]


def test_every_workload_has_a_reference():
    assert set(WORKLOADS) == set(REFERENCES)
    assert {"mlp", "lstm_cell", "pointwise_chain", "attention_block", "small_cnn",
            "small_cnn_channels_last", "tiny_fn"} <= set(WORKLOADS)


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_workload_matches_numpy_reference(name):
    workload = WORKLOADS[name]
    model, inputs = workload.make(), workload.make_inputs()
    assert all(isinstance(x, dl.Tensor) and x.dtype == dl.float32 for x in inputs)
    outputs = _as_tuple(model(*inputs))
    params, arrays = as_arrays(model, inputs)
    expected = _as_tuple(REFERENCES[name](params, *arrays))
    assert len(outputs) == len(expected)
    for out, exp in zip(outputs, expected):
        assert out.dtype == dl.float32 and tuple(out.shape) == exp.shape
        np.testing.assert_allclose(out.numpy(), exp, rtol=workload.rtol, atol=workload.atol)


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_workloads_are_deterministic(name):
    workload = WORKLOADS[name]
    a, b = workload.make_inputs(), workload.make_inputs()
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.numpy(), y.numpy())
    m1, m2 = workload.make(), workload.make()
    for (k1, v1), (k2, v2) in zip(_params(m1).items(), _params(m2).items()):
        assert k1 == k2
        np.testing.assert_array_equal(v1, v2)


def test_small_cnn_layouts_agree():
    nchw, cl = WORKLOADS["small_cnn"], WORKLOADS["small_cnn_channels_last"]
    model_cl, (x_cl,) = cl.make(), cl.make_inputs()
    assert x_cl.is_contiguous(memory_format=dl.channels_last) and not x_cl.is_contiguous()
    assert model_cl.conv1.weight.is_contiguous(memory_format=dl.channels_last)
    (x,) = nchw.make_inputs()
    out = nchw.make()(x)
    out_cl = model_cl(x_cl)
    np.testing.assert_allclose(out_cl.numpy(), out.numpy(), rtol=1e-5, atol=1e-5)


def test_sizes_are_as_documented():
    assert models.POINTWISE_SHAPE[0] * models.POINTWISE_SHAPE[1] == 4 * 1024 * 1024
    assert WORKLOADS["mlp"].make()(*WORKLOADS["mlp"].make_inputs()).shape == (models.MLP_BATCH, models.MLP_OUT)
    model = WORKLOADS["attention_block"].make()
    assert sum(p.numel() for p in model.parameters()) == (
        4 * 256  # two LayerNorms
        + 256 * 768 + 768 + 256 * 256 + 256  # qkv, proj
        + 256 * 1024 + 1024 + 1024 * 256 + 256  # MLP
    )
    h, c = WORKLOADS["lstm_cell"].make()(*WORKLOADS["lstm_cell"].make_inputs())
    assert h.shape == c.shape == (models.LSTM_BATCH, models.LSTM_HIDDEN)
