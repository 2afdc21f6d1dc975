"""Data parallelism: DistributedDataParallel (across processes) and DataParallel (one process on CPU)."""
from .data_parallel import DataParallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
