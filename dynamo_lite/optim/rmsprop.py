"""RMSprop: gradients scaled by a running root-mean-square (optionally centered, with momentum)."""
from __future__ import annotations

from ..ops.core.api import tensor, zeros_like
from ..tensor.dtype import float32
from .optimizer import Optimizer, apply_update, check_non_negative, params_with_grad, step_under_no_grad


class RMSprop(Optimizer):
    """RMSprop (torch's single-tensor update rule).

    Example:
        >>> opt = dl.optim.RMSprop(model.parameters(), lr=1e-2, momentum=0.9, centered=True)
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False, differentiable=False):
        check_non_negative(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _state_of(self, param, group: dict) -> dict:
        state = self.state[param]
        if not state:
            state["step"] = tensor(0.0, dtype=float32)
            state["square_avg"] = zeros_like(param)
            if group["momentum"] > 0:
                state["momentum_buffer"] = zeros_like(param)
            if group["centered"]:
                state["grad_avg"] = zeros_like(param)
        return state

    @step_under_no_grad
    def step(self):
        for group in self.param_groups:
            lr, alpha, eps, momentum = group["lr"], group["alpha"], group["eps"], group["momentum"]
            for param, grad in params_with_grad(group):
                state = self._state_of(param, group)
                if group["maximize"]:
                    grad = -grad
                state["step"] += 1
                if group["weight_decay"] != 0:
                    grad = grad.add(param, alpha=group["weight_decay"])
                square_avg = state["square_avg"]
                square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
                if group["centered"]:
                    grad_avg = state["grad_avg"]
                    grad_avg.lerp_(grad, 1 - alpha)
                    avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
                else:
                    avg = square_avg.sqrt()
                avg = avg.add_(eps)
                if momentum > 0:
                    buf = state["momentum_buffer"]
                    buf.mul_(momentum).addcdiv_(grad, avg)
                    apply_update(param, buf, -lr)
                else:
                    apply_update(param, grad, -lr, avg)
