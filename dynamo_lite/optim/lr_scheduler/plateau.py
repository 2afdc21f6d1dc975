"""ReduceLROnPlateau: cut the lr when a watched metric stops improving."""
from __future__ import annotations

import math
import warnings

from ..optimizer import Optimizer
from .base import LRScheduler, set_lr

# (mode, threshold_mode) -> is `value` better than `best` by more than `threshold`
_IMPROVES = {
    ("min", "rel"): lambda value, best, threshold: value < best * (1.0 - threshold),
    ("min", "abs"): lambda value, best, threshold: value < best - threshold,
    ("max", "rel"): lambda value, best, threshold: value > best * (threshold + 1.0),
    ("max", "abs"): lambda value, best, threshold: value > best + threshold,
}


class ReduceLROnPlateau(LRScheduler):
    """Multiply the lr by ``factor`` (not below ``min_lr``) once the metric passed to ``step``
    has not improved for more than ``patience`` steps; then wait ``cooldown`` steps.

    Example:
        >>> sched = dl.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", patience=3)
        >>> for epoch in range(100):
        ...     train(); sched.step(validation_loss())
    """

    def __init__(self, optimizer, mode: str = "min", factor: float = 0.1, patience: int = 10,
                 threshold: float = 1e-4, threshold_mode: str = "rel", cooldown: int = 0, min_lr=0,
                 eps: float = 1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.factor = factor
        self.optimizer = optimizer
        count = len(optimizer.param_groups)
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != count:
                raise ValueError(f"expected {count} min_lrs, got {len(min_lr)}")
            self.default_min_lr, self.min_lrs = None, list(min_lr)
        else:
            self.default_min_lr, self.min_lrs = min_lr, [min_lr] * count
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode
        self._check_modes()
        self.last_epoch = 0
        self._step_count = 0
        self._last_lr = self._current_lrs()
        self._reset()

    def _check_modes(self) -> None:
        if self.mode not in ("min", "max"):
            raise ValueError("mode " + self.mode + " is unknown!")
        if self.threshold_mode not in ("rel", "abs"):
            raise ValueError("threshold mode " + self.threshold_mode + " is unknown!")
        self.mode_worse = math.inf if self.mode == "min" else -math.inf

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    @property
    def in_cooldown(self) -> bool:
        """Whether the scheduler is waiting out its cooldown after a cut."""
        return self.cooldown_counter > 0

    def is_better(self, value: float, best: float) -> bool:
        """Whether ``value`` improves on ``best`` by more than the threshold."""
        return _IMPROVES[self.mode, self.threshold_mode](value, best, self.threshold)

    def step(self, metrics, epoch=None) -> None:
        """Record this step's metric and cut the lr if it has plateaued."""
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn("The epoch parameter in `scheduler.step()` is deprecated", UserWarning, stacklevel=2)
        self.last_epoch = epoch
        self._step_count += 1
        if self.is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = self._current_lrs()

    def _reduce_lr(self) -> None:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError("The number of param groups in the `optimizer` "
                                   f"({len(groups)}) differs from when `ReduceLROnPlateau` was initialized "
                                   f"({len(self.min_lrs)}), usually due to a new param group being added to the "
                                   "optimizer. Please modify the `min_lrs` field to match the length of the "
                                   "`optimizer` param groups.")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, min_lr in zip(groups, self.min_lrs):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, min_lr)
            if old_lr - new_lr > self.eps:
                set_lr(group, new_lr)

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore the attributes (the comparison follows the restored mode)."""
        super().load_state_dict(state_dict)
        self._check_modes()
