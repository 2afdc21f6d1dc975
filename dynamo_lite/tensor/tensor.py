"""The strided Tensor: a Storage plus sizes, strides (in elements), offset and dtype."""
from __future__ import annotations

import numpy as np

from . import layout
from .device import CPU, array_module, as_device
from .device import device as Device
from .dtype import DEFAULT as DEFAULT_DTYPE
from .dtype import dtype as DType
from .autograd_fields import GRAD_MODE, AutogradFields
from .properties import TensorProperties
from .resizing import StorageResizing
from .rebinds import tensor_rebound
from .storage import Storage


class _LegacyConstructor:
    """Where tensor/legacy.py installs ``dl.Tensor(...)``'s construction (it imports this module)."""

    new = None


LEGACY_CONSTRUCTOR = _LegacyConstructor()

NUMPY_REQUIRES_GRAD = "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."


class Tensor(AutogradFields, TensorProperties, StorageResizing):
    """An n-dimensional strided view over a Storage.

    Tensors are made by factories (``dl.tensor``, ``dl.zeros`` ...) or by views of other
    tensors; methods and operators route through the op registry (``dynamo_lite.ops``),
    which installs them on this class.

    Example:
        >>> t = dl.arange(6).view(2, 3)
        >>> t.t().stride()
        (1, 3)
    """

    __slots__ = ("_storage", "_sizes", "_strides", "_offset", "_dtype", "_array_cache",
                 "_requires_grad", "_grad_fn", "_autograd", "_view_base", "__weakref__", "__dict__")

    def __new__(cls, *args, **kwargs):
        """``dl.Tensor(data)``/``dl.Tensor(*sizes)``: torch's legacy constructor, in the default
        dtype (tensor/legacy.py); factories (``dl.tensor``, ``dl.empty`` ...) are the usual way."""
        if cls is not Tensor or LEGACY_CONSTRUCTOR.new is None:
            raise TypeError("create tensors with dl.tensor(...), dl.empty(...) or another factory")
        return LEGACY_CONSTRUCTOR.new(DEFAULT_DTYPE.value, args, kwargs)

    def __init__(self, *args, **kwargs):
        pass  # __new__ (or the factory) did the work

    @classmethod
    def _make(cls, storage: Storage, sizes, strides, offset: int, dtype: DType) -> "Tensor":
        self = object.__new__(cls)
        self._storage = storage
        self._sizes = tuple(sizes)
        self._strides = tuple(strides)
        self._offset = int(offset)
        self._dtype = dtype
        self._array_cache = None
        self._requires_grad = False
        self._grad_fn = None
        self._autograd = None
        self._view_base = None  # set: a read of an unset slot raises (and catches) an AttributeError
        return self

    @property
    def _device(self):
        return self._storage.device

    # -- storage access -------------------------------------------------------------
    def untyped_storage(self) -> Storage:
        return self._storage

    def data_ptr(self) -> int:
        return self._storage.data_ptr() + self._offset * self._dtype.itemsize

    @property
    def _version(self) -> int:
        return self._storage.version

    def _bump_version(self) -> None:
        self._storage.version += 1

    def _array(self):
        """A NumPy/CuPy array over exactly this tensor's strided window (no copy)."""
        arr = self._array_cache
        if arr is None:
            arr = self._array_cache = strided_array(
                self._storage, self._sizes, self._strides, self._offset, self._dtype
            )
        return arr

    def _view(self, sizes, strides, offset, dtype=None) -> "Tensor":
        """A new tensor over the same storage (the result of every view op); ``dtype`` for the
        views that reinterpret the elements (``view_as_real``: geometry in the new dtype's units).

        It remembers the tensor it views (``_view_base``, the first non-view tensor), so an
        in-place write through it can rewrite the base's autograd history.
        """
        view = Tensor._make(self._storage, sizes, strides, offset, self._dtype if dtype is None else dtype)
        base = getattr(self, "_view_base", None)
        view._view_base = self if base is None else base
        return view

    def _plain_alias(self) -> "Tensor":
        """A plain Tensor over the same storage and geometry, outside autograd (``.data``)."""
        return Tensor._make(self._storage, self._sizes, self._strides, self._offset, self._dtype)

    def _set_data(self, value: "Tensor") -> None:
        """Rebind this tensor (same Python object) to ``value``'s storage and geometry."""
        if not isinstance(value, Tensor):
            raise TypeError(f"Tensor data must be a dl.Tensor, got {type(value).__name__}")
        self._storage = value._storage
        self._sizes = value._sizes
        self._strides = value._strides
        self._offset = value._offset
        self._dtype = value._dtype
        self._array_cache = None
        tensor_rebound()  # guards trusting a version tag for the geometry see it (tensor/rebinds.py)

    # -- NumPy interop (zero-copy) ---------------------------------------------------
    def numpy(self, *, force: bool = False) -> np.ndarray:
        if self._dtype.name == "bfloat16":  # its array holds raw bits (NOTE: [bfloat16])
            raise TypeError("Got unsupported ScalarType BFloat16")
        if self._device.type != "cpu":
            if not force:
                raise TypeError(
                    f"can't convert {self._device} device type tensor to numpy. "
                    "Use Tensor.cpu() to copy the tensor to host memory first."
                )
            return self._array().get()
        if self._requires_grad and GRAD_MODE.enabled and not force:
            raise RuntimeError(NUMPY_REQUIRES_GRAD)
        return self._array()

    def __array__(self, dtype=None, copy=None):
        arr = self.numpy()
        if dtype is not None and np.dtype(dtype) != arr.dtype:
            return arr.astype(dtype)
        if copy:
            return arr.copy()
        return arr

    __hash__ = object.__hash__

    def __deepcopy__(self, memo):
        """A copy with its own storage; views copied together keep sharing one storage."""
        import copy

        if id(self) in memo:
            return memo[id(self)]
        if self._grad_fn is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                "protocol at the moment.  If you were attempting to deepcopy a module, this may be "
                "because of a torch.nn.utils.weight_norm usage, see "
                "https://github.com/pytorch/pytorch/pull/103001"
            )
        storage = memo.get(id(self._storage))
        if storage is None:
            storage = memo[id(self._storage)] = Storage(self._storage.data.copy(), self._storage.device)
        result = type(self)._make(storage, self._sizes, self._strides, self._offset, self._dtype)
        memo[id(self)] = result
        result._requires_grad = self._requires_grad
        if self.grad is not None:
            result.grad = copy.deepcopy(self.grad, memo)
        for key, value in self.__dict__.items():
            setattr(result, key, copy.deepcopy(value, memo))
        return result

    def __reduce_ex__(self, protocol):
        return (_rebuild, (type(self), self._storage.data.copy(), str(self._storage.device), self._sizes,
                           self._strides, self._offset, self._dtype.name, dict(self.__dict__),
                           self._requires_grad))


