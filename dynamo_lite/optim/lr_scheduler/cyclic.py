"""Cyclic schedules that also cycle momentum: OneCycleLR and CyclicLR."""
from __future__ import annotations

import math

from ..optimizer import Optimizer
from .base import LRScheduler, set_lr


def _anneal_cos(start: float, end: float, pct: float) -> float:
    return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)


def _anneal_linear(start: float, end: float, pct: float) -> float:
    return (end - start) * pct + start


_ANNEALERS = {"cos": _anneal_cos, "linear": _anneal_linear}


class _CyclesMomentum(LRScheduler):
    """What both cyclic schedules share: per-group settings and writing momentum (or Adam's beta1)."""

    use_beta1: bool

    def _per_group(self, name: str, value) -> list:
        count = len(self.optimizer.param_groups)
        if isinstance(value, (list, tuple)):
            if len(value) != count:
                raise ValueError(f"expected {count} values for {name}, got {len(value)}")
            return list(value)
        return [value] * count

    def _set_momentum(self, group: dict, momentum: float) -> None:
        if self.use_beta1:
            group["betas"] = (momentum, *group["betas"][1:])
        else:
            group["momentum"] = momentum

    def _start_momentum(self, optimizer, base_momentum, max_momentum, last_epoch: int) -> None:
        """Check the optimizer has a momentum; on a fresh start, set it to ``max_momentum`` and record both ends."""
        if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
            raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
        self.use_beta1 = "betas" in optimizer.defaults
        max_momentums = self._per_group("max_momentum", max_momentum)
        base_momentums = self._per_group("base_momentum", base_momentum)
        if last_epoch == -1:
            for high, low, group in zip(max_momentums, base_momentums, optimizer.param_groups):
                self._set_momentum(group, high)
                group["max_momentum"] = high
                group["base_momentum"] = low


class OneCycleLR(_CyclesMomentum):
    """The 1cycle policy: warm up to ``max_lr``, anneal far below the start, cycling momentum.

    Example:
        >>> sched = dl.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.01, total_steps=1000)
    """

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                 pct_start=0.3, anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85,
                 max_momentum=0.95, div_factor=25.0, final_div_factor=1e4, three_phase=False,
                 last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        self.total_steps = self._total_steps(total_steps, epochs, steps_per_epoch)
        if not 0 <= pct_start <= 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in _ANNEALERS:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        self._schedule_phases = self._phases(pct_start, three_phase)
        groups = optimizer.param_groups
        max_lrs = self._per_group("max_lr", max_lr)
        if last_epoch == -1:
            for lr, group in zip(max_lrs, groups):
                group["initial_lr"] = lr / div_factor
                group["max_lr"] = lr
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self._start_momentum(optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _total_steps(total_steps, epochs, steps_per_epoch) -> int:
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            return total_steps
        if epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
            return epochs * steps_per_epoch
        raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")

    def _phases(self, pct_start: float, three_phase: bool) -> list:
        total = self.total_steps
        warm_end = float(pct_start * total) - 1
        if three_phase:
            return [
                dict(end_step=warm_end, start_lr="initial_lr", end_lr="max_lr",
                     start_momentum="max_momentum", end_momentum="base_momentum"),
                dict(end_step=float(2 * pct_start * total) - 2, start_lr="max_lr", end_lr="initial_lr",
                     start_momentum="base_momentum", end_momentum="max_momentum"),
                dict(end_step=total - 1, start_lr="initial_lr", end_lr="min_lr",
                     start_momentum="max_momentum", end_momentum="max_momentum"),
            ]
        return [
            dict(end_step=warm_end, start_lr="initial_lr", end_lr="max_lr",
                 start_momentum="max_momentum", end_momentum="base_momentum"),
            dict(end_step=total - 1, start_lr="max_lr", end_lr="min_lr",
                 start_momentum="base_momentum", end_momentum="max_momentum"),
        ]

    def get_lr(self) -> list:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps is {self.total_steps}")
        anneal = _ANNEALERS[self._anneal_func_type]
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for index, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step <= end_step or index == len(self._schedule_phases) - 1:
                    pct = (step - start_step) / (end_step - start_step)
                    lrs.append(anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct))
                    if self.cycle_momentum:
                        self._set_momentum(group, anneal(group[phase["start_momentum"]],
                                                         group[phase["end_momentum"]], pct))
                    break
                start_step = end_step
        return lrs


_CYCLIC_MODES = {  # mode -> (scale function of the cycle number or the step, what it is applied to)
    "triangular": (lambda x: 1.0, "cycle"),
    "triangular2": (lambda x: 1 / (2.0 ** (x - 1)), "cycle"),
}


class CyclicLR(_CyclesMomentum):
    """Cycle the lr between ``base_lr`` and ``max_lr`` (up over ``step_size_up`` steps, down over
    ``step_size_down``), and momentum the other way between ``max_momentum`` and ``base_momentum``.

    Example:
        >>> sched = dl.optim.lr_scheduler.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=2000)
        >>> for batch in loader:
        ...     train(batch); sched.step()
    """

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None, mode="triangular",
                 gamma=1.0, scale_fn=None, scale_mode="cycle", cycle_momentum=True, base_momentum=0.8,
                 max_momentum=0.9, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        base_lrs = self._per_group("base_lr", base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                set_lr(group, lr)
        self.max_lrs = self._per_group("max_lr", max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in (*_CYCLIC_MODES, "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        if scale_fn is not None:
            self._scale_fn, self.scale_mode = scale_fn, scale_mode
        elif mode == "exp_range":
            self._scale_fn, self.scale_mode = (lambda x: gamma ** x), "iterations"
        else:
            self._scale_fn, self.scale_mode = _CYCLIC_MODES[mode]
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self._start_momentum(optimizer, base_momentum, max_momentum, last_epoch)
            self.base_momentums = self._per_group("base_momentum", base_momentum)
            self.max_momentums = self._per_group("max_momentum", max_momentum)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def scale_fn(self, x) -> float:
        """The amplitude factor at cycle (or step) ``x``."""
        return self._scale_fn(x)

    def get_lr(self) -> list:
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        rising = x <= self.step_ratio
        fraction = x / self.step_ratio if rising else (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base_lr + (max_lr - base_lr) * fraction * scale for base_lr, max_lr in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, low, high in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                self._set_momentum(group, high - (high - low) * fraction * scale)
        return lrs

    def state_dict(self) -> dict:
        """As the base, without the scale function (a lambda does not pickle); a user's callable object's
        state is kept as torch does."""
        state = super().state_dict()
        state.pop("_scale_fn", None)
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore the attributes, keeping this scheduler's scale function."""
        state_dict = {key: value for key, value in state_dict.items() if key != "_scale_fn"}
        super().load_state_dict(state_dict)
