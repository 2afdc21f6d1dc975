"""Parameter: a Tensor that a Module registers as one of its learnable weights."""
from __future__ import annotations

import copy

from ..tensor.dtype import get_default_dtype
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
