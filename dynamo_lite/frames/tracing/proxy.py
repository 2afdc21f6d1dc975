"""ProxyTensor: a data-less Tensor standing for a graph node while a frame is traced."""
from __future__ import annotations

from ...tensor.meta import TensorMeta
from ...tensor.tensor import Tensor
from ..errors import Unsupported


DATA_HINT = "keep data-dependent Python (item(), tolist(), bool(), printing tensors) out of the hot path"


class DataDependent(Unsupported):
    """Library code needed the data of a traced tensor, which does not exist yet."""


class ProxyTensor(Tensor):
    """A Tensor with geometry but no storage; ops on it are recorded, not run.

    Library code (tensor methods, ``dl.*``, ``nn.functional``) runs unchanged on proxies
    (see NOTE: [tracing through library code] in ops/core/dispatch.py). Anything that needs
    the data (``item()``, ``bool()``, ``numpy()``) reaches ``_array`` and raises
    ``Unsupported``, which the translator turns into a graph break or a fallback.
    """

    __slots__ = ("node", "_meta_device")

    @classmethod
    def create(cls, node, meta: TensorMeta) -> "ProxyTensor":
        self = object.__new__(cls)
        self._storage = None
        self._sizes = meta._sizes
        self._strides = meta._strides
        self._offset = meta._offset
        self._dtype = meta._dtype
        self._meta_device = meta._device
        self._array_cache = None
        self._requires_grad, self._grad_fn, self._autograd = False, None, None
        self.node = node
        node.meta["val"] = meta
        return self

    @property
    def _device(self):
        return self._meta_device

    @property
    def _version(self) -> int:
        return 0

    def _bump_version(self) -> None:
        pass

    def _autograd_state(self, *args, **kwargs):
        raise Unsupported("autograd state or calls on a traced tensor (requires_grad, grad, grad_fn, backward ...) "
                          "run eagerly")

    # NOTE: [compiled graphs and autograd] what autograd sees of a value depends on the call,
    # not on the trace: reading or changing it is a graph break.
    requires_grad = grad = grad_fn = is_leaf = data = _base = output_nr = retains_grad = property(
        _autograd_state, _autograd_state)
    backward = retain_grad = register_hook = requires_grad_ = detach_ = _autograd_state

    def _array(self):
        raise DataDependent("an operation needs the value of a traced tensor (data-dependent)", hint=DATA_HINT)

    def untyped_storage(self):
        raise Unsupported("untyped_storage() of a traced tensor")

    def data_ptr(self) -> int:
        raise Unsupported("data_ptr() of a traced tensor")

    def _storage_memory(self, *args, **kwargs):
        raise Unsupported("resize_/share_memory_ replace a tensor's storage memory in place: they run eagerly")

    resize_ = resize_as_ = share_memory_ = is_shared = _storage_memory

    def __repr__(self) -> str:
        return f"ProxyTensor({self.node.name}, shape={list(self._sizes)}, dtype={self._dtype.name})"
