"""dl.autocast: a context manager (and decorator) running the matmul/convolution family in
lower precision on one device type (NOTE: [autocast] in ops/autocast/policy.py).

NOTE: [autocast in compiled code] Entering and leaving an autocast block are graph breaks
(dl.amp is in trace_rules.EAGER_MODULES): the block's code is traced in a resume function
while the state is on, so its casts are in that graph, and every translation is guarded on
the autocast state, so a graph traced without autocast never runs inside a block (or the reverse).
GradScaler's methods run eagerly too: ``step`` decides on values read from the gradients.
"""
from __future__ import annotations

import functools
import warnings

from ..ops.autocast.policy import SUPPORTED_DTYPES
from ..ops.autocast.state import AUTOCAST, DEFAULT_DTYPES
from ..tensor.device import cupy_module

__all__ = ["autocast", "get_autocast_dtype", "is_autocast_available", "is_autocast_enabled"]

#: the device types torch names in its error for an unknown one.
_TORCH_DEVICE_TYPES = ("cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, vulkan, "
                       "mps, meta, hpu, mtia, privateuseone")


def _check_device_type(device_type) -> str:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if device_type not in DEFAULT_DTYPES:
        raise RuntimeError(f"Expected one of {_TORCH_DEVICE_TYPES} device type at start of device string: "
                           f"{device_type}")
    return device_type


def cuda_usable() -> bool:
    """Whether CuPy imports and sees a CUDA device."""
    try:
        cupy_module()
    except RuntimeError:
        return False
    return True


def is_autocast_available(device_type: str) -> bool:
    """Whether ``dl.autocast`` supports ``device_type`` ("cpu" and "cuda")."""
    return device_type in DEFAULT_DTYPES


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for ``device_type`` (no argument: for "cuda", as torch).

    Example:
        >>> with dl.autocast("cpu"):
        ...     dl.is_autocast_enabled("cpu")
        True
    """
    return _check_device_type("cuda" if device_type is None else device_type) in AUTOCAST.dtypes


def get_autocast_dtype(device_type: str):
    """The dtype autocast uses (or would use) for ``device_type``.

    Example:
        >>> dl.get_autocast_dtype("cpu")
        dynamo_lite.bfloat16
    """
    return AUTOCAST.configured[_check_device_type(device_type)]


class autocast:  # noqa: N801  (torch's name)
    """Inside the block, ops on ``device_type`` tensors run in ``dtype`` (matmul, linear, convolutions
    ...) or in float32 (losses, ``prod``, linear algebra); others keep their inputs' dtype.

    Args:
        device_type: "cpu" or "cuda".
        dtype: bfloat16 (the CPU default) or float16 (the CUDA default).
        enabled: False makes the block change nothing (it also turns autocast off inside an
            enclosing block, as torch).
        cache_enabled: accepted for compatibility (casts are not cached).

    Example:
        >>> with dl.autocast("cpu"):
        ...     (dl.ones(2, 2) @ dl.ones(2, 2)).dtype
        dynamo_lite.bfloat16
    """

    def __init__(self, device_type: str, dtype=None, enabled: bool = True, cache_enabled=None):
        self.device_type = _check_device_type(device_type)
        self.fast_dtype = AUTOCAST.configured[device_type] if dtype is None else dtype
        self._enabled = enabled
        if enabled and device_type == "cuda" and not cuda_usable():
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", stacklevel=2)
            self._enabled = False
        elif enabled and self.fast_dtype not in SUPPORTED_DTYPES[device_type]:
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                          "CPU Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.",
                          stacklevel=2)
            self._enabled = False
        self._saved = []

    def __enter__(self):
        self._saved.append((AUTOCAST.dtypes, AUTOCAST.configured))
        dtypes = dict(AUTOCAST.dtypes)
        if self._enabled:
            dtypes[self.device_type] = self.fast_dtype
        else:
            dtypes.pop(self.device_type, None)
        AUTOCAST.set(dtypes, dict(AUTOCAST.configured, **{self.device_type: self.fast_dtype}))
        return self

    def __exit__(self, exc_type, exc, traceback) -> bool:
        AUTOCAST.set(*self._saved.pop())
        return False

    def __call__(self, fn):
        """Use as a decorator: ``fn`` runs inside this autocast."""

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)

        return wrapper
