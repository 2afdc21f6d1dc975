"""A float lr that changes is lifted to a graph input: one recompile, not one per value (NOTE: [lifted floats])."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite import nn
from tests.helpers import assert_compiled
from tests.training.train_step_harness import (assert_same_state, make_train_step, mse, small_mlp,
                                               training_state)
from tests.training.train_step_harness import regression_batches as batches

OPTIMIZERS = {
    "sgd_momentum": lambda params: dl.optim.SGD(params, lr=0.05, momentum=0.9, weight_decay=1e-3),
    "sgd_nesterov": lambda params: dl.optim.SGD(params, lr=0.05, momentum=0.9, nesterov=True),
    "adam": lambda params: dl.optim.Adam(params, lr=1e-2),
    "adamw_amsgrad": lambda params: dl.optim.AdamW(params, lr=1e-2, weight_decay=0.1, amsgrad=True),
    "rmsprop_momentum": lambda params: dl.optim.RMSprop(params, lr=1e-2, momentum=0.5),
    "adagrad": lambda params: dl.optim.Adagrad(params, lr=0.1, lr_decay=1e-2),
}


def _two_runs(make_optimizer):
    eager_model = small_mlp()
    compiled_model = copy.deepcopy(eager_model)
    eager_opt, compiled_opt = make_optimizer(eager_model.parameters()), make_optimizer(compiled_model.parameters())
    eager_step = make_train_step(eager_model, eager_opt, mse)
    compiled = dl.compile(make_train_step(compiled_model, compiled_opt, mse))
    return (eager_model, eager_opt, eager_step), (compiled_model, compiled_opt, compiled)


def _lr_failures(before, after) -> list:
    return [f.reason for f in after.guard_failures[len(before.guard_failures):] if "'lr'" in f.reason]


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_a_float_lr_changed_every_step_compiles_at_most_twice(name):
    dl.reset()
    (eager_model, eager_opt, eager_step), (model, opt, compiled) = _two_runs(OPTIMIZERS[name])
    data = batches()
    before = dl.stats()
    for call in range(20):
        for optimizer in (eager_opt, opt):
            optimizer.param_groups[0]["lr"] = 0.02 * 0.9 ** call  # a new float on every step
        x, y = data[call % len(data)]
        np.testing.assert_allclose(compiled(x, y).item(), eager_step(x, y).item(), rtol=1e-5, atol=1e-7,
                                   err_msg=f"call {call}")
        assert_same_state(training_state(model, opt), training_state(eager_model, eager_opt), where=f"call {call}")
    after = dl.stats()
    assert_compiled(before, after, expect_breaks=1)
    # The forward once; the code after backward(): the first call (no state yet), then the
    # call that sees the state and a new lr, which lifts the lr. Never one per value.
    assert after.frames_compiled - before.frames_compiled == 3
    assert len(_lr_failures(before, after)) <= 1
    assert type(opt.param_groups[0]["lr"]) is float


def test_a_float_schedule_between_compiled_steps_recompiles_once():
    dl.reset()
    (eager_model, eager_opt, eager_step), (model, opt, compiled) = _two_runs(OPTIMIZERS["adam"])
    schedules = [dl.optim.lr_scheduler.CosineAnnealingLR(o, T_max=10) for o in (eager_opt, opt)]
    before = dl.stats()
    for call, (x, y) in enumerate(batches() * 4):
        np.testing.assert_allclose(compiled(x, y).item(), eager_step(x, y).item(), rtol=1e-5, err_msg=f"call {call}")
        for schedule in schedules:
            schedule.step()
        assert_same_state(training_state(model, opt), training_state(eager_model, eager_opt), where=f"call {call}")
    after = dl.stats()
    assert after.frames_compiled - before.frames_compiled <= 4
    assert len(_lr_failures(before, after)) <= 1


def test_dynamic_false_keeps_the_lr_a_guarded_constant():
    dl.reset()
    model = small_mlp()
    opt = dl.optim.SGD(model.parameters(), lr=0.1)
    compiled = dl.compile(make_train_step(model, opt, mse), dynamic=False)
    before = dl.stats()
    for call, (x, y) in enumerate(batches()):
        opt.param_groups[0]["lr"] = 0.1 / (call + 1)
        compiled(x, y)
    after = dl.stats()
    assert len(_lr_failures(before, after)) == 2


def test_a_lifted_float_behaves_as_the_float_it_holds(capsys):
    """Arithmetic stays in the graph; a branch, print and str specialize it (guarded, as without lifting)."""
    dl.reset()
    model = nn.Linear(3, 2)
    opt = dl.optim.SGD(model.parameters(), lr=0.1)
    log = []

    def step(x):
        lr = opt.param_groups[0]["lr"]
        scaled = x * lr + (1 - lr * 2) / 4
        x = x.mul(lr) - (-lr)
        if lr > 0.05:
            scaled = scaled + 1
        log.append(lr)
        print("lr", lr)
        return scaled, x, lr * 3, str(lr), type(lr) is float

    compiled = dl.compile(step, dynamic=True)
    x = dl.randn(4, 3)
    before = dl.stats()
    for lr in (0.1, 0.2, 0.01, 0.3):
        opt.param_groups[0]["lr"] = lr
        expected = step(x)
        eager_out = capsys.readouterr().out
        actual = compiled(x)
        assert capsys.readouterr().out == eager_out
        for e, a in zip(expected[:2], actual[:2]):
            np.testing.assert_array_equal(a.numpy(), e.numpy())
        assert actual[2:] == expected[2:] and type(actual[2]) is float
        assert log[-1] == log[-2] == lr and type(log[-1]) is float
    assert_compiled(before, dl.stats(), expect_breaks=dl.stats().graph_breaks - before.graph_breaks)
