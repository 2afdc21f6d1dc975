"""Adagrad: per-coordinate learning rates from the running sum of squared gradients."""
from __future__ import annotations

from ..ops.core.api import full_like, tensor
from ..ops.core.dispatch import is_tracing
from ..tensor.dtype import float32, float64
from .optimizer import Optimizer, apply_update, check_non_negative, params_with_grad, step_under_no_grad


class Adagrad(Optimizer):
    """Adagrad (torch's single-tensor update rule); its state exists from construction.

    Example:
        >>> opt = dl.optim.Adagrad(model.parameters(), lr=1e-2, lr_decay=1e-4)
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        check_non_negative(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                           initial_accumulator_value=initial_accumulator_value, eps=eps)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for param in group["params"]:
                self.state[param]["step"] = tensor(0.0, dtype=float32)
                self.state[param]["sum"] = full_like(param, group["initial_accumulator_value"])

    @step_under_no_grad
    def step(self):
        for group in self.param_groups:
            lr, lr_decay, eps = group["lr"], group["lr_decay"], group["eps"]
            for param, grad in params_with_grad(group):
                state = self.state[param]
                state["step"] += 1
                # compiled: a float64 tensor from the counter, not .item() (NOTE: [Adam's step counter when compiled])
                step = state["step"].to(dtype=float64) if is_tracing() else state["step"].item()
                if group["maximize"]:
                    grad = -grad
                if group["weight_decay"] != 0:
                    grad = grad.add(param, alpha=group["weight_decay"])
                clr = lr / (1 + (step - 1) * lr_decay)
                state["sum"].addcmul_(grad, grad, value=1)
                std = state["sum"].sqrt().add_(eps)
                apply_update(param, grad, -clr, std)
