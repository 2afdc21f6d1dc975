"""The LRScheduler base: step counting, writing each group's lr, state dicts."""
from __future__ import annotations

import warnings

from ...tensor.tensor import Tensor
from ..optimizer import Optimizer


def _snapshot(lr):
    """A value that later schedule steps leave alone (a tensor lr is updated in place)."""
    return lr.clone() if isinstance(lr, Tensor) else lr


def set_lr(group: dict, lr) -> None:
    """Write ``lr`` into a param group: into a tensor lr in place (NOTE: [tensor learning
    rate] in optimizer.py: compiled steps read it at run time), else by rebinding the key."""
    current = group["lr"]
    if isinstance(current, Tensor):
        current.fill_(lr)
    else:
        group["lr"] = lr


class LRScheduler:
    """Base of the schedulers: ``step()`` advances ``last_epoch`` and writes each group's lr.

    Subclasses implement ``get_lr`` in the chainable form (from the groups' current lr)
    and may add ``_get_closed_form_lr`` (from ``base_lrs``) for ``step(epoch)``.

    Example:
        >>> sched = dl.optim.lr_scheduler.StepLR(opt, step_size=10, gamma=0.5)
        >>> for epoch in range(30):
        ...     train_one_epoch(); sched.step()
    """

    _is_initial = False

    def __init__(self, optimizer, last_epoch: int = -1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        for index, group in enumerate(optimizer.param_groups):
            if last_epoch == -1:
                group.setdefault("initial_lr", _snapshot(group["lr"]))
            elif "initial_lr" not in group:
                raise KeyError(f"param 'initial_lr' is not specified in param_groups[{index}] "
                               "when resuming scheduler with last_epoch >= 0.")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def _current_lrs(self) -> list:
        return [_snapshot(group["lr"]) for group in self.optimizer.param_groups]

    def get_lr(self) -> list:
        """The learning rates of the step being taken (chainable form)."""
        raise NotImplementedError

    def get_last_lr(self) -> list:
        """The learning rates the last ``step`` set, one per parameter group."""
        return self._last_lr

    def step(self, epoch=None) -> None:
        """Advance one step (or jump to ``epoch``, deprecated) and update the groups' lr."""
        self._step_count += 1
        if epoch is not None:
            warnings.warn("The epoch parameter in `scheduler.step()` is deprecated", UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch) -> None:
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            closed_form = getattr(self, "_get_closed_form_lr", None)
            values = closed_form() if closed_form is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            set_lr(group, lr)
        self._last_lr = self._current_lrs()

    def state_dict(self) -> dict:
        """Every attribute except the optimizer."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore the attributes saved by :meth:`state_dict`."""
        self.__dict__.update(state_dict)
