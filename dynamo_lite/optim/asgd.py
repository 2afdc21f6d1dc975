"""ASGD: SGD with a decaying step and a running (Polyak) average of the parameters in ``state["ax"]``."""
from __future__ import annotations

from ..ops.core.api import clamp_min, tensor, where, zeros_like
from ..ops.core.dispatch import is_tracing
from ..tensor.dtype import float32, float64
from .optimizer import Optimizer, apply_update, check_non_negative, params_with_grad, step_under_no_grad


def _read(state_value):
    """A state scalar as a number: a Python float eagerly, a float64 0-dim tensor in a compiled step
    (the same values; see NOTE: [Adam's step counter when compiled])."""
    return state_value.to(dtype=float64) if is_tracing() else state_value.item()


def _store(state_value, value) -> None:
    """Write a number (eager) or a 0-dim tensor (compiled) into a state scalar."""
    if isinstance(value, float):
        state_value.fill_(value)
    else:
        state_value.copy_(value)


def _rounded(value, param):
    """``value`` rounded to ``param``'s dtype as eager arithmetic rounds a Python number."""
    return value if isinstance(value, float) else value.to(dtype=param.dtype)


class ASGD(Optimizer):
    """Averaged stochastic gradient descent (torch's single-tensor update rule).

    The step is ``eta = lr / (1 + lambd * lr * t) ** alpha``; averaging starts after ``t0``
    steps (the average is ``state["ax"]``; the parameters themselves follow plain decayed SGD).

    Example:
        >>> opt = dl.optim.ASGD(model.parameters(), lr=1e-2, t0=100)
    """

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        check_non_negative(lr=lr, weight_decay=weight_decay)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def _state_of(self, param, lr) -> dict:
        state = self.state[param]
        if not state:
            state["step"] = tensor(0.0, dtype=float32)
            state["eta"] = tensor(float(lr), dtype=float32)
            state["mu"] = tensor(1.0, dtype=float32)
            state["ax"] = zeros_like(param)
        return state

    @step_under_no_grad
    def step(self):
        for group in self.param_groups:
            lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
            for param, grad in params_with_grad(group):
                state = self._state_of(param, lr)
                if group["maximize"]:
                    grad = -grad
                state["step"] += 1
                if group["weight_decay"] != 0:
                    grad = grad.add(param, alpha=group["weight_decay"])
                eta = _read(state["eta"])
                param.mul_(_rounded(1 - lambd * eta, param))
                apply_update(param, grad, _rounded(-eta, param))
                ax, mu = state["ax"], state["mu"]
                if is_tracing():  # before t0, mu is 1 and the average is the parameter itself
                    ax.copy_(where(mu != 1, ax + param.sub(ax).mul_(mu), param))
                elif mu.item() != 1:
                    ax.add_(param.sub(ax).mul_(mu))
                else:
                    ax.copy_(param)
                step = _read(state["step"])
                _store(state["eta"], lr / ((1 + lambd * lr * step) ** alpha))
                _store(mu, 1 / clamp_min(step - t0, 1) if is_tracing() else 1 / max(1, step - t0))
