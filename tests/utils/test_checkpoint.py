"""dl.utils.checkpoint.checkpoint: the same values and gradients as the call without it.

Checkpointing is defined as a memory/compute trade that changes no result, so the oracle
is the same computation run without it (as torch's own tests check theirs).
"""
from __future__ import annotations

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite import nn
from dynamo_lite.utils.checkpoint import checkpoint
from tests.helpers import assert_compiled


def _block():
    dl.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Dropout(0.3), nn.Linear(8, 3))


def _run(block, x, use_checkpoint):
    block.zero_grad()
    x.grad = None
    dl.manual_seed(1)
    y = checkpoint(block, x * 2, use_reentrant=False) if use_checkpoint else block(x * 2)
    (y * dl.arange(3.0)).sum().backward()
    return y.detach().numpy(), [p.grad.numpy().copy() for p in block.parameters()], x.grad.numpy().copy()


def test_values_and_gradients_equal_the_plain_call_dropout_included():
    block, x = _block(), dl.randn(5, 4, requires_grad=True)
    plain, checkpointed = _run(block, x, False), _run(block, x, True)
    np.testing.assert_array_equal(plain[0], checkpointed[0])
    for a, b in zip(plain[1], checkpointed[1]):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(plain[2], checkpointed[2])


def test_backward_reruns_the_function():
    calls = []

    def f(x, w):
        calls.append(1)
        return (x * w).tanh(), x.sum()

    w = dl.randn(3, requires_grad=True)
    a, b = checkpoint(f, dl.ones(3), w, use_reentrant=False)
    assert len(calls) == 1 and a.grad_fn is not None
    (a.sum() + b).backward()
    assert len(calls) == 2
    np.testing.assert_allclose(w.grad.numpy(), 1 - np.tanh(w.detach().numpy()) ** 2, rtol=1e-6)


def test_parameters_get_gradients_when_no_input_requires_grad():
    block = _block().eval()
    checkpoint(block, dl.randn(2, 4), use_reentrant=False).sum().backward()
    assert all(p.grad is not None for p in block.parameters())


def test_under_no_grad_it_is_the_plain_call():
    block = _block().eval()
    with dl.no_grad():
        y = checkpoint(block, dl.ones(2, 4), use_reentrant=False)
    assert y.grad_fn is None


def test_reentrant_variant_is_refused():
    with pytest.raises(NotImplementedError, match="use_reentrant=False"):
        checkpoint(lambda x: x, dl.ones(1), use_reentrant=True)


def test_compiled_call_runs_the_checkpoint_eagerly_with_one_break():
    block = _block().eval()

    def f(x):
        return checkpoint(block, x + 1, use_reentrant=False) * 2

    x = dl.randn(3, 4)
    before = dl.stats()
    compiled = dl.compile(f)
    np.testing.assert_array_equal(compiled(x).detach().numpy(), f(x).detach().numpy())
    assert_compiled(before, dl.stats(), expect_breaks=1)
