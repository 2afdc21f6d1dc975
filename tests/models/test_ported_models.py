"""Model files written against torch, ported by renaming their imports, must give PyTorch's answers.

Each ``torch_src/<name>.py`` is run through ``porting.port`` (imports renamed, nothing else),
built, loaded with the weights PyTorch 2.13 recorded in ``fixtures/<name>.npz`` (by
``record_torch.py``) and run on the recorded inputs: the outputs and the state dict
afterwards (running statistics) must equal torch's. Then the same computation compiled
with ``fullgraph=True`` (one graph, no break) must equal eager on every backend (the cupy
backend through its host emulation when there is no GPU).
"""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import dynamo_lite as dl
from tests.cupy_emulated import cupy_emulated  # noqa: F401  (fixture)
from tests.helpers import assert_equal_values

from .porting import port

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
MODELS = ["char_gru", "dcgan", "gpt", "llama", "mnist_cnn", "resnet", "transformer_lm", "word_lstm"]
TOLERANCE = {"rtol": 2e-4, "atol": 2e-5}


def _recorded(name):
    return np.load(FIXTURES / f"{name}.npz")


def _build(name, recorded):
    module = port(name)
    dl.manual_seed(0)
    model = module.build()
    state = {k[len("state/"):]: dl.tensor(recorded[k]) for k in recorded.files if k.startswith("state/")}
    model.load_state_dict(state)
    inputs = [dl.tensor(recorded[f"in{i}"]) for i in range(sum(k.startswith("in") for k in recorded.files))]
    return module, model, inputs


def _runner(module):
    """What the recorder ran: ``module.run(model, *inputs)`` or ``model(*inputs)``."""
    return getattr(module, "run", None) or (lambda model, *inputs: model(*inputs))


def _flat(value):
    if value is None:
        return []
    if isinstance(value, dl.Tensor):
        return [value]
    return [t for v in value for t in _flat(v)]


@pytest.mark.parametrize("name", MODELS)
def test_ported_model_matches_torch(name):
    recorded = _recorded(name)
    module, model, inputs = _build(name, recorded)
    dl.manual_seed(0)
    outputs = _flat(_runner(module)(model, *inputs))
    assert len(outputs) == sum(k.startswith("out") for k in recorded.files)
    for i, out in enumerate(outputs):
        want = recorded[f"out{i}"]
        assert tuple(out.shape) == want.shape and out.dtype == dl.tensor(want).dtype, f"output {i}"
        np.testing.assert_allclose(out.detach().numpy(), want, **TOLERANCE, err_msg=f"{name} output {i}")
    for key, value in model.state_dict().items():
        np.testing.assert_allclose(value.detach().numpy(), recorded[f"after/{key}"], **TOLERANCE, err_msg=f"{name}: {key}")


@pytest.mark.parametrize("name", MODELS)
def test_ported_model_compiles_to_one_graph(name, backend):
    _check_compiled(name, backend)


@pytest.mark.parametrize("name", MODELS)
def test_ported_model_on_the_cupy_backend(name, cupy_emulated):
    _check_compiled(name, cupy_emulated)


def _check_compiled(name, backend):
    recorded = _recorded(name)
    module, eager_model, inputs = _build(name, recorded)
    _, compiled_model, _ = _build(name, recorded)
    run = _runner(module)
    compiled_run = dl.compile(run, backend=backend, fullgraph=True)
    for _ in range(2):
        dl.manual_seed(0)
        expected = run(eager_model, *inputs)
        dl.manual_seed(0)
        actual = compiled_run(compiled_model, *inputs)
        assert_equal_values(actual, expected, **TOLERANCE)
        assert_equal_values(dict(compiled_model.state_dict()), dict(eager_model.state_dict()), **TOLERANCE)
    stats = dl.stats()
    assert stats.frames_compiled == 1 and stats.graph_count == 1 and stats.cache_hits == 1
    assert not stats.fallbacks and stats.recompiles == 0
