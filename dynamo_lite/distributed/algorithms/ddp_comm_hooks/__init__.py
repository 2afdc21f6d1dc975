"""DDP communication hooks: how a gradient bucket is reduced (``DistributedDataParallel.register_comm_hook``)."""
from . import default_hooks
from .default_hooks import allreduce_hook

__all__ = ["allreduce_hook", "default_hooks"]
