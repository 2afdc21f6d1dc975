"""Type queries and legacy spellings: is_tensor, numel, is_floating_point, is_complex, Tensor.type(), Tensor.new()."""
from __future__ import annotations

from ...tensor import dtype as dtypes
from ...tensor.device import as_device
from ...tensor.dtype import as_dtype
from ...tensor.layout import Size
from ...tensor.properties import TensorProperties
from ..core import meta_rules as mr
from .conversions import to

__all__ = ["is_tensor", "numel", "is_floating_point", "is_complex", "is_nonzero"]

# torch's legacy tensor type names: "FloatTensor" ... (the names ``Tensor.type()`` returns).
LEGACY_TYPE_NAMES = {
    dtypes.float32: "FloatTensor", dtypes.float64: "DoubleTensor", dtypes.float16: "HalfTensor",
    dtypes.int64: "LongTensor", dtypes.int32: "IntTensor", dtypes.int16: "ShortTensor", dtypes.int8: "CharTensor",
    dtypes.uint8: "ByteTensor", dtypes.bool_: "BoolTensor", dtypes.complex64: "ComplexFloatTensor",
    dtypes.complex128: "ComplexDoubleTensor", dtypes.bfloat16: "BFloat16Tensor",
}
_BY_LEGACY_NAME = {name: dt for dt, name in LEGACY_TYPE_NAMES.items()}
TYPE_PREFIX = "dynamo_lite"


def _require_tensor(fn_name: str, value) -> None:
    if not isinstance(value, TensorProperties):
        raise TypeError(
            f"{fn_name}(): argument 'input' (position 1) must be Tensor, not {type(value).__name__}"
        )


def is_tensor(obj) -> bool:
    """Whether ``obj`` is a tensor.

    Example:
        >>> dl.is_tensor(dl.ones(1)), dl.is_tensor([1.0])
        (True, False)
    """
    return isinstance(obj, TensorProperties)


def numel(input) -> int:
    """The number of elements of ``input``.

    Example:
        >>> dl.numel(dl.ones(2, 3))
        6
    """
    _require_tensor("numel", input)
    return input.numel()


def is_floating_point(input) -> bool:
    """Whether ``input``'s dtype is a floating type (float16/32/64, bfloat16).

    Example:
        >>> dl.is_floating_point(dl.ones(1)), dl.is_floating_point(dl.tensor([1]))
        (True, False)
    """
    _require_tensor("is_floating_point", input)
    return input.dtype.is_floating_point


def is_complex(input) -> bool:
    """Whether ``input``'s dtype is a complex type.

    Example:
        >>> dl.is_complex(dl.ones(1))
        False
    """
    _require_tensor("is_complex", input)
    return input.dtype.is_complex


def is_nonzero(input) -> bool:
    """Whether a one-element tensor holds a nonzero value (reads the data)."""
    _require_tensor("is_nonzero", input)
    if input.numel() != 1:
        raise RuntimeError(
            "Boolean value of Tensor with no values is ambiguous" if input.numel() == 0
            else "Boolean value of Tensor with more than one value is ambiguous"
        )
    return bool(input.item())


def _type_name(self) -> str:
    device = "cuda." if self.device.type == "cuda" else ""
    return f"{TYPE_PREFIX}.{device}{LEGACY_TYPE_NAMES[self.dtype]}"


def _parse_type_name(name: str):
    """(dtype, device) of a legacy type name such as "torch.cuda.FloatTensor" (any package prefix)."""
    parts = name.split(".")
    dt = _BY_LEGACY_NAME.get(parts[-1])
    if dt is None or len(parts) > 3 or (len(parts) == 3 and parts[1] != "cuda"):
        raise ValueError(f"invalid type: '{name}'")
    return dt, ("cuda" if len(parts) == 3 else "cpu")


def type_(self, dtype=None, non_blocking=False, **kwargs):
    """With no argument, the legacy type name (``"dynamo_lite.FloatTensor"``); else ``self``
    converted to ``dtype`` (a dtype or a legacy name such as ``"torch.LongTensor"``).

    Example:
        >>> dl.ones(1).type(), dl.ones(1).type(dl.int64).dtype
        ('dynamo_lite.FloatTensor', dynamo_lite.int64)
    """
    if dtype is None:
        return _type_name(self)
    if isinstance(dtype, str):
        dt, device = _parse_type_name(dtype)
        return to(self, device=device, dtype=dt)
    return to(self, as_dtype(dtype))


def ndimension(self) -> int:
    """``self.dim()``, the legacy spelling."""
    return self.dim()


def _is_complex_method(self) -> bool:
    return self.dtype.is_complex


def new(self, *args, device=None, **kwargs):
    """Legacy constructor of a tensor with ``self``'s dtype and device: ``new(2, 3)`` or
    ``new(size)`` give an uninitialized tensor of that size, ``new([1, 2])`` a copy of data,
    ``new()`` an empty tensor.

    Example:
        >>> dl.ones(1, dtype=dl.int32).new([2, 3]).tolist()
        [2, 3]
    """
    from .factories import empty, tensor

    if kwargs:
        raise TypeError(f"new() got an unexpected keyword argument '{next(iter(kwargs))}'")
    device = self.device if device is None else as_device(device)
    if not args:
        return empty(0, dtype=self.dtype, device=device)
    if len(args) == 1 and isinstance(args[0], Size):
        return empty(tuple(args[0]), dtype=self.dtype, device=device)
    if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        return empty(args, dtype=self.dtype, device=device)
    if len(args) == 1:
        if mr.is_tensor(args[0]):
            return args[0]  # torch's legacy new(tensor) returns the same storage's tensor
        return tensor(args[0], dtype=self.dtype, device=device)
    raise TypeError(f"new() received an invalid combination of arguments: {args!r}")


METHODS = {
    "type": type_, "ndimension": ndimension, "is_complex": _is_complex_method, "new": new,
    "is_nonzero": is_nonzero,
}
