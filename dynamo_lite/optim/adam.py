"""Adam and AdamW (decoupled weight decay), with AMSGrad and maximize."""
from __future__ import annotations


from ..ops.core.api import maximum, tensor, zeros_like
from ..ops.core.dispatch import is_tracing
from ..tensor.dtype import float32, float64
from .optimizer import Optimizer, apply_update, check_betas, check_non_negative, params_with_grad, step_under_no_grad


def bias_corrections(step_t, lr: float, beta1: float, beta2: float) -> tuple:
    """``(step size, sqrt of the second moment's bias correction)`` after step ``step_t``.

    NOTE: [Adam's step counter when compiled] Eager mode reads the step counter as a Python
    number (``.item()``) and computes both in double precision. A compiled step cannot read
    a value inside its graph, so there they are float64 0-dim tensors computed by the same
    formulas from the counter (exact: it holds a small integer). They equal eager's doubles
    up to the last bits of NumPy's pow (relative 1e-13 at worst, tested), far below the
    resolution of the parameter's dtype, to which both are rounded where they are used.
    """
    step = step_t.to(dtype=float64) if is_tracing() else step_t.item()
    return lr / (1 - beta1 ** step), (1 - beta2 ** step) ** 0.5


class Adam(Optimizer):
    """Adam (torch's single-tensor update rule and order of operations).

    ``decoupled_weight_decay=True`` makes it AdamW: the weight decay shrinks the
    parameter directly instead of being added to the gradient.

    Example:
        >>> opt = dl.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.99))
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False,
                 fused=None, decoupled_weight_decay=False):
        check_non_negative(lr=lr, eps=eps)
        check_betas(betas)
        check_non_negative(weight_decay=weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _state_of(self, param, amsgrad: bool) -> dict:
        state = self.state[param]
        if not state:
            state["step"] = tensor(0.0, dtype=float32)
            state["exp_avg"] = zeros_like(param)
            state["exp_avg_sq"] = zeros_like(param)
            if amsgrad:
                state["max_exp_avg_sq"] = zeros_like(param)
        return state

    @step_under_no_grad
    def step(self):
        for group in self.param_groups:
            lr, eps, weight_decay, amsgrad = group["lr"], group["eps"], group["weight_decay"], group["amsgrad"]
            beta1, beta2 = group["betas"]
            for param, grad in params_with_grad(group):
                state = self._state_of(param, amsgrad)
                if group["maximize"]:
                    grad = -grad
                state["step"] += 1
                step_size, bias_correction2_sqrt = bias_corrections(state["step"], lr, beta1, beta2)
                if weight_decay != 0:
                    if group["decoupled_weight_decay"]:
                        param.mul_(1 - lr * weight_decay)
                    else:
                        grad = grad.add(param, alpha=weight_decay)
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                if amsgrad:
                    max_sq = state["max_exp_avg_sq"]
                    max_sq.copy_(maximum(max_sq, exp_avg_sq))
                    exp_avg_sq = max_sq
                denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
                # a tensor step size when compiled (Adam's step counter) or with a tensor lr
                apply_update(param, exp_avg, -step_size, denom)


class AdamW(Adam):
    """Adam with decoupled weight decay (default ``weight_decay=1e-2``).

    Example:
        >>> opt = dl.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         amsgrad=amsgrad, foreach=foreach, maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused, decoupled_weight_decay=True)
