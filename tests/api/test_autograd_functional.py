"""dl.autograd.functional against answers recorded from PyTorch 2.13 (CPU):
``fixtures/record_functional.py`` runs the functions of ``functional_cases.py`` with torch and
saves ``fixtures/functional.npz`` (values) and ``fixtures/functional_errors.json`` (exception type
and message); torch's messages name ``torch.Size``, ours ``dl.Size``."""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import dynamo_lite as dl
from tests.helpers import assert_same
from tests.recorded_cases import check_error, check_outputs

from . import functional_cases as C

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
RECORDED = np.load(FIXTURES / "functional.npz")
ERRORS = json.loads((FIXTURES / "functional_errors.json").read_text())


@pytest.mark.parametrize("case", C.VALUE_CASES, ids=[c.__name__ for c in C.VALUE_CASES])
def test_values_match_torch(case):
    check_outputs(case.__name__, case(dl), RECORDED, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sorted(C.ERROR_CASES))
def test_errors_match_torch(name):
    check_error(lambda: C.ERROR_CASES[name](dl), ERRORS[name])


def test_results_are_detached_unless_create_graph():
    x = dl.tensor([1.0, 2.0], requires_grad=True)
    assert not dl.autograd.functional.jacobian(lambda z: z ** 2, x).requires_grad
    assert dl.autograd.functional.jacobian(lambda z: z ** 2, x, create_graph=True).requires_grad
    output, product = dl.autograd.functional.vjp(lambda z: z ** 2, x, dl.ones(2))
    assert not output.requires_grad and not product.requires_grad and x.grad is None


def test_compiled_caller_breaks_once_and_equals_eager():
    """The functional API drives the autograd engine: in compiled code each call runs eagerly (one break)."""
    def f(x, v):
        jac = dl.autograd.functional.jacobian(lambda z: z.sin() * z, x)
        return jac @ v + 1

    assert_same(f, dl.randn(3, dtype=dl.float64), dl.randn(3, dtype=dl.float64), backend="numpy", expect_breaks=1)
