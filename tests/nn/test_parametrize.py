"""Weight reparametrizations (parametrize, parametrizations.weight_norm/spectral_norm, the older
weight_norm/spectral_norm hooks) against torch, eager and compiled.

``fixtures/parametrize.npz`` and ``fixtures/parametrize_errors.json`` were written by
``fixtures/record_parametrize.py`` with PyTorch 2.13 (CPU), float64, running the cases of
``parametrize_cases.py`` (the same code runs here on dynamo_lite).
"""
from __future__ import annotations

import builtins
import json
import pathlib
import warnings

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite.nn.utils import parametrize
from tests.helpers import assert_compiled, assert_same

from . import parametrize_cases as C

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
RECORDED = np.load(FIXTURES / "parametrize.npz")
ERRORS = json.loads((FIXTURES / "parametrize_errors.json").read_text())


class Checker:
    """The ``io`` of a case on the dynamo_lite side: recorded inputs and states in, outputs compared."""

    def input(self, key, shape):
        assert RECORDED[key].shape == shape
        return RECORDED[key]

    def state(self, key, module):
        prefix = key + "/"
        module.load_state_dict({k[len(prefix):]: dl.tensor(RECORDED[k]) for k in RECORDED.files
                                if k.startswith(prefix)})

    def output(self, key, value):
        actual = value.detach().numpy() if isinstance(value, dl.Tensor) else value
        np.testing.assert_allclose(actual, RECORDED[key], rtol=1e-10, atol=1e-12, err_msg=key)


@pytest.mark.parametrize("case", C.CASES, ids=[c.__name__ for c in C.CASES])
def test_matches_torch(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        case(dl, Checker())


@pytest.mark.parametrize("name,call", C.ERROR_CASES, ids=[c[0] for c in C.ERROR_CASES])
def test_errors_match_torch(name, call):
    error_type, message = ERRORS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with pytest.raises(getattr(builtins, error_type)) as caught:
            call(dl)
    assert str(caught.value) == message.replace("torch.Size", "dl.Size")


def _weight_norm_linear():
    dl.manual_seed(0)
    return dl.nn.utils.parametrizations.weight_norm(dl.nn.Linear(4, 3))


MODELS = {
    "weight_norm": _weight_norm_linear,
    "weight_norm_conv_none": lambda: dl.nn.utils.parametrizations.weight_norm(dl.nn.Conv1d(2, 3, 3), dim=None),
    "spectral_norm_eval": lambda: dl.nn.utils.parametrizations.spectral_norm(dl.nn.Linear(4, 3)).eval(),
}
# The older weight_norm/spectral_norm hooks are left out: their pre-hook is a callable object setting a
# new tensor attribute, which the translator does not inline (a graph break, then a recompile per call).
INPUTS = {"weight_norm_conv_none": (2, 2, 5)}


@pytest.mark.parametrize("name", MODELS)
def test_compiled_matches_eager(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        model = MODELS[name]()
    x = dl.randn(*INPUTS.get(name, (5, 4)))
    with dl.no_grad():
        assert_same(model, x, backend="numpy")


def test_spectral_norm_training_compiled_updates_buffers_as_eager():
    """In training each forward refines ``_u``/``_v`` in place: compiled and eager copies stay equal."""
    dl.manual_seed(0)
    eager = dl.nn.utils.parametrizations.spectral_norm(dl.nn.Linear(4, 3), n_power_iterations=2)
    twin = dl.nn.utils.parametrizations.spectral_norm(dl.nn.Linear(4, 3), n_power_iterations=2)
    twin.load_state_dict(eager.state_dict())
    compiled = dl.compile(twin, backend="numpy")
    x = dl.randn(5, 4)
    before = dl.stats()
    with dl.no_grad():
        for _ in range(3):
            np.testing.assert_allclose(compiled(x).numpy(), eager(x).numpy(), rtol=1e-6, atol=1e-6)
            for key, value in eager.state_dict().items():
                np.testing.assert_allclose(twin.state_dict()[key].numpy(), value.numpy(), rtol=1e-6, atol=1e-6)
    assert_compiled(before, dl.stats())


def test_weight_norm_trains_compiled_like_eager():
    """Gradients reach original0 (g) and original1 (v) through the compiled forward, as in eager."""
    eager, twin = _weight_norm_linear(), _weight_norm_linear()
    compiled = dl.compile(twin, backend="numpy")
    x = dl.randn(6, 4)
    before = dl.stats()
    for module, run in ((eager, eager), (twin, compiled)):
        optimizer = dl.optim.SGD(module.parameters(), lr=0.1)
        for _ in range(3):
            optimizer.zero_grad()
            (run(x) ** 2).sum().backward()
            optimizer.step()
    assert_compiled(before, dl.stats())
    for (name, a), (_, b) in zip(eager.named_parameters(), twin.named_parameters()):
        assert name.startswith(("parametrizations.weight.original", "bias"))
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-5, atol=1e-6, err_msg=name)
    assert not np.allclose(eager.parametrizations.weight.original0.detach().numpy(),
                           _weight_norm_linear().parametrizations.weight.original0.detach().numpy())


def test_custom_parametrization_chain_cache_and_assignment():
    class Symmetric(dl.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

    class Scale(dl.nn.Module):
        def forward(self, X):
            return X * 2

        def right_inverse(self, X):
            return X / 2

    layer = dl.nn.Linear(3, 3)
    parametrize.register_parametrization(layer, "weight", Symmetric())
    parametrize.register_parametrization(layer, "weight", Scale())
    assert type(layer).__name__ == "ParametrizedLinear" and parametrize.is_parametrized(layer, "weight")
    assert parametrize.type_before_parametrizations(layer) is dl.nn.Linear
    original = layer.parametrizations.weight.original
    expected = (original.triu() + original.triu(1).T) * 2
    assert dl.equal(layer.weight, expected)
    assert layer.weight is not layer.weight
    with parametrize.cached():
        assert layer.weight is layer.weight
    with pytest.raises(RuntimeError, match="parametrization Symmetric does not implement right_inverse."):
        layer.weight = dl.eye(3)
    parametrize.remove_parametrizations(layer, "weight")
    assert type(layer) is dl.nn.Linear and layer.weight is original and dl.equal(layer.weight, expected)


def test_assignment_goes_through_right_inverse():
    layer = dl.nn.utils.parametrizations.weight_norm(dl.nn.Linear(3, 2))
    target = dl.tensor([[3.0, 4.0, 0.0], [0.0, 0.0, 2.0]])
    layer.weight = target
    assert layer.parametrizations.weight.original0.flatten().tolist() == [5.0, 2.0]
    assert dl.allclose(layer.weight, target)
