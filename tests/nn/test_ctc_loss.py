"""F.ctc_loss / nn.CTCLoss against torch: losses, gradients, errors; compiled equal to eager.

``fixtures/ctc.npz`` / ``fixtures/ctc_errors.json`` were written by ``fixtures/record_ctc.py``
with PyTorch 2.13 (CPU), float64, from ``ctc_cases.py``.
"""
from __future__ import annotations

import builtins
import json
import pathlib

import numpy as np
import pytest

import dynamo_lite as dl
from tests.helpers import assert_same

from . import ctc_cases as C

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
RECORDED = np.load(FIXTURES / "ctc.npz")
ERRORS = json.loads((FIXTURES / "ctc_errors.json").read_text())
F = dl.nn.functional


def _call(name, targets, input_lengths, target_lengths, kwargs, as_tensors, requires_grad=False):
    x = dl.tensor(RECORDED[f"{name}/logits"]).requires_grad_(requires_grad)
    lengths = (dl.tensor(input_lengths), dl.tensor(target_lengths)) if as_tensors else (input_lengths,
                                                                                         target_lengths)
    return x, F.ctc_loss(x.log_softmax(-1), dl.tensor(targets), *lengths, **kwargs)


@pytest.mark.parametrize("case", C.CASES, ids=[c[0] for c in C.CASES])
def test_matches_torch(case):
    name, _, _, _, targets, input_lengths, target_lengths, kwargs, as_tensors = case
    x, loss = _call(name, targets, input_lengths, target_lengths, kwargs, as_tensors, name in C.GRAD_CASES)
    np.testing.assert_allclose(loss.detach().numpy(), RECORDED[f"{name}/loss"], rtol=1e-10, atol=1e-12)
    if name in C.GRAD_CASES:
        loss.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), RECORDED[f"{name}/grad"], rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("case", C.CASES, ids=[c[0] for c in C.CASES])
def test_module_compiled_matches_eager(case):
    name, _, _, _, targets, input_lengths, target_lengths, kwargs, as_tensors = case
    module = dl.nn.CTCLoss(**kwargs)
    targets = dl.tensor(targets)
    lengths = (dl.tensor(input_lengths), dl.tensor(target_lengths)) if as_tensors else (input_lengths,
                                                                                         target_lengths)
    # The recursion needs the labels (and lengths) as Python values: reading them is data-dependent, so the
    # ctc_loss call runs eagerly, one graph break (reported by forward's frame and by the lambda that
    # inlines it, counted once); the log_softmax before it is captured.
    assert_same(lambda x: module(x.log_softmax(-1), targets, *lengths), dl.tensor(RECORDED[f"{name}/logits"]),
                backend="numpy", expect_breaks=1)


@pytest.mark.parametrize("case", C.ERROR_CASES, ids=[c[0] for c in C.ERROR_CASES])
def test_errors_match_torch(case):
    name, T, N, classes, targets, input_lengths, target_lengths, kwargs = case
    error_type, message = ERRORS[name]
    with pytest.raises(getattr(builtins, error_type)) as caught:
        F.ctc_loss(dl.zeros(T, N, classes).log_softmax(-1), dl.tensor(targets), input_lengths, target_lengths,
                   **kwargs)
    assert str(caught.value) == message.replace("ctc_loss_allocate_outputs", "ctc_loss")
