"""Gradient-mode context managers, re-exported from dynamo_lite.autograd for ``dl.nn`` users."""
from ..autograd.grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled  # noqa: F401
