"""Backends: compile a captured graph into a callable (registry in ``registry``)."""
from . import eager
from . import numpy  # registers "numpy", the default ("auto") backend on CPU
from . import native  # registers "native" (C kernels; used when asked for by name)
from . import cupy  # registers "cupy" (imports CuPy only when a graph is compiled)
from .native import get_num_threads, set_num_threads
from .registry import (
    AUTO, AutoBackend, BackendSpec, InvalidBackend, backend_spec, best_backend, list_backends,
    lookup_backend, register_backend, resolve_backend, unregister_backend,
)

__all__ = [
    "get_num_threads", "set_num_threads", "AUTO", "AutoBackend", "BackendSpec", "InvalidBackend", "backend_spec", "best_backend",
    "list_backends", "lookup_backend", "register_backend", "resolve_backend", "unregister_backend",
]
from . import cudnn, mps  # noqa: E402  (torch.backends flags for ported code)
from . import cuda_flags as cuda  # noqa: E402
