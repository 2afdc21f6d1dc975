"""Learning-rate schedulers against PyTorch-recorded sequences.

tests/optim/fixtures/schedulers.json was recorded by tests/optim/fixtures/record_optim.py
with PyTorch 2.13: for each scheduler spec, get_last_lr() after construction and after
each of 24 (optimizer.step(), scheduler.step()) pairs, and the optimizer's momentum (or
beta1) after each step. No torch here.
"""
from __future__ import annotations

import json
import pathlib

import pytest

import dynamo_lite as dl
from dynamo_lite import nn, optim
from dynamo_lite.optim import lr_scheduler

RECORDED = json.loads((pathlib.Path(__file__).parent / "fixtures" / "schedulers.json").read_text())


def build(name: str):
    opt_cls, specs, milestones = RECORDED["specs"][name]
    extra = {"momentum": 0.9} if opt_cls == "SGD" else {}
    opt = getattr(optim, opt_cls)([nn.Parameter(dl.zeros(2))], lr=0.1, **extra)
    schedulers = []
    for cls, kwargs in specs:
        kwargs = dict(kwargs)
        if "lr_lambda" in kwargs:
            assert kwargs["lr_lambda"] == "0.95 ** epoch"
            kwargs["lr_lambda"] = lambda epoch: 0.95 ** epoch
        schedulers.append(getattr(lr_scheduler, cls)(opt, **kwargs))
    if milestones is None:
        return opt, schedulers[0]
    return opt, lr_scheduler.SequentialLR(opt, schedulers, milestones)


def run(opt, scheduler, steps: int) -> tuple:
    lrs, momenta = [], []
    for _ in range(steps):
        opt.step()
        scheduler.step()
        lrs.append(scheduler.get_last_lr()[0])
        group = opt.param_groups[0]
        momenta.append(group["betas"][0] if "betas" in group else group["momentum"])
    return lrs, momenta


@pytest.mark.parametrize("name", sorted(RECORDED["runs"]))
def test_lr_sequence_matches_torch(name):
    opt, scheduler = build(name)
    first = scheduler.get_last_lr()[0]
    lrs, momenta = run(opt, scheduler, 24)
    expected = RECORDED["runs"][name]
    assert [first, *lrs] == pytest.approx(expected["lrs"], rel=1e-12, abs=1e-15)
    assert momenta == pytest.approx(expected["momenta"], rel=1e-12)
    assert opt.param_groups[0]["lr"] == lrs[-1]


@pytest.mark.parametrize("name", ["step", "cosine", "linear", "onecycle_sgd", "exponential"])
def test_scheduler_state_dict_resumes(name):
    opt, scheduler = build(name)
    run(opt, scheduler, 7)
    saved_sched, saved_opt = scheduler.state_dict(), opt.state_dict()
    assert "optimizer" not in saved_sched and saved_sched["last_epoch"] == 7
    rest, _ = run(opt, scheduler, 10)
    fresh_opt, fresh = build(name)
    fresh_opt.load_state_dict(saved_opt)
    fresh.load_state_dict(saved_sched)
    assert run(fresh_opt, fresh, 10)[0] == rest


def test_onecycle_overrun_and_bad_arguments_raise_like_torch():
    opt, scheduler = build("onecycle_sgd")
    run(opt, scheduler, 24)
    with pytest.raises(ValueError, match="Tried to step 26 times. The specified number of total steps is 25"):
        run(opt, scheduler, 2)
    with pytest.raises(ValueError, match="You must define either total_steps OR"):
        lr_scheduler.OneCycleLR(opt, max_lr=0.1)
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        lr_scheduler.OneCycleLR(optim.Adagrad([nn.Parameter(dl.zeros(1))]), max_lr=0.1, total_steps=5)
    with pytest.raises(ValueError, match="Starting multiplicative factor"):
        lr_scheduler.LinearLR(opt, start_factor=0)
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        lr_scheduler.StepLR([], step_size=1)
