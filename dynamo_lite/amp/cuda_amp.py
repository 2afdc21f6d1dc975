"""dl.cuda.amp: torch.cuda.amp's deprecated spellings of autocast and GradScaler."""
from .device_aliases import CudaAutocast as autocast, CudaGradScaler as GradScaler  # noqa: N813

__all__ = ["GradScaler", "autocast"]
