"""dl.amp: mixed precision (``autocast``, ``GradScaler``), as torch.amp.

Example:
    >>> with dl.amp.autocast("cpu"):
    ...     dl.nn.functional.linear(dl.ones(2, 3), dl.ones(4, 3)).dtype
    dynamo_lite.bfloat16
"""
from .autocast_mode import autocast, get_autocast_dtype, is_autocast_available, is_autocast_enabled
from .grad_scaler import GradScaler, OptState

__all__ = ["GradScaler", "OptState", "autocast", "get_autocast_dtype", "is_autocast_available", "is_autocast_enabled"]
