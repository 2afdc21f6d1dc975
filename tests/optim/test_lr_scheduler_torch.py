"""Learning-rate schedulers against PyTorch-recorded sequences.

tests/optim/fixtures/schedulers.json was recorded by tests/optim/fixtures/record_optim.py
with PyTorch 2.13: for each scheduler spec, get_last_lr() after construction and after
each of 24 (optimizer.step(), scheduler.step()) pairs, and the optimizer's momentum (or
beta1) after each step (ChainedScheduler where the milestones are "chain"); and ReduceLROnPlateau's
lr after each of a fixed metric sequence. No torch here.
"""
from __future__ import annotations

import json
import math
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
    if milestones == "chain":
        return opt, lr_scheduler.ChainedScheduler(schedulers)
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


@pytest.mark.parametrize("name", sorted(RECORDED["plateaus"]))
def test_reduce_on_plateau_matches_torch(name):
    recorded = RECORDED["plateaus"][name]
    opt = optim.SGD([nn.Parameter(dl.zeros(2))], lr=0.1)
    scheduler = lr_scheduler.ReduceLROnPlateau(opt, **recorded["kwargs"])
    lrs = []
    for metric in RECORDED["plateau_metrics"]:
        opt.step()
        scheduler.step(dl.tensor(metric))  # a 0-d tensor metric, as a validation loss usually is
        lrs.append(scheduler.get_last_lr()[0])
    assert lrs == pytest.approx(recorded["lrs"], rel=1e-12)


@pytest.mark.parametrize("name", ["step", "cosine", "linear", "onecycle_sgd", "exponential", "warm_restarts",
                                  "cyclic_triangular2_adam", "chained", "polynomial"])
def test_scheduler_state_dict_resumes(name):
    opt, scheduler = build(name)
    run(opt, scheduler, 7)
    saved_sched, saved_opt = scheduler.state_dict(), opt.state_dict()
    own = saved_sched["_schedulers"][-1] if name == "chained" else saved_sched  # a chain keeps no epoch of its own
    assert "optimizer" not in saved_sched and own["last_epoch"] == 7
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
    with pytest.raises(ValueError, match="Constant multiplicative factor"):
        lr_scheduler.ConstantLR(opt, factor=1.5)
    with pytest.raises(ValueError, match="Expected positive integer T_0, but got 0"):
        lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=0)
    with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
        lr_scheduler.CyclicLR(opt, base_lr=0.1, max_lr=1.0, mode="sawtooth")
    with pytest.raises(ValueError, match="Factor should be < 1.0."):
        lr_scheduler.ReduceLROnPlateau(opt, factor=2.0)
    with pytest.raises(ValueError, match="mode average is unknown!"):
        lr_scheduler.ReduceLROnPlateau(opt, mode="average")
    with pytest.raises(ValueError, match="ChainedScheduler expects at least one scheduler"):
        lr_scheduler.ChainedScheduler([], optimizer=opt)


def test_warm_restarts_fractional_epochs_follow_the_cycle_lengths():
    """step(epoch) with a fraction (the per-batch use): the lr at epoch e is the cosine at e's place in its cycle,
    cycles T_0, T_0 * T_mult, ... long."""
    opt = optim.SGD([nn.Parameter(dl.zeros(1))], lr=1.0)
    scheduler = lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=3, eta_min=0.0)
    for epoch, (into_cycle, length) in [(0.5, (0.5, 2)), (2.0, (0.0, 6)), (5.0, (3.0, 6)), (8.5, (0.5, 18))]:
        scheduler.step(epoch)
        assert scheduler.get_last_lr()[0] == pytest.approx((1 + math.cos(math.pi * into_cycle / length)) / 2)
        assert scheduler.last_epoch == math.floor(epoch)


def test_reduce_on_plateau_state_dict_resumes_and_tensor_lr_is_written_in_place():
    opt = optim.SGD([nn.Parameter(dl.zeros(1))], lr=dl.tensor(0.1))
    lr_tensor = opt.param_groups[0]["lr"]
    scheduler = lr_scheduler.ReduceLROnPlateau(opt, patience=0, factor=0.5)
    for metric in (1.0, 1.0, 1.0):
        scheduler.step(metric)
    assert opt.param_groups[0]["lr"] is lr_tensor and float(lr_tensor) == pytest.approx(0.025)
    fresh = lr_scheduler.ReduceLROnPlateau(opt, mode="max", patience=5)
    fresh.load_state_dict(scheduler.state_dict())
    assert (fresh.mode, fresh.best, fresh.num_bad_epochs) == ("min", 1.0, 0)
    fresh.step(2.0)  # worse in "min" mode: the restored mode decides
    assert float(lr_tensor) == pytest.approx(0.0125)
