"""Gradient clipping: clip_grad_norm_ (by total norm) and clip_grad_value_ (elementwise)."""
from __future__ import annotations

import math

from ..autograd.grad_mode import no_grad
from ..ops.core.api import clamp, stack, tensor
from ..tensor.tensor import Tensor


def _grads(parameters) -> list:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


@no_grad()
def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Scale the gradients so their joint norm is at most ``max_norm``; return that norm.

    The joint norm is the norm of the per-gradient norms (the norm of all gradients
    concatenated). ``foreach`` is accepted for compatibility (one loop serves both).

    Example:
        >>> loss.backward()
        >>> total = dl.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    """
    grads = _grads(parameters)
    max_norm, norm_type = float(max_norm), float(norm_type)
    if not grads:
        return tensor(0.0)
    total_norm = stack([g.norm(norm_type) for g in grads]).norm(norm_type)
    if error_if_nonfinite and not math.isfinite(total_norm.item()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is "
                           "non-finite, so it cannot be clipped. To disable this error and scale the "
                           "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
    coefficient = clamp(max_norm / (total_norm + 1e-6), max=1.0)
    for grad in grads:
        grad.mul_(coefficient)
    return total_norm


@no_grad()
def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every gradient elementwise into ``[-clip_value, clip_value]``.

    Example:
        >>> dl.nn.utils.clip_grad_value_(model.parameters(), clip_value=0.5)
    """
    clip_value = float(clip_value)
    for grad in _grads(parameters):
        grad.clamp_(min=-clip_value, max=clip_value)
