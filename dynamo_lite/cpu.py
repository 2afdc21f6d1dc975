"""dl.cpu: what torch.cpu offers ported code (its amp spellings).

Example:
    >>> with dl.cpu.amp.autocast():  # FutureWarning: use dl.amp.autocast("cpu")
    ...     pass
"""
from .amp import cpu_amp as amp

__all__ = ["amp"]
