"""Shared harness of the train-step tests: one model trained eagerly and one compiled, compared call by call."""
from __future__ import annotations

import copy

import numpy as np

import dynamo_lite as dl
import dynamo_lite.nn.functional as F
from dynamo_lite import nn
from tests.helpers import assert_compiled


def make_train_step(model, optimizer, loss_fn, scheduler=None, set_to_none=True):
    """The train step under test: forward, loss, backward, step, zero_grad (and an lr schedule)."""

    def train_step(x, y):
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=set_to_none)
        if scheduler is not None:
            scheduler.step()
        return loss

    return train_step


def small_mlp():
    dl.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 4))


def regression_batches(n=3):
    dl.manual_seed(2)
    return [(dl.randn(8, 6), dl.randn(8, 4)) for _ in range(n)]


def cross_entropy(logits, targets):
    return F.cross_entropy(logits, targets)


def mse(out, target):
    return ((out - target) ** 2).mean()


def _values(tensor):
    return None if tensor is None else tensor.detach().numpy().copy()


def training_state(model, optimizer) -> dict:
    """Everything a step changes: parameters, their grads, the optimizer state and groups."""
    params = [p for group in optimizer.param_groups for p in group["params"]]
    state = []
    for p in params:
        entry = optimizer.state.get(p)
        state.append(None if entry is None else
                     {k: (_values(v) if isinstance(v, dl.Tensor) else v) for k, v in entry.items()})
    groups = [{k: v for k, v in g.items() if k != "params"} for g in optimizer.param_groups]
    return {"params": [_values(p) for p in model.parameters()],
            "grads": [_values(p.grad) for p in model.parameters()],
            "state": state, "groups": groups}


def assert_same_state(actual, expected, rtol=1e-5, atol=1e-6, where="") -> None:
    assert actual["groups"] == expected["groups"], f"{where}: param_groups differ"
    for kind in ("params", "grads"):
        for i, (a, e) in enumerate(zip(actual[kind], expected[kind])):
            assert (a is None) == (e is None), f"{where}: {kind}[{i}] is None in only one run"
            if a is not None:
                np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, err_msg=f"{where}: {kind}[{i}]")
    for i, (a, e) in enumerate(zip(actual["state"], expected["state"])):
        assert (a is None) == (e is None), f"{where}: state of param {i} exists in only one run"
        if a is None:
            continue
        assert list(a) == list(e), f"{where}: state keys of param {i}: {list(a)} != {list(e)}"
        for key in e:
            if isinstance(e[key], np.ndarray):
                np.testing.assert_allclose(a[key], e[key], rtol=rtol, atol=atol, err_msg=f"{where}: state {i} {key}")
                assert a[key].dtype == e[key].dtype
            else:
                assert a[key] == e[key] and type(a[key]) is type(e[key]), f"{where}: state {i} {key}"


def run_against_eager(make_model, make_optimizer, loss_fn, batches, *, make_scheduler=None, backend="eager",
                      expect_breaks=None, calls=20, set_to_none=True):
    """Train two copies of a model, one eagerly and one through ``dl.compile(train_step)``,
    and compare losses and every piece of training state after each call.

    Returns the compile counters' snapshot difference as (stats before, stats after).
    """
    eager_model = make_model()
    compiled_model = copy.deepcopy(eager_model)
    runs = []
    for model in (eager_model, compiled_model):
        optimizer = make_optimizer(model.parameters())
        scheduler = make_scheduler(optimizer) if make_scheduler is not None else None
        runs.append((model, optimizer, make_train_step(model, optimizer, loss_fn, scheduler, set_to_none)))
    (_, eager_opt, eager_step), (_, compiled_opt, step) = runs
    compiled = dl.compile(step, backend=backend)
    before = dl.stats()
    for call in range(calls):
        x, y = batches[call % len(batches)]
        expected = eager_step(x, y)
        actual = compiled(x, y)
        assert type(actual) is type(expected) and actual.shape == expected.shape
        assert actual.requires_grad == expected.requires_grad
        np.testing.assert_allclose(actual.detach().numpy(), expected.detach().numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=f"loss of call {call}")
        assert_same_state(training_state(compiled_model, compiled_opt), training_state(eager_model, eager_opt),
                          where=f"call {call}")
    after = dl.stats()
    assert_compiled(before, after, expect_breaks=after.graph_breaks - before.graph_breaks
                    if expect_breaks is None else expect_breaks)
    return before, after
