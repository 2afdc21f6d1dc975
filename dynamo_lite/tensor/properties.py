"""Shape/stride/dtype accessors shared by Tensor and TensorMeta."""
from __future__ import annotations

from . import layout
from .layout import Size
from .layout import strided as STRIDED


class TensorProperties:
    """Read-only geometry of a tensor: sizes, strides, offset, dtype, device.

    Subclasses set ``_sizes``, ``_strides``, ``_offset``, ``_dtype`` and ``_device``.
    """

    __slots__ = ()

    @property
    def shape(self) -> Size:
        return Size(self._sizes)

    def size(self, dim=None):
        if dim is None:
            return Size(self._sizes)
        return self._sizes[layout.normalize_dim(dim, len(self._sizes))]

    def stride(self, dim=None):
        if dim is None:
            return self._strides
        return self._strides[layout.normalize_dim(dim, len(self._sizes))]

    def storage_offset(self) -> int:
        return self._offset

    @property
    def dtype(self):
        return self._dtype

    @property
    def device(self):
        return self._device

    @property
    def ndim(self) -> int:
        return len(self._sizes)

    def dim(self) -> int:
        return len(self._sizes)

    def numel(self) -> int:
        return layout.prod(self._sizes)

    def nelement(self) -> int:
        return self.numel()

    def element_size(self) -> int:
        return self._dtype.itemsize

    def is_floating_point(self) -> bool:
        return self._dtype.is_floating_point

    @property
    def is_cuda(self) -> bool:
        return self._device.type == "cuda"

    def is_contiguous(self, memory_format=layout.contiguous_format) -> bool:
        if memory_format is layout.channels_last:
            return layout.is_channels_last_strides(self._sizes, self._strides)
        if memory_format is not layout.contiguous_format:
            raise TypeError(f"is_contiguous: unsupported memory format {memory_format!r}")
        return layout.is_contiguous_strides(self._sizes, self._strides)

    def suggest_memory_format(self):
        if len(self._sizes) == 4 and not self.is_contiguous() and self.is_contiguous(layout.channels_last):
            return layout.channels_last
        return layout.contiguous_format

    # (last: the name hides the layout module from the class body below it)
    @property
    def layout(self):
        """``dl.strided``: every tensor is a dense strided view."""
        return STRIDED