def _rebuild(cls, data, device, sizes, strides, offset, dtype_name, state, requires_grad=False):
    """Unpickle a tensor (see ``Tensor.__reduce_ex__``); a tensor in a graph comes back as a leaf."""
    from .dtype import _lookup_name

    result = cls._make(Storage(data, device), sizes, strides, offset, _lookup_name(dtype_name))
    result._requires_grad = requires_grad
    result.__dict__.update(state)
    return result


def strided_array(storage: Storage, sizes, strides, offset: int, dt: DType):
    """Build the array window of a strided tensor over ``storage``."""
    itemsize = dt.itemsize
    if layout.prod(sizes) == 0:
        xp = array_module(storage.device)
        return xp.empty(sizes, dtype=dt.numpy)
    byte_strides = tuple(s * itemsize for s in strides)
    if storage.device.type == "cpu":
        return np.ndarray(sizes, dt.numpy, buffer=storage.data, offset=offset * itemsize, strides=byte_strides)
    xp = array_module(storage.device)
    return xp.ndarray(sizes, dt.numpy, memptr=storage.data.data + offset * itemsize, strides=byte_strides)


def empty_strided(sizes, strides, dtype: DType, device=CPU) -> Tensor:
    """Allocate a tensor with the given geometry over fresh storage.

    Every eager op's output comes from here, so on CPU the array window is built once,
    with the buffer, and cached on the tensor.
    """
    if type(sizes) is not tuple or type(strides) is not tuple:
        sizes, strides = tuple(sizes), tuple(strides)
    elif device is CPU and strides == layout.int_contiguous_strides(sizes):  # the common output: no checks to make
        array = np.empty(sizes, dtype.numpy)
        if array.size:
            tensor = _new_cpu_tensor(array.reshape(-1).view(np.uint8), sizes, strides, dtype)
            tensor._array_cache = array
            return tensor
    numel, extent = 1, 1
    for size, stride in zip(sizes, strides):
        numel *= size
        extent += (size - 1) * stride
    if type(device) is not Device:
        device = as_device(device)
    if numel == 0 or device.type != "cpu":
        storage = Storage.allocate(extent * dtype.itemsize if numel else 0, device)
        return Tensor._make(storage, sizes, strides, 0, dtype)
    if extent == numel and strides == layout.contiguous_strides(sizes):
        array = np.empty(sizes, dtype.numpy)
        buffer = array.reshape(-1).view(np.uint8)
    else:
        itemsize = dtype.itemsize
        buffer = np.empty(extent * itemsize, np.uint8)
        array = np.ndarray(sizes, dtype.numpy, buffer, 0, tuple(s * itemsize for s in strides))
    tensor = Tensor._make(Storage(buffer, device), sizes, strides, 0, dtype)
    tensor._array_cache = array
    return tensor


