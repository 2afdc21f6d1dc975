"""dl.func and dl.vmap against answers recorded from PyTorch 2.13 (CPU): ``fixtures/record_func.py``
runs the functions of ``func_cases.py`` with torch and saves ``fixtures/func.npz`` (values) and
``fixtures/func_errors.json`` (exception type and message). torch prints pytree structures as
TreeSpecs, dynamo_lite as nested tuples: those messages are compared up to that point."""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import dynamo_lite as dl
from tests.helpers import assert_same
from tests.recorded_cases import check_error, check_outputs

from . import func_cases as C

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
RECORDED = np.load(FIXTURES / "func.npz")
ERRORS = json.loads((FIXTURES / "func_errors.json").read_text())


@pytest.mark.parametrize("case", C.VALUE_CASES, ids=[c.__name__ for c in C.VALUE_CASES])
def test_values_match_torch(case):
    check_outputs(case.__name__, case(dl), RECORDED, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sorted(C.ERROR_CASES))
def test_errors_match_torch(name):
    check_error(lambda: C.ERROR_CASES[name](dl), ERRORS[name], prefix_until=C.PREFIX_ONLY.get(name))


def test_randomness_same_and_different():
    draw = lambda x: x + dl.rand(3)  # noqa: E731
    zeros = dl.zeros(4, 3)
    dl.manual_seed(0)
    same = dl.vmap(draw, randomness="same")(zeros)
    dl.manual_seed(0)
    different = dl.vmap(draw, randomness="different")(zeros)
    dl.manual_seed(0)
    one = dl.rand(3)
    assert all(bool(dl.equal(row, one)) for row in same)
    assert bool(dl.equal(different[0], one)) and not bool(dl.equal(different[1], one))


def test_functional_call_restores_the_module_and_ties_weights():
    layer = dl.nn.Linear(2, 2)
    weight = layer.weight
    with pytest.raises(RuntimeError):  # the forward fails on a wrong shape: the module is restored anyway
        dl.func.functional_call(layer, {"weight": dl.zeros(3, 3)}, (dl.ones(1, 2),), {})
    assert layer.weight is weight and layer._parameters["weight"] is weight

    class Tied(dl.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = dl.nn.Linear(2, 2, bias=False)
            self.b = dl.nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    model = Tied()
    out = dl.func.functional_call(model, {"a.weight": dl.eye(2) * 2}, (dl.ones(1, 2),))
    assert out.tolist() == [[4.0, 4.0]]
    untied = dl.func.functional_call(model, {"a.weight": dl.eye(2) * 2}, (dl.ones(1, 2),), tie_weights=False)
    assert untied.tolist() == (model.b(dl.ones(1, 2) * 2)).tolist()


def test_compiled_caller_runs_the_transform_eagerly():
    """dl.func runs eagerly in compiled code (NOTE: [vmap per slice]): one graph break per transform call."""

    batched_dot = dl.vmap(dl.dot)

    def f(x, y):
        return batched_dot(x * 2, y) + 1

    assert_same(f, dl.randn(4, 3), dl.randn(4, 3), backend="numpy", expect_breaks=1)
    per_sample_grad = dl.func.vmap(dl.func.grad(lambda w, x: (x @ w).tanh()), in_dims=(None, 0))

    def g(w, x):
        return per_sample_grad(w, x).sum(0) * 2

    assert_same(g, dl.randn(3), dl.randn(5, 3), backend="numpy", expect_breaks=1)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        dl.compile(lambda x: dl.vmap(lambda a: a + dl.rand(3))(x), backend="numpy")(dl.zeros(2, 3))
