"""Reverse-mode automatic differentiation over the op registry.

Importing this package plugs recording into eager dispatch (NOTE: [autograd hook] in
ops/core/dispatch.py) and puts ``backward``/``retain_grad``/... on Tensor. Each op's
derivative is an entry of the table in ``derivatives/`` (docs/training.md).
"""
from ..ops.core.dispatch import AUTOGRAD as _HOOK
from . import derivatives  # noqa: F401  (importing it fills the derivative table)
from .engine import backward, grad
from .function import Function, FunctionCtx
from .gradcheck import gradcheck, gradgradcheck
from .grad_mode import (
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad, set_grad_enabled,
)
from .node import Node
from .recording import record as _record
from .tensor_methods import install_autograd_methods

_HOOK.record = _record
install_autograd_methods()

__all__ = [
    "Function", "FunctionCtx", "Node", "backward", "enable_grad", "grad", "gradcheck", "gradgradcheck",
    "inference_mode", "is_grad_enabled", "is_inference_mode_enabled", "no_grad", "set_grad_enabled",
]
from . import functional  # noqa: E402  (dl.autograd.functional.jacobian / hessian / vjp / jvp / hvp / vhp)
from .anomaly_mode import (  # noqa: E402
    detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled, set_detect_anomaly,
)

__all__ += ["detect_anomaly", "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "set_detect_anomaly"]
