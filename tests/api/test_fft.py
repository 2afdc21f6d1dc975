"""dl.fft against answers recorded from PyTorch 2.13 (CPU): ``fixtures/record_fft.py`` runs the
functions of ``fft_cases.py`` with torch and saves ``fixtures/fft.npz`` (values, complex ones as
``view_as_real`` pairs, and float64 gradients of real losses through the transforms) and
``fixtures/fft_errors.json`` (exception type and message). Compiled code is checked against eager."""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import dynamo_lite as dl
from tests.helpers import assert_same
from tests.recorded_cases import check_error, check_outputs

from . import fft_cases as C

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
RECORDED = np.load(FIXTURES / "fft.npz")
ERRORS = json.loads((FIXTURES / "fft_errors.json").read_text())


@pytest.mark.parametrize("name", sorted(C.VALUE_CASES))
def test_values_match_torch(name):
    check_outputs(name, C.VALUE_CASES[name](dl), RECORDED, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(C.GRAD_CASES))
def test_gradients_match_torch(name):
    check_outputs(name, C.GRAD_CASES[name](dl), RECORDED, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", sorted(C.ERROR_CASES))
def test_errors_match_torch(name):
    check_error(lambda: C.ERROR_CASES[name](dl), ERRORS[name])


def test_dtypes_follow_the_input_precision():
    assert dl.fft.fft(dl.ones(4)).dtype == dl.complex64
    assert dl.fft.fft(dl.ones(4, dtype=dl.float64)).dtype == dl.complex128
    assert dl.fft.irfft(dl.fft.rfft(dl.ones(4))).dtype == dl.float32
    assert dl.fft.ifft(dl.ones(4, dtype=dl.complex128)).dtype == dl.complex128


def test_gradcheck_through_every_transform():
    x = dl.randn(3, 6, dtype=dl.float64, requires_grad=True)
    for fn in (lambda v: dl.view_as_real(dl.fft.fft(v, norm="ortho")), lambda v: dl.view_as_real(dl.fft.rfft(v)),
               lambda v: dl.fft.irfft(dl.fft.rfft(v) * 1.5, n=6), lambda v: dl.view_as_real(dl.fft.ifftn(v, s=(4, 4))),
               lambda v: dl.fft.irfft(dl.view_as_complex(dl.stack([v, v * 0.5], -1)), n=7)):
        assert dl.autograd.gradcheck(fn, (x,))


def _spectral_filter(x, w):
    spectrum = dl.fft.rfft(x, norm="ortho")
    filtered = dl.fft.irfft(spectrum * w, n=x.shape[-1], norm="ortho")
    return filtered, dl.view_as_real(dl.fft.fft2(x)).sum(), dl.fft.fftshift(dl.fft.fftfreq(x.shape[-1]))


def test_compiled_equals_eager_in_one_graph():
    assert_same(_spectral_filter, dl.randn(4, 8), dl.rand(5), backend="numpy")
    assert_same(_spectral_filter, dl.randn(4, 8), dl.rand(5), backend="eager")


def test_port_spectral_filter_training_step_compiled_equals_eager():
    """A learnable frequency-domain filter trained as written for torch (rfft, complex multiply, irfft)."""
    def make_step():
        dl.manual_seed(0)
        weights = dl.nn.Parameter(dl.ones(9))
        optimizer = dl.optim.SGD([weights], lr=0.1)

        def step(x, target):
            optimizer.zero_grad()
            out = dl.fft.irfft(dl.fft.rfft(x) * weights, n=16)
            loss = ((out - target) ** 2).mean()
            loss.backward()
            optimizer.step()
            return loss

        return step, weights

    (eager_step, eager_weights), (compiled_step, compiled_weights) = make_step(), make_step()
    compiled_step = dl.compile(compiled_step, backend="numpy")
    for _ in range(3):
        x, target = dl.randn(4, 16), dl.randn(4, 16)
        np.testing.assert_allclose(compiled_step(x, target).item(), eager_step(x, target).item(), rtol=1e-5)
    np.testing.assert_allclose(compiled_weights.detach().numpy(), eager_weights.detach().numpy(), rtol=1e-5)
