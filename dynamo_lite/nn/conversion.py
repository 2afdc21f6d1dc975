"""Module conversion: moving/casting every parameter and buffer (to, float, half, cuda ...)."""
from __future__ import annotations

from typing import Self

from ..tensor.dtype import bfloat16, dtype as DType, float16, float32, float64
from ..tensor.layout import _MemoryFormat
from ..tensor.tensor import Tensor
from .versioning import changed


class ConversionMixin:
    """``to`` / ``float`` / ``double`` / ``half`` / ``cpu`` / ``cuda`` for Module."""

    def _apply(self, fn) -> Self:
        """Replace every parameter's and buffer's value by ``fn(tensor)``, recursively.

        Parameters keep their object identity (their data is rebound), buffers are replaced.
        """
        for module in self.modules():
            for name, param in module._parameters.items():
                if param is not None:
                    new = fn(param)
                    if new is not param:
                        param._set_data(new)
            for name, buf in module._buffers.items():
                if buf is not None:
                    module._buffers[name] = fn(buf)
            changed(module)
        return self

    def share_memory(self) -> Self:
        """Move every parameter's and buffer's storage to shared memory (``Tensor.share_memory_``)."""
        return self._apply(lambda t: t.share_memory_())

    def to(self, *args, **kwargs) -> Self:
        """Move/cast parameters and buffers; returns ``self``.

        Accepts ``to(device)``, ``to(dtype)``, ``to(tensor)``, ``to(device, dtype)`` and
        the keywords ``device=``, ``dtype=``, ``memory_format=``. Only floating-point
        tensors change dtype; ``memory_format`` applies to 4-d tensors.

        Example:
            >>> m = dl.nn.Linear(2, 3).to(dl.float64)
            >>> m.weight.dtype
            dynamo_lite.float64
        """
        device, dtype, memory_format = _parse_to(args, kwargs)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(
                f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype={dtype}"
            )

        def convert(t):
            target_dtype = dtype if dtype is not None and t.is_floating_point() else None
            if memory_format is not None and t.dim() == 4:
                t = t.contiguous(memory_format=memory_format)
            if device is not None or target_dtype is not None:
                t = t.to(device=device, dtype=target_dtype)
            return t

        return self._apply(convert)

    def _cast_floating(self, dtype) -> Self:
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self) -> Self:
        """Cast floating-point parameters and buffers to float32."""
        return self._cast_floating(float32)

    def double(self) -> Self:
        """Cast floating-point parameters and buffers to float64."""
        return self._cast_floating(float64)

    def half(self) -> Self:
        """Cast floating-point parameters and buffers to float16."""
        return self._cast_floating(float16)

    def bfloat16(self) -> Self:
        """Cast floating-point parameters and buffers to bfloat16.

        Example:
            >>> dl.nn.Linear(2, 2).bfloat16().weight.dtype
            dynamo_lite.bfloat16
        """
        return self._cast_floating(bfloat16)

    def cpu(self) -> Self:
        return self.to(device="cpu")

    def cuda(self, device=None) -> Self:
        if device is None:
            device = "cuda"
        elif isinstance(device, int):
            device = f"cuda:{device}"
        return self.to(device=device)

    def requires_grad_(self, requires_grad: bool = True) -> Self:
        """Set ``requires_grad`` on every parameter (whether autograd computes its ``.grad``)."""
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the ``.grad`` of every parameter: to None, or to zeros in place.

        Example:
            >>> model.zero_grad()
        """
        for param in self.parameters():
            if param.grad is None:
                continue
            if set_to_none:
                param.grad = None
            else:
                param.grad.detach_().zero_()


def _parse_to(args, kwargs):
    """Split ``Module.to``'s flexible arguments into (device, dtype, memory_format)."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    memory_format = kwargs.pop("memory_format", None)
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for arg in args:
        if isinstance(arg, DType):
            dtype = arg
        elif isinstance(arg, Tensor):
            device, dtype = arg.device, arg.dtype
        elif isinstance(arg, _MemoryFormat):
            memory_format = arg
        elif isinstance(arg, bool):
            continue  # non_blocking passed positionally
        else:
            device = arg
    return device, dtype, memory_format
