"""dl.cpu.amp: torch.cpu.amp's deprecated spellings of autocast and GradScaler."""
from .device_aliases import CpuAutocast as autocast, CpuGradScaler as GradScaler  # noqa: N813

__all__ = ["GradScaler", "autocast"]