def _new_cpu_tensor(buffer, sizes: tuple, strides: tuple, dtype: DType) -> Tensor:
    """``Tensor._make(Storage(buffer), sizes, strides, 0, dtype)`` for normalized CPU geometry."""
    storage = object.__new__(Storage)
    storage.data, storage.device, storage.version = buffer, CPU, 0
    self = object.__new__(Tensor)
    self._storage, self._sizes, self._strides, self._offset, self._dtype = storage, sizes, strides, 0, dtype
    self._array_cache = None
    self._requires_grad = False
    self._grad_fn = None
    self._autograd = None
    self._view_base = None
    return self


def empty_like_meta(meta) -> Tensor:
    """Allocate a tensor matching a TensorMeta's sizes, strides, dtype and device."""
    return empty_strided(meta._sizes, meta._strides, meta._dtype, meta._device)


def from_array(arr, device=None) -> Tensor:
    """Wrap a NumPy/CuPy array without copying (strides must be non-negative multiples of itemsize)."""
    from .dtype import from_numpy_dtype

    dt = from_numpy_dtype(arr.dtype)
    itemsize = arr.itemsize
    if any(s < 0 for s in arr.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with negative "
            "strides are not currently supported. (You can probably work around this by making a "
            "copy of your array with array.copy().)"
        )
    if any(s % itemsize for s in arr.strides):
        raise ValueError(
            f"given numpy array strides not a multiple of the element byte size ({itemsize}). "
            "Copy the numpy array to reallocate the memory."
        )
    strides = tuple(s // itemsize for s in arr.strides)
    dev = as_device(device) if device is not None else CPU
    if layout.prod(arr.shape) == 0:
        return empty_strided(arr.shape, strides, dt, dev)
    if dev.type == "cpu":
        # A flat uint8 view over the whole owning buffer keeps the memory alive and shared.
        low = arr.__array_interface__["data"][0]
        span = sum((n - 1) * s for n, s in zip(arr.shape, arr.strides)) + itemsize
        storage = Storage(_as_buffer(arr, low, low + span), dev)
        return Tensor._make(storage, arr.shape, strides, 0, dt)
    # CuPy: a flat uint8 array from the first element's pointer, sharing the allocation.
    xp = array_module(dev)
    span = sum((n - 1) * s for n, s in zip(arr.shape, arr.strides)) + itemsize
    flat = xp.ndarray((span,), dtype=np.uint8, memptr=arr.data)
    return Tensor._make(Storage(flat, dev), arr.shape, strides, 0, dt)


def _as_buffer(arr, low: int, high: int):
    """A writable uint8 array spanning [low, high) bytes of ``arr``'s memory, kept alive by it."""

    class _Holder:
        __array_interface__ = {
            "shape": (high - low,),
            "typestr": "|u1",
            "data": (low, not arr.flags.writeable),
            "version": 3,
        }
        keepalive = arr

    return np.asarray(_Holder())
