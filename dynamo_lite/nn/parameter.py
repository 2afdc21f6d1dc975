"""Parameter (a Module's learnable weight), its uninitialized placeholders, and Buffer."""
from __future__ import annotations

import copy

from ..tensor.dtype import get_default_dtype
from ..ops.core import api as ops
from ..tensor.tensor import Tensor, empty_strided


def _alias(tensor: Tensor, cls=Tensor) -> Tensor:
    """A new ``cls`` instance over ``tensor``'s storage and geometry (no data touched)."""
    return cls._make(tensor._storage, tensor._sizes, tensor._strides, tensor._offset, tensor._dtype)


class Parameter(Tensor):
    """A Tensor that is a module parameter: assigning it to a Module attribute registers it.

    The Parameter shares the storage of ``data`` (no copy), so writes through either are
    seen by both. A Parameter is a leaf of autograd and requires grad by default.

    Args:
        data: the initial value (a Tensor); an empty float tensor when omitted.
        requires_grad: whether autograd accumulates a ``.grad`` for it.

    Example:
        >>> w = dl.nn.Parameter(dl.zeros(2, 3))
        >>> w.shape, isinstance(w, dl.Tensor)
        (dl.Size([2, 3]), True)
    """

    def __new__(cls, data=None, requires_grad: bool = True):
        if data is None:
            data = empty_strided((0,), (1,), get_default_dtype())
        if not isinstance(data, Tensor):
            raise TypeError(
                f"Parameter(data) expects a dl.Tensor, but got {type(data).__name__}"
            )
        self = _alias(data, cls)
        if requires_grad and not (self._dtype.is_floating_point or self._dtype.is_complex):
            Tensor.requires_grad.fset(self, True)  # raises the error of a non-float tensor
        self._requires_grad = bool(requires_grad)  # a new Parameter: no guard has seen it, nothing to count
        return self

    def __init__(self, data=None, requires_grad: bool = True):
        # Tensor.__init__ refuses direct construction; __new__ already did the work.
        pass

    def _set_data(self, value: Tensor) -> None:
        """Rebind this Parameter (same Python object) to ``value``'s storage and geometry.

        Used by ``Module.to``/``float()``/``load_state_dict(assign=True)``: the object
        identity of a parameter survives dtype/device conversion, as users expect.
        """
        super()._set_data(value)  # counted there (NOTE: [module version tags])

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = Parameter(_alias(self).clone(), self._requires_grad)
        memo[id(self)] = result
        if self.grad is not None:
            result.grad = copy.deepcopy(self.grad, memo)
        return result

    def __reduce_ex__(self, protocol):
        return (Parameter, (_alias(self), self._requires_grad))

    __hash__ = Tensor.__hash__


_UNINITIALIZED_MESSAGE = ("Can't access the shape of an uninitialized parameter or buffer. This error usually "
                          "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
                          "initialized one. Call `forward` to initialize the parameters before accessing their "
                          "attributes.")


class UninitializedTensorMixin:
    """A placeholder tensor: ``materialize(shape)`` gives it storage and its concrete class."""

    cls_to_become = Tensor

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Allocate (uninitialized) storage of ``shape`` and become ``cls_to_become``."""
        device = self.device if device is None else device
        dtype = self.dtype if dtype is None else dtype
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self._set_data(ops.empty(shape, device=device, dtype=dtype))
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(_UNINITIALIZED_MESSAGE)

    def size(self, dim=None):
        raise RuntimeError(_UNINITIALIZED_MESSAGE)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    __str__ = __repr__


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter whose shape is not known yet (see the module docstring).

    Example:
        >>> p = dl.nn.UninitializedParameter()
        >>> p.materialize((2, 3)); type(p).__name__, p.shape
        ('Parameter', dl.Size([2, 3]))
    """

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None):
        return super().__new__(cls, ops.empty(0, device=device, dtype=dtype), requires_grad)

    def __init__(self, *args, **kwargs):
        pass

    def __deepcopy__(self, memo):
        return type(self)(self.requires_grad, self.device, self.dtype)

    __hash__ = Parameter.__hash__


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet."""

    def __new__(cls, requires_grad: bool = False, device=None, dtype=None):
        data = ops.empty(0, device=device, dtype=dtype)
        return cls._make(data._storage, data._sizes, data._strides, data._offset, data._dtype)

    def __init__(self, *args, **kwargs):
        pass

    __hash__ = Tensor.__hash__


class _BufferMeta(type(Tensor)):
    """``isinstance(t, Buffer)`` holds for the plain tensors that ``Buffer(...)`` marks."""

    def __instancecheck__(cls, instance) -> bool:
        if cls is Buffer:
            return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False) is True
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """A tensor to register as a Module buffer: ``self.x = nn.Buffer(t)`` in a Module.

    ``Buffer(data, persistent=True)`` returns ``data`` detached (a plain Tensor sharing its
    storage) marked so that assigning it to a Module attribute calls ``register_buffer``
    with ``persistent``. Non-persistent buffers stay out of ``state_dict()``.

    Example:
        >>> m = dl.nn.Module(); m.steps = dl.nn.Buffer(dl.zeros(()), persistent=False)
        >>> list(m.buffers()), list(m.state_dict())
        ([tensor(0.)], [])
    """

    def __new__(cls, data=None, *, persistent: bool = True):
        if data is None:
            data = ops.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer(data) expects a dl.Tensor, but got {type(data).__name__}")
        result = data.detach().requires_grad_(data.requires_grad)
        result.persistent = persistent
        result._is_buffer = True
        return result
