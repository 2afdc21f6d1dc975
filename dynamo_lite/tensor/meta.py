"""TensorMeta: a tensor's shape, strides, dtype and device without any data."""
from __future__ import annotations

from . import layout
from .device import CPU, as_device
from .properties import TensorProperties
from .symint import SymInt


class TensorMeta(TensorProperties):
    """What an op produces, as the translator and meta rules see it.

    Example:
        >>> m = TensorMeta((2, 3), dl.float32)
        >>> m.stride()
        (3, 1)
    """

    __slots__ = ("_sizes", "_strides", "_offset", "_dtype", "_device")

    def __init__(self, shape, dtype, strides=None, device=CPU, storage_offset: int = 0):
        self._sizes = tuple(s if type(s) is SymInt else int(s) for s in shape)
        self._strides = layout.contiguous_strides(self._sizes) if strides is None else tuple(strides)
        if len(self._strides) != len(self._sizes):
            raise ValueError(f"strides {self._strides} do not match shape {self._sizes}")
        self._dtype = dtype
        self._device = as_device(device)
        self._offset = storage_offset

    @classmethod
    def from_geometry(cls, sizes: tuple, strides: tuple, dtype, device, storage_offset: int = 0) -> "TensorMeta":
        """A TensorMeta from geometry that is already normalized (int tuples, a device).

        The hot paths (eager dispatch, meta rules) build one per op, so this skips the
        checks and conversions of ``__init__``.
        """
        meta = object.__new__(cls)
        meta._sizes, meta._strides, meta._offset = sizes, strides, storage_offset
        meta._dtype, meta._device = dtype, device
        return meta

    @classmethod
    def of(cls, tensor) -> "TensorMeta":
        """The meta of a real Tensor (or a copy of another TensorMeta)."""
        meta = object.__new__(cls)  # from_geometry inline: autograd takes a few per recorded op
        meta._sizes, meta._strides, meta._offset = tensor._sizes, tensor._strides, tensor._offset
        meta._dtype, meta._device = tensor._dtype, tensor._device
        return meta

    def key(self) -> tuple:
        """Everything that decides an op's output meta, for guards and caches."""
        return (self._sizes, self._strides, self._dtype, self._device)

    def __eq__(self, other) -> bool:
        return isinstance(other, TensorMeta) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def __repr__(self) -> str:
        return (
            f"TensorMeta(shape={list(self._sizes)}, dtype={self._dtype.name}, "
            f"strides={list(self._strides)}, device={self._device})"
        )
