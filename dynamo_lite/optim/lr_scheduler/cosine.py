"""Cosine annealing schedules: CosineAnnealingLR and CosineAnnealingWarmRestarts."""
from __future__ import annotations

import math

from .base import LRScheduler, set_lr


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from the base lr down to ``eta_min`` over ``T_max`` epochs.

    Example:
        >>> sched = dl.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=100, eta_min=1e-5)
    """

    def __init__(self, optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1):  # noqa: N803
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        epoch, t_max, eta_min = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return self._current_lrs()
        if self._step_count == 1 and epoch > 0:
            return [eta_min + (base_lr - eta_min) * (1 + math.cos(epoch * math.pi / t_max)) / 2
                    for base_lr in self.base_lrs]
        if (epoch - 1 - t_max) % (2 * t_max) == 0:
            return [lr + (base_lr - eta_min) * (1 - math.cos(math.pi / t_max)) / 2
                    for lr, base_lr in zip(self._current_lrs(), self.base_lrs)]
        ratio = (1 + math.cos(math.pi * epoch / t_max)) / (1 + math.cos(math.pi * (epoch - 1) / t_max))
        return [ratio * (lr - eta_min) + eta_min for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list:
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from the base lr to ``eta_min``, restarting after ``T_0`` epochs, then
    after ``T_0 * T_mult``, ``T_0 * T_mult ** 2``, ... epochs.

    Example:
        >>> sched = dl.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=10, T_mult=2)
        >>> for epoch in range(100):
        ...     for i, batch in enumerate(loader):
        ...         train(batch); sched.step(epoch + i / len(loader))   # fractional epochs are fine
    """

    def __init__(self, optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0, last_epoch: int = -1):  # noqa: N803
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        scale = (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
        return [self.eta_min + (base_lr - self.eta_min) * scale for base_lr in self.base_lrs]

    def step(self, epoch=None) -> None:
        """Advance one epoch, or go to ``epoch`` (a float: a fraction of the way through an epoch)."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur -= self.T_i
                self.T_i *= self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            self.T_cur, self.T_i = self._position(epoch)
        self._step_count += 1
        self.last_epoch = math.floor(epoch)
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            set_lr(group, lr)
        self._last_lr = self._current_lrs()

    def _position(self, epoch: float) -> tuple:
        """``(T_cur, T_i)`` at ``epoch``: the epochs into the current cycle and that cycle's length."""
        if epoch < self.T_0:
            return epoch, self.T_0
        if self.T_mult == 1:
            return epoch % self.T_0, self.T_0
        cycles = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
        start = self.T_0 * (self.T_mult ** cycles - 1) / (self.T_mult - 1)
        return epoch - start, self.T_0 * self.T_mult ** cycles
