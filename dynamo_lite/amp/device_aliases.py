"""torch's per-device spellings of autocast and GradScaler (``dl.cpu.amp.autocast``,
``dl.cuda.amp.GradScaler`` ...): deprecated there, so they warn as torch does."""
from __future__ import annotations

import warnings

from ..tensor.dtype import bfloat16, float16
from .autocast_mode import autocast
from .grad_scaler import GradScaler

__all__ = ["CpuAutocast", "CpuGradScaler", "CudaAutocast", "CudaGradScaler"]


def _deprecated(spelling: str, replacement: str) -> None:
    """torch's FutureWarning; ``replacement`` is the call's start, e.g. ``torch.amp.autocast('cpu', ``."""
    warnings.warn(f"`{spelling}(args...)` is deprecated. Please use `{replacement}args...)` instead.",
                  FutureWarning, stacklevel=3)


class CpuAutocast(autocast):
    """``dl.cpu.amp.autocast``: ``dl.autocast("cpu", ...)``."""

    def __init__(self, enabled: bool = True, dtype=bfloat16, cache_enabled: bool = True):
        _deprecated("torch.cpu.amp.autocast", "torch.amp.autocast('cpu', ")
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class CudaAutocast(autocast):
    """``dl.cuda.amp.autocast``: ``dl.autocast("cuda", ...)``."""

    def __init__(self, enabled: bool = True, dtype=float16, cache_enabled: bool = True):
        _deprecated("torch.cuda.amp.autocast", "torch.amp.autocast('cuda', ")
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class CpuGradScaler(GradScaler):
    """``dl.cpu.amp.GradScaler``: ``dl.amp.GradScaler("cpu", ...)``."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True):
        _deprecated("torch.cpu.amp.GradScaler", "torch.amp.GradScaler('cpu', ")
        super().__init__("cpu", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


class CudaGradScaler(GradScaler):
    """``dl.cuda.amp.GradScaler``: ``dl.amp.GradScaler("cuda", ...)``."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True):
        _deprecated("torch.cuda.amp.GradScaler", "torch.amp.GradScaler('cuda', ")
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)
