"""dl.linalg decompositions (svd, eigh, qr, det, slogdet, pinv, matrix_rank, lstsq, spectral matrix norms)
against torch, eager and compiled, with gradients (torch's and gradcheck).

``fixtures/linalg.npz`` and ``fixtures/linalg_errors.json`` were written by
``fixtures/record_linalg.py`` with PyTorch 2.13 (CPU), float64, from ``linalg_cases.py``
(which compares quantities that do not depend on the decompositions' sign choices).
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite.autograd import gradcheck
from tests.helpers import assert_same

from . import linalg_cases as C

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
RECORDED = np.load(FIXTURES / "linalg.npz")
ERRORS = json.loads((FIXTURES / "linalg_errors.json").read_text())
TOLERANCE = {"rtol": 1e-9, "atol": 1e-10}


def _inputs(name, specs, requires_grad=False):
    return [dl.tensor(RECORDED[f"{name}/in{i}"]).requires_grad_(requires_grad) for i in range(len(specs))]


@pytest.mark.parametrize("name,fn,specs", C.CASES, ids=[c[0] for c in C.CASES])
def test_matches_torch(name, fn, specs):
    outputs = fn(dl, *_inputs(name, specs))
    expected = [RECORDED[k] for k in sorted(RECORDED.files) if k.startswith(f"{name}/out")]
    assert len(outputs) == len(expected)
    for i, (out, want) in enumerate(zip(outputs, expected)):
        assert tuple(out.shape) == want.shape and out.dtype == dl.tensor(want).dtype, (name, i)
        np.testing.assert_allclose(out.detach().numpy(), want, **TOLERANCE, err_msg=f"{name} output {i}")


@pytest.mark.parametrize("name,fn,specs", C.CASES, ids=[c[0] for c in C.CASES])
def test_compiled_matches_eager(name, fn, specs):
    assert_same(lambda *inputs: fn(dl, *inputs), *_inputs(name, specs), backend="numpy")


@pytest.mark.parametrize("name", C.GRAD_CASES)
def test_gradients_match_torch(name):
    _, fn, specs = next(c for c in C.CASES if c[0] == name)
    inputs = _inputs(name, specs, requires_grad=True)
    first = fn(dl, *inputs)[0]
    (first * dl.tensor(C.cotangent(np, tuple(first.shape)))).sum().backward()
    for i, t in enumerate(inputs):
        np.testing.assert_allclose(t.grad.numpy(), RECORDED[f"{name}/grad{i}"], rtol=1e-7, atol=1e-9,
                                   err_msg=f"{name} gradient {i}")


def _gauge_invariant_svd(a):
    """Depends on U and Vh only through sign-invariant products, so gradcheck can perturb freely."""
    U, S, Vh = dl.linalg.svd(a, full_matrices=False)
    return (U * S.unsqueeze(-2)) @ Vh + (U[..., :, :1] * Vh[..., :1, :]) * 3


GRADCHECKS = {
    "svd_tall": (_gauge_invariant_svd, (5, 3)),
    "svd_wide": (_gauge_invariant_svd, (3, 5)),
    "svd_full_matrices": (lambda a: (lambda u, s, vh: u[:, :3] @ vh[:3] * s.sum())(*dl.linalg.svd(a)), (4, 3)),
    "eigh_projector": (lambda a: (lambda l, q: (q[:, :1] @ q[:, :1].T) * l.sum())(*dl.linalg.eigh(a + a.T)), (3, 3)),
    "qr": (lambda a: (lambda q, r: q * 2 + r.sum(0))(*dl.linalg.qr(a)), (5, 3)),
    "det": (dl.linalg.det, (2, 3, 3)),
    "slogdet": (lambda a: dl.linalg.slogdet(a).logabsdet, (3, 3)),
    "pinv": (dl.linalg.pinv, (3, 4)),
    "matrix_norms": (lambda a: dl.linalg.matrix_norm(a, "nuc") + dl.linalg.matrix_norm(a, 2), (4, 3)),
}


@pytest.mark.parametrize("name", GRADCHECKS)
def test_gradcheck(name):
    fn, shape = GRADCHECKS[name]
    rng = np.random.default_rng(1)
    assert gradcheck(fn, (dl.tensor(rng.standard_normal(shape)).requires_grad_(),))


@pytest.mark.parametrize("name,fn,spec", C.ERROR_CASES, ids=[c[0] for c in C.ERROR_CASES])
def test_errors_match_torch(name, fn, spec):
    error_type, message = ERRORS[name]
    with pytest.raises(getattr(__import__("builtins"), error_type)) as caught:
        fn(dl, dl.randn(*spec, dtype=dl.float64))
    assert str(caught.value) == message


def test_compiled_training_through_svd_and_det():
    """A loss built on singular values and a determinant trains the same compiled and eager."""
    def loss(w, x):
        return dl.linalg.svdvals(w @ x).sum() + dl.linalg.det(w).abs()

    w0 = dl.tensor(np.random.default_rng(2).standard_normal((3, 3)))
    x = dl.tensor(np.random.default_rng(3).standard_normal((3, 4)))
    results = []
    for run in (loss, dl.compile(loss, backend="numpy")):
        w = w0.clone().requires_grad_()
        run(w, x).backward()
        results.append(w.grad.numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-10)
