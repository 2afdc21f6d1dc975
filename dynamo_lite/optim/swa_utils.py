"""Stochastic weight averaging: AveragedModel (SWA and EMA averages), the SWALR schedule, update_bn."""
from __future__ import annotations

import copy
import itertools
import math

from ..autograd.grad_mode import no_grad
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.module import Module
from ..ops.core.api import tensor
from ..tensor.dtype import int64
from .lr_scheduler import LRScheduler

__all__ = ["AveragedModel", "SWALR", "get_ema_avg_fn", "get_ema_multi_avg_fn", "get_swa_avg_fn",
           "get_swa_multi_avg_fn", "update_bn"]


def _lerps(averaged) -> bool:
    """Floating and complex averages use lerp_ (torch's foreach path); integers a plain formula."""
    return averaged._dtype.is_floating_point or averaged._dtype.is_complex


def get_ema_multi_avg_fn(decay: float = 0.999):
    """An exponential moving average over lists of tensors: ``ema = decay * ema + (1 - decay) * current``.

    Example:
        >>> ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.99))
    """
    @no_grad()
    def ema_update(ema_params, current_params, num_averaged):
        for ema, current in zip(ema_params, current_params):
            if _lerps(ema):
                ema.lerp_(current, 1 - decay)
            else:
                ema.copy_(ema * decay + current * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """The running equal-weight average over lists of tensors: ``avg += (current - avg) / (n + 1)``."""
    @no_grad()
    def swa_update(averaged_params, current_params, num_averaged):
        weight = (1 / (num_averaged + 1)).item()  # computed as a tensor first, as torch does
        for averaged, current in zip(averaged_params, current_params):
            if _lerps(averaged):
                averaged.lerp_(current, weight)
            else:
                averaged.copy_(averaged + (current - averaged) / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay: float = 0.999):
    """The EMA of one tensor: returns ``decay * ema + (1 - decay) * current``."""
    @no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """The running average of one tensor: returns ``avg + (current - avg) / (n + 1)``."""
    @no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


def _group_by_device_and_dtype(averaged: list, current: list) -> dict:
    groups = {}
    for a, c in zip(averaged, current):
        pair = groups.setdefault((a.device, a.dtype), ([], []))
        pair[0].append(a)
        pair[1].append(c)
    return groups


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and, with ``use_buffers``, buffers) average the model's.

    ``update_parameters(model)`` folds the model's current values in: an equal-weight running
    average by default (SWA), or what ``avg_fn(avg, current, n)`` / ``multi_avg_fn(avgs,
    currents, n)`` computes (``get_ema_multi_avg_fn(decay)`` for an EMA). Without
    ``use_buffers`` the buffers are copied from the model on each update.

    Example:
        >>> swa_model = dl.optim.swa_utils.AveragedModel(model)
        >>> for epoch in range(10):
        ...     train_one_epoch(model); swa_model.update_parameters(model)
        >>> dl.optim.swa_utils.update_bn(loader, swa_model)
    """

    def __init__(self, model: Module, device=None, avg_fn=None, multi_avg_fn=None, use_buffers: bool = False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _averaged_tensors(self, model: Module):
        if self.use_buffers:
            return (itertools.chain(self.module.parameters(), self.module.buffers()),
                    itertools.chain(model.parameters(), model.buffers()))
        return self.parameters(), model.parameters()

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current parameters (and buffers with ``use_buffers``) into the average."""
        averaged, current = [], []
        first = bool(self.n_averaged == 0)
        for mine, theirs in zip(*self._averaged_tensors(model)):
            value = theirs.detach().to(mine.device)
            averaged.append(mine.detach())
            current.append(value)
            if first:
                mine.detach().copy_(value)
        if not first:
            if self.avg_fn is None:
                multi_avg_fn = self.multi_avg_fn or get_swa_multi_avg_fn()
                for (device, _), (mine, theirs) in _group_by_device_and_dtype(averaged, current).items():
                    if self.multi_avg_fn is None and device.type == "cpu":
                        self._update_each(get_swa_avg_fn(), mine, theirs)  # torch has no CPU foreach path
                    else:
                        multi_avg_fn(mine, theirs, self.n_averaged.to(device))
            else:
                self._update_each(self.avg_fn, averaged, current)
        if not self.use_buffers:  # keep the buffers in sync with the model
            for mine, theirs in zip(self.module.buffers(), model.buffers()):
                mine.detach().copy_(theirs.detach().to(mine.device))
        self.n_averaged += 1

    def _update_each(self, avg_fn, averaged, current) -> None:
        for mine, theirs in zip(averaged, current):
            mine.detach().copy_(avg_fn(mine.detach(), theirs, self.n_averaged.to(mine.device)))


@no_grad()
def update_bn(loader, model: Module, device=None) -> None:
    """Recompute the BatchNorm running statistics of ``model`` with one pass over ``loader``.

    The statistics become the plain average over the batches (momentum ``None``); a batch that
    is a list or tuple contributes its first element.

    Example:
        >>> dl.optim.swa_utils.update_bn(train_loader, swa_model)
    """
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        if device is not None:
            batch = batch.to(device)
        model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


def _per_group(name: str, optimizer, value) -> list:
    groups = optimizer.param_groups
    if isinstance(value, (list, tuple)):
        if len(value) != len(groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. {name} has "
                             f"{len(value)} values, param_groups has {len(groups)}.")
        return list(value)
    return [value] * len(groups)


class SWALR(LRScheduler):
    """Anneal each group's lr to ``swa_lr`` over ``anneal_epochs`` steps ("cos" or "linear"), then hold it.

    Example:
        >>> swa_scheduler = dl.optim.swa_utils.SWALR(optimizer, swa_lr=0.05, anneal_epochs=5)
        >>> for epoch in range(20):
        ...     train_one_epoch(); swa_scheduler.step()
    """

    def __init__(self, optimizer, swa_lr, anneal_epochs: int = 10, anneal_strategy: str = "cos",
                 last_epoch: int = -1):
        for value, group in zip(_per_group("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = value
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must by one of 'cos' or 'linear', instead got {anneal_strategy}")
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        """The lr the annealing started from, recovered from the current one (chainable form)."""
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list:
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [group["swa_lr"] * alpha + lr * (1 - alpha) for group, lr in zip(self.optimizer.param_groups, prev_lrs)]
