"""Adamax, NAdam and RAdam: Adam's relatives, in torch's single-tensor update rules."""
from __future__ import annotations

from ..ops.core.api import maximum, ones, tensor, where, zeros_like
from ..ops.core.dispatch import is_tracing
from ..tensor.dtype import float32, float64
from .optimizer import Optimizer, apply_update, check_betas, check_non_negative, params_with_grad, step_under_no_grad


def _value(counter):
    """A state counter as a number: a Python float eagerly, a float64 0-dim tensor in a compiled
    step (NOTE: [Adam's step counter when compiled])."""
    return counter.to(dtype=float64) if is_tracing() else counter.item()


def _decayed_grad(param, grad, group):
    """The gradient after ``maximize`` and (coupled) weight decay; decoupled decay shrinks ``param``."""
    if group["maximize"]:
        grad = -grad
    if group["weight_decay"] != 0:
        if group.get("decoupled_weight_decay"):
            param.mul_(1 - group["lr"] * group["weight_decay"])
        else:
            grad = grad.add(param, alpha=group["weight_decay"])
    return grad


class _AdamFamily(Optimizer):
    """The shared constructor checks and lazily created state of the Adam relatives."""

    def __init__(self, params, defaults):
        check_non_negative(lr=defaults["lr"], eps=defaults["eps"], weight_decay=defaults["weight_decay"])
        check_betas(defaults["betas"])
        super().__init__(params, defaults)

    def _state_of(self, param) -> dict:
        state = self.state[param]
        if not state:
            state["step"] = tensor(0.0, dtype=float32)
            state.update(self._initial_state(param))
        return state


class Adamax(_AdamFamily):
    """Adamax: Adam with the infinity norm of past gradients in place of the second moment.

    Example:
        >>> opt = dl.optim.Adamax(model.parameters(), lr=2e-3)
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, capturable=capturable))

    def _initial_state(self, param) -> dict:
        return {"exp_avg": zeros_like(param), "exp_inf": zeros_like(param)}

    @step_under_no_grad
    def step(self):
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for param, grad in params_with_grad(group):
                state = self._state_of(param)
                state["step"] += 1
                grad = _decayed_grad(param, grad, group)
                state["exp_avg"].lerp_(grad, 1 - beta1)
                state["exp_inf"].copy_(maximum(state["exp_inf"].mul_(beta2), grad.abs().add_(group["eps"])))
                step_size = group["lr"] / (1 - beta1 ** _value(state["step"]))
                apply_update(param, state["exp_avg"], -step_size, state["exp_inf"])


class NAdam(_AdamFamily):
    """NAdam: Adam with Nesterov momentum and a warming momentum schedule (``momentum_decay``).

    Example:
        >>> opt = dl.optim.NAdam(model.parameters(), lr=2e-3, momentum_decay=4e-3)
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        check_non_negative(momentum_decay=momentum_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                      foreach=foreach, maximize=maximize, capturable=capturable,
                                      differentiable=differentiable))

    def _initial_state(self, param) -> dict:
        return {"mu_product": ones((), dtype=float32), "exp_avg": zeros_like(param), "exp_avg_sq": zeros_like(param)}

    @step_under_no_grad
    def step(self):
        for group in self.param_groups:
            lr, (beta1, beta2), decay = group["lr"], group["betas"], group["momentum_decay"]
            for param, grad in params_with_grad(group):
                state = self._state_of(param)
                state["step"] += 1
                step = _value(state["step"])
                grad = _decayed_grad(param, grad, group)
                mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * decay))
                mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * decay))
                # a float32 factor, as eager's Python float is taken (a float64 tensor would round once more)
                state["mu_product"] *= mu.to(dtype=float32) if is_tracing() else mu
                mu_product = _value(state["mu_product"])
                state["exp_avg"].lerp_(grad, 1 - beta1)
                state["exp_avg_sq"].mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                denom = state["exp_avg_sq"].div(1 - beta2 ** step).sqrt().add_(group["eps"])
                apply_update(param, grad, -lr * (1.0 - mu) / (1.0 - mu_product), denom)
                apply_update(param, state["exp_avg"], -lr * mu_next / (1.0 - mu_product * mu_next), denom)


class RAdam(_AdamFamily):
    """RAdam: Adam whose adaptive step is rectified by the variance of its second moment estimate
    (plain momentum SGD while that estimate is unreliable, the first few steps).

    Example:
        >>> opt = dl.optim.RAdam(model.parameters(), lr=1e-3)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      decoupled_weight_decay=decoupled_weight_decay, foreach=foreach,
                                      maximize=maximize, capturable=capturable, differentiable=differentiable))

    def _initial_state(self, param) -> dict:
        return {"exp_avg": zeros_like(param), "exp_avg_sq": zeros_like(param)}

    @step_under_no_grad
    def step(self):
        for group in self.param_groups:
            lr, (beta1, beta2) = group["lr"], group["betas"]
            rho_inf = 2 / (1 - beta2) - 1
            for param, grad in params_with_grad(group):
                state = self._state_of(param)
                state["step"] += 1
                step = _value(state["step"])
                grad = _decayed_grad(param, grad, group)
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                corrected_avg = exp_avg / (1 - beta1 ** step)
                bias_correction2 = 1 - beta2 ** step
                rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
                plain = corrected_avg * lr
                if is_tracing() or rho_t > 5.0:
                    rect = (abs((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))) ** 0.5
                    adaptive_lr = bias_correction2 ** 0.5 / exp_avg_sq.sqrt().add_(group["eps"])
                    rectified = corrected_avg * lr * adaptive_lr * rect
                    # compiled: both updates are computed and the counter picks one (no branch on a value)
                    plain = where(rho_t > 5.0, rectified, plain) if is_tracing() else rectified
                param.add_(plain, alpha=-1.0)
