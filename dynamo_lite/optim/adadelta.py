"""Adadelta: steps scaled by the ratio of running RMS of past updates and of gradients (no learning-rate tuning)."""
from __future__ import annotations

from ..ops.core.api import tensor, zeros_like
from ..tensor.dtype import float32
from .optimizer import Optimizer, apply_update, check_non_negative, params_with_grad, step_under_no_grad


class Adadelta(Optimizer):
    """Adadelta (torch's single-tensor update rule).

    Example:
        >>> opt = dl.optim.Adadelta(model.parameters(), lr=1.0, rho=0.9)
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        check_non_negative(lr=lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_non_negative(eps=eps, weight_decay=weight_decay)
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      capturable=capturable, foreach=foreach, differentiable=differentiable))

    def _state_of(self, param) -> dict:
        state = self.state[param]
        if not state:
            state["step"] = tensor(0.0, dtype=float32)
            state["square_avg"] = zeros_like(param)
            state["acc_delta"] = zeros_like(param)
        return state

    @step_under_no_grad
    def step(self):
        for group in self.param_groups:
            rho, eps = group["rho"], group["eps"]
            for param, grad in params_with_grad(group):
                state = self._state_of(param)
                state["step"] += 1
                if group["maximize"]:
                    grad = -grad
                if group["weight_decay"] != 0:
                    grad = grad.add(param, alpha=group["weight_decay"])
                square_avg, acc_delta = state["square_avg"], state["acc_delta"]
                square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
                std = square_avg.add(eps).sqrt_()
                delta = acc_delta.add(eps).sqrt_().div_(std).mul_(grad)
                acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
                apply_update(param, delta, -group["lr"])
