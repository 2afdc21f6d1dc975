"""Rprop: per-element step sizes that grow while the gradient keeps its sign and shrink when it flips."""
from __future__ import annotations

from ..ops.core.api import full_like, tensor, where, zeros_like
from ..tensor.dtype import float32
from .optimizer import Optimizer, check_non_negative, params_with_grad, step_under_no_grad


class Rprop(Optimizer):
    """Resilient backpropagation (torch's single-tensor update rule): only the gradient's sign is used.

    Args:
        etas: ``(etaminus, etaplus)``: the step size factors after a sign flip and after a kept sign.
        step_sizes: ``(min, max)`` step size.

    Example:
        >>> opt = dl.optim.Rprop(model.parameters(), lr=1e-2, etas=(0.5, 1.2))
    """

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        check_non_negative(lr=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))

    def _state_of(self, param, lr) -> dict:
        state = self.state[param]
        if not state:
            state["step"] = tensor(0.0, dtype=float32)
            state["prev"] = zeros_like(param)
            state["step_size"] = full_like(param, lr)
        return state

    @step_under_no_grad
    def step(self):
        for group in self.param_groups:
            etaminus, etaplus = group["etas"]
            smallest, largest = group["step_sizes"]
            for param, grad in params_with_grad(group):
                state = self._state_of(param, group["lr"])
                state["step"] += 1
                if group["maximize"]:
                    grad = -grad
                sign = grad.mul(state["prev"]).sign()
                factor = where(sign > 0, etaplus, where(sign < 0, etaminus, 1.0)).to(param.dtype)
                state["step_size"].mul_(factor).clamp_(smallest, largest)
                grad = where(sign < 0, 0.0, grad).to(param.dtype)  # after a flip: no step, no memory of it
                param.addcmul_(grad.sign(), state["step_size"], value=-1)
                state["prev"].copy_(grad)
