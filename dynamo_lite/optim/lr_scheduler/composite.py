"""Schedulers made of schedulers: SequentialLR (one after another) and ChainedScheduler (all at once)."""
from __future__ import annotations

from bisect import bisect_right

from .base import LRScheduler, set_lr


class _Composite(LRScheduler):
    """What both composites share: checking their schedulers, and state dicts holding theirs."""

    _schedulers: list

    def _check(self, optimizer, schedulers) -> None:
        name = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(f"{name} expects at least one scheduler, but got no scheduler.")
        for index, scheduler in enumerate(schedulers):
            if scheduler.optimizer is not optimizer:
                raise ValueError(f"{name} expects all schedulers to belong to the same optimizer, but "
                                 f"got scheduler {type(scheduler).__name__} at index {index} has "
                                 f"{scheduler.optimizer}, which is different from {type(optimizer).__name__}.")

    def state_dict(self) -> dict:
        """The attributes, with each inner scheduler's own state dict."""
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [scheduler.state_dict() for scheduler in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore the attributes and each inner scheduler's state."""
        state_dict = dict(state_dict)
        inner = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        for scheduler, saved in zip(self._schedulers, inner):
            scheduler.load_state_dict(saved)


class SequentialLR(_Composite):
    """Run ``schedulers`` one after another, switching at the ``milestones`` epochs.

    Example:
        >>> warmup = LinearLR(opt, start_factor=0.1, total_iters=5)
        >>> decay = ExponentialLR(opt, gamma=0.9)
        >>> sched = SequentialLR(opt, [warmup, decay], milestones=[5])
    """

    def __init__(self, optimizer, schedulers, milestones, last_epoch: int = -1):
        self._check(optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError("Sequential Schedulers expects number of schedulers provided to be one more than "
                             f"the number of milestone points, but got number of schedulers {len(schedulers)} "
                             f"and the number of milestones to be equal to {len(milestones)}")
        self._schedulers = list(schedulers)
        self._milestones = list(milestones)
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            set_lr(group, group["initial_lr"])
        for scheduler in self._schedulers:  # undo the step each scheduler took when built
            scheduler.last_epoch -= 1
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def step(self) -> None:
        self.last_epoch += 1
        index = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[index]
        if index > 0 and self._milestones[index - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_Composite):
    """Step every scheduler in ``schedulers`` at once, each multiplying in its own factor.

    Example:
        >>> warmup = ConstantLR(opt, factor=0.1, total_iters=2)
        >>> decay = ExponentialLR(opt, gamma=0.9)
        >>> sched = ChainedScheduler([warmup, decay])
    """

    def __init__(self, schedulers, optimizer=None):
        schedulers = list(schedulers)
        if optimizer is None and schedulers:
            optimizer = schedulers[0].optimizer
        self._check(optimizer, schedulers)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = self._current_lrs()

    def step(self) -> None:
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = self._current_lrs()
