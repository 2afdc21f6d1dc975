"""dl.distributions and dl.linalg.cholesky against answers recorded from PyTorch.

``fixtures/distributions.npz`` (values) and ``fixtures/distribution_errors.json`` (exception
type and message for bad input) were written by ``fixtures/record_distributions.py`` with
PyTorch 2.13 (CPU), running the very functions of ``cases.py`` that these tests run on dynamo_lite.
torch's messages name ``torch.Size``/``torch.float32``; ours say ``dl.Size``, which is the only
rewriting done before comparing.
"""
from __future__ import annotations

import json
import pathlib
import warnings

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite.distributions import Distribution, Normal, register_kl
from tests.recorded_cases import check_error, check_outputs

from . import cases as C

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
RECORDED = np.load(FIXTURES / "distributions.npz")
ERRORS = json.loads((FIXTURES / "distribution_errors.json").read_text())
ERROR_TYPES = {"_LinAlgError": dl.linalg.LinAlgError}


@pytest.mark.parametrize("case", C.VALUE_CASES, ids=[c.__name__ for c in C.VALUE_CASES])
def test_values_match_torch(case):
    """float32 outputs to 1e-5, float64 ones (gradients, MultivariateNormal from a precision) to 1e-10."""
    outputs = case(dl)
    single = any(RECORDED[k].dtype == np.float32 for k in RECORDED.files if k.startswith(case.__name__ + "/"))
    tolerance = 1e-5 if single else 1e-10
    check_outputs(case.__name__, outputs, RECORDED, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("name", sorted(C.ERROR_CASES))
def test_errors_match_torch(name):
    check_error(lambda: C.ERROR_CASES[name](dl), ERRORS[name], error_types=ERROR_TYPES)


def test_register_kl_rejects_non_distribution_types():
    with pytest.raises(TypeError, match="Expected type_p to be a Distribution subclass but got 1"):
        register_kl(1, Normal)


def test_register_kl_picks_the_most_specific_pair_and_warns_on_ambiguity():
    class Base(Distribution):
        pass

    class Derived(Base):
        pass

    register_kl(Base, Base)(lambda p, q: "base-base")
    register_kl(Derived, Base)(lambda p, q: "derived-base")
    assert dl.distributions.kl_divergence(Derived(), Base()) == "derived-base"
    register_kl(Base, Derived)(lambda p, q: "base-derived")
    with pytest.warns(RuntimeWarning, match=r"Ambiguous kl_divergence\(Derived, Derived\)"):
        dl.distributions.kl_divergence(Derived(), Derived())


def test_validation_can_be_switched_off():
    assert Normal(0.0, -1.0, validate_args=False).scale.item() == -1.0
    Distribution.set_default_validate_args(False)
    try:
        assert Normal(0.0, -1.0).log_prob(dl.tensor(0.0)).isnan().item()
    finally:
        Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        Normal(0.0, -1.0)


def test_lazy_parameter_is_not_validated_and_repr_shows_what_is_set():
    d = dl.distributions.Bernoulli(logits=dl.tensor([0.0, 1.0]))
    assert repr(d) == "Bernoulli(logits: dl.Size([2]))"
    assert repr(dl.distributions.Normal(0.0, 1.0)) == "Normal(loc: 0.0, scale: 1.0)"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tuple(d.probs.shape) == (2,)
