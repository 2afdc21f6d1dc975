"""dl.nn layers against PyTorch: torch's weights loaded by name, outputs and updated buffers recorded.

``fixtures/layers.npz`` was written by ``fixtures/record_torch.py`` with PyTorch 2.13 (CPU)
from the cases in ``torch_layer_cases.py``. Each case also runs compiled (fullgraph) on
every backend (cupy through its host emulation) and must equal eager, including the
buffers it updates.
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import dynamo_lite as dl
from tests.cupy_emulated import cupy_emulated  # noqa: F401  (fixture)
from tests.helpers import assert_equal_values

from . import torch_cases as C
from .torch_layer_cases import LAYER_CASES, LAYER_ERROR_CASES

RECORDED = np.load(pathlib.Path(__file__).parent / "fixtures" / "layers.npz")
TOLERANCE = {"rtol": 1e-4, "atol": 1e-5}
#: Cases whose forward reads a tensor's value on the host (momentum=None divides by the
#: batch count): a graph break, and the factor is a guarded constant that changes per
#: batch (a recompile), so they compile without fullgraph.
HOST_READS = {"batch_norm2d_cumulative"}


def build(name, cls, ctor, training):
    layer = getattr(dl.nn, cls)(**ctor).train(training)
    prefix = f"{name}/state/"
    state = {k[len(prefix):]: dl.tensor(RECORDED[k]) for k in RECORDED.files if k.startswith(prefix)}
    layer.load_state_dict(state)
    return layer


def inputs(name, args, kwargs):
    return C.build_inputs(name, args, kwargs, RECORDED, dl.tensor)


def flat(result):
    if result is None:
        return []
    if isinstance(result, dl.Tensor):
        return [result]
    return [t for r in result for t in flat(r)]


@pytest.mark.parametrize("case", LAYER_CASES, ids=[c[0] for c in LAYER_CASES])
def test_layer_matches_torch(case):
    name, cls, ctor, args, kwargs, training = case
    layer = build(name, cls, ctor, training)
    args, kwargs = inputs(name, args, kwargs)
    outputs = flat(layer(*args, **kwargs))
    expected = [RECORDED[f"{name}/out{i}"] for i in range(len(outputs))]
    assert f"{name}/out{len(outputs)}" not in RECORDED.files, "torch returned more outputs"
    for out, want in zip(outputs, expected):
        assert tuple(out.shape) == want.shape and out.dtype == dl.tensor(want).dtype
        np.testing.assert_allclose(out.detach().numpy(), want, **TOLERANCE, err_msg=name)
    prefix = f"{name}/after/"
    after = {k[len(prefix):]: RECORDED[k] for k in RECORDED.files if k.startswith(prefix)}
    state = layer.state_dict()
    assert list(state) == list(after)
    for key, want in after.items():
        np.testing.assert_allclose(state[key].numpy(), want, **TOLERANCE, err_msg=f"{name}: {key}")


@pytest.mark.parametrize("case", LAYER_CASES, ids=[c[0] for c in LAYER_CASES])
def test_compiled_layer_matches_eager(case, backend):
    _check_compiled(case, backend)


@pytest.mark.parametrize("case", LAYER_CASES, ids=[c[0] for c in LAYER_CASES])
def test_layer_on_the_cupy_backend(case, cupy_emulated):
    _check_compiled(case, cupy_emulated)


def _check_compiled(case, backend):
    name, cls, ctor, args, kwargs, training = case
    eager_layer, compiled_layer = build(name, cls, ctor, training), build(name, cls, ctor, training)
    eager_args, eager_kwargs = inputs(name, args, kwargs)
    compiled_args, compiled_kwargs = inputs(name, args, kwargs)
    fullgraph = name not in HOST_READS
    compiled = dl.compile(compiled_layer, backend=backend, fullgraph=fullgraph)
    for _ in range(2):  # the second call runs the cached translation
        expected = eager_layer(*eager_args, **eager_kwargs)
        actual = compiled(*compiled_args, **compiled_kwargs)
        assert_equal_values(actual, expected, **TOLERANCE)
        assert_equal_values(dict(compiled_layer.state_dict()), dict(eager_layer.state_dict()), **TOLERANCE)
    stats = dl.stats()
    assert stats.frames_compiled >= 1 and not stats.fallbacks and stats.cache_hits >= 1
    if fullgraph:
        assert stats.graph_count == 1 and stats.frames_compiled == 1 and stats.recompiles == 0


ERROR_INPUTS = np.load(pathlib.Path(__file__).parent / "fixtures" / "layer_error_inputs.npz")
LAYER_ERRORS = json.loads((pathlib.Path(__file__).parent / "fixtures" / "layer_errors.json").read_text())


@pytest.mark.parametrize("case", LAYER_ERROR_CASES, ids=[c[0] for c in LAYER_ERROR_CASES])
def test_bad_layer_input_raises_like_torch(case):
    name, cls, ctor, args, kwargs = case
    args, kwargs = C.build_inputs(name, args, kwargs, ERROR_INPUTS, dl.tensor)
    kind, message = LAYER_ERRORS[name]
    with pytest.raises(Exception) as info:
        layer = getattr(dl.nn, cls)(**ctor)
        if args:
            layer(*args, **kwargs)
    assert type(info.value).__name__ == kind
    assert str(info.value) == message.replace("torch.Size", "dl.Size")
