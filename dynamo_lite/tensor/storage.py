"""Untyped flat byte storage on one device, shared by every view of it."""
from __future__ import annotations

import numpy as np

from .device import CPU, array_module, as_device


class Storage:
    """A flat ``uint8`` buffer (NumPy on CPU, CuPy on CUDA) plus a version counter.

    Every view of a tensor shares one Storage; in-place writes bump ``version`` so that
    all views observe the same ``_version``, as torch's shared version counter does.
    """

    __slots__ = ("data", "device", "version", "__weakref__")

    def __init__(self, data, device=CPU):
        self.data = data
        self.device = as_device(device)
        self.version = 0

    @classmethod
    def allocate(cls, nbytes: int, device=CPU) -> "Storage":
        dev = as_device(device)
        xp = array_module(dev)
        if dev.type == "cuda" and dev.index:
            with xp.cuda.Device(dev.index):  # CuPy allocates on the current device otherwise
                return cls(xp.empty(max(int(nbytes), 0), dtype=np.uint8), dev)
        return cls(xp.empty(max(int(nbytes), 0), dtype=np.uint8), dev)

    def nbytes(self) -> int:
        return int(self.data.nbytes)

    def data_ptr(self) -> int:
        if self.device.type == "cpu":
            return int(self.data.ctypes.data)
        return int(self.data.data.ptr)

    def __len__(self) -> int:
        return self.nbytes()

    def __repr__(self) -> str:
        return f"Storage(nbytes={self.nbytes()}, device={self.device})"
