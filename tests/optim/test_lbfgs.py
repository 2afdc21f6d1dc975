"""optim.LBFGS (fixed step and strong-Wolfe line search, history_size) against torch's recorded trajectories.

``fixtures/lbfgs.npz`` / ``fixtures/lbfgs_calls.json`` were written by ``fixtures/record_lbfgs.py``
with PyTorch 2.13 (CPU), float64, from ``lbfgs_cases.py`` (the same code runs here on dynamo_lite).
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import dynamo_lite as dl

from . import lbfgs_cases as C

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
RECORDED = np.load(FIXTURES / "lbfgs.npz")
CALLS = json.loads((FIXTURES / "lbfgs_calls.json").read_text())


@pytest.mark.parametrize("name,kind,kwargs,steps", C.CASES, ids=[c[0] for c in C.CASES])
def test_trajectory_matches_torch(name, kind, kwargs, steps):
    trace, calls = C.run(dl, name, kind, kwargs, steps)
    np.testing.assert_allclose(trace, RECORDED[name], rtol=1e-9, atol=1e-12)
    assert calls == CALLS[name]


def test_errors():
    w = dl.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        dl.optim.LBFGS([w], line_search_fn="backtracking")
    with pytest.raises(ValueError, match="LBFGS doesn't support per-parameter options"):
        dl.optim.LBFGS([{"params": [w]}, {"params": [dl.zeros(1, requires_grad=True)]}])


def test_compiled_closure_matches_eager():
    """The closure's forward compiled: the same trajectory as the eager closure."""
    traces = []
    for compile_loss in (False, True):
        params, loss_fn = C.problem(dl, "regression")
        loss_fn = dl.compile(loss_fn, backend="numpy") if compile_loss else loss_fn
        optimizer = dl.optim.LBFGS(params, line_search_fn="strong_wolfe")

        def closure():
            optimizer.zero_grad()
            loss = loss_fn()
            loss.backward()
            return loss

        traces.append([float(optimizer.step(closure)) for _ in range(2)] + params[0].detach().reshape(-1).tolist())
    np.testing.assert_allclose(traces[1], traces[0], rtol=1e-10)
