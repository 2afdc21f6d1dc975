"""The autograd fields every Tensor carries: requires_grad, grad, grad_fn, is_leaf, data.

The tensor core only stores them (like torch's AutogradMeta on a TensorImpl); what
they mean is decided by ``dynamo_lite.autograd``, which records ``grad_fn`` nodes when
ops run and fills ``grad`` on backward. Rarely used fields live in one ``AutogradMeta``
made on demand, so a tensor that never meets autograd pays for two slots only.
"""
from __future__ import annotations

import threading

from .rebinds import tensor_rebound


class GradModeState(threading.local):
    """This thread's grad mode; ops record history only while ``enabled`` is True.

    Set through ``dynamo_lite.autograd.grad_mode`` (no_grad, enable_grad, inference_mode).
    """

    enabled = True
    inference = False


GRAD_MODE = GradModeState()


class AutogradMeta:
    """Per-tensor autograd state beyond ``requires_grad``/``grad_fn``.

    Attributes:
        grad: the accumulated gradient (a Tensor) or None.
        output_nr: which output of ``grad_fn`` this tensor is.
        retains_grad: ``retain_grad()`` was called on this non-leaf.
        grad_accumulator: the AccumulateGrad node of a leaf (one per leaf, made lazily).
        hooks: gradient hooks registered with ``register_hook``.
        post_accumulate_hooks: ``hook(tensor)`` after a gradient was accumulated into a leaf's ``.grad``.
        view_version: the storage version when autograd last set ``grad_fn`` (None: never).
        no_grad_view: a view of a tensor requiring grad, taken under no_grad.
    """

    __slots__ = ("grad", "output_nr", "retains_grad", "grad_accumulator", "hooks",
                 "post_accumulate_hooks", "view_version", "no_grad_view", "__weakref__")

    def __init__(self):
        self.grad = None
        self.output_nr = 0
        self.retains_grad = False
        self.grad_accumulator = None
        self.hooks = ()  # a list once a hook is registered (most tensors never get one)
        self.post_accumulate_hooks = ()
        self.view_version = None
        self.no_grad_view = False


def type_name(tensor) -> str:
    """torch's legacy type string of a tensor, as error messages show it (``FloatTensor``)."""
    names = {"float16": "Half", "float32": "Float", "float64": "Double", "int8": "Char", "int16": "Short",
             "int32": "Int", "int64": "Long", "uint8": "Byte", "bool": "Bool"}
    return names.get(tensor._dtype.name, tensor._dtype.name.capitalize()) + "Tensor"


class AutogradFields:
    """``requires_grad``, ``grad``, ``grad_fn``, ``is_leaf``, ``data`` of a Tensor.

    Subclasses set the slots ``_requires_grad`` (bool), ``_grad_fn`` and ``_autograd``
    (an AutogradMeta or None).

    Example:
        >>> w = dl.ones(3, requires_grad=True)
        >>> w.is_leaf, (w * 2).is_leaf
        (True, False)
    """

    __slots__ = ()

    def _meta(self) -> AutogradMeta:
        meta = self._autograd
        if meta is None:
            meta = self._autograd = AutogradMeta()
        return meta

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value) -> None:
        self._assign_requires_grad(value)

    def _assign_requires_grad(self, value, counted: bool = True) -> None:
        """Set ``requires_grad`` (a leaf's); ``counted=False`` for a tensor made just now,
        which no compiled guard has seen, so its first flag is no rebind to count."""
        value = bool(value)
        if self._grad_fn is not None:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if value and not (self._dtype.is_floating_point or self._dtype.is_complex):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        if counted and value is not self._requires_grad:
            tensor_rebound()  # compiled guards trust version tags for it (tensor/rebinds.py)
        self._requires_grad = value

    @property
    def grad_fn(self):
        return self._grad_fn

    @property
    def is_leaf(self) -> bool:
        return self._grad_fn is None

    @property
    def output_nr(self) -> int:
        return 0 if self._autograd is None else self._autograd.output_nr

    @property
    def retains_grad(self) -> bool:
        return self._autograd is not None and self._autograd.retains_grad

    @property
    def grad(self):
        return None if self._autograd is None else self._autograd.grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, AutogradFields):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}")
            if value._dtype is not self._dtype:
                raise RuntimeError("assigned grad has data of a different type")
            if value._sizes != self._sizes:
                raise RuntimeError("assigned grad has data of a different size")
        self._meta().grad = value

    @grad.deleter
    def grad(self) -> None:
        self._meta().grad = None

    @property
    def _base(self):
        """The tensor this view was taken from (None for a tensor that is not a view)."""
        return getattr(self, "_view_base", None)

    @property
    def data(self):
        """A tensor over the same storage that autograd does not track."""
        return self._plain_alias()

    @data.setter
    def data(self, value) -> None:
        self._set_data(value)
