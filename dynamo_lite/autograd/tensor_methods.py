"""The autograd methods of Tensor: backward, retain_grad, register_hook, requires_grad_, detach_."""
from __future__ import annotations

import weakref

from ..tensor.rebinds import tensor_rebound
from ..tensor.tensor import Tensor
from . import engine
from .node import _RemovableHandle


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None) -> None:
    """Accumulate the gradient of this tensor into the ``.grad`` of the leaves it depends on.

    Args:
        gradient: the gradient of this tensor (needed unless it has one element).
        retain_graph: keep the graph's saved values for another backward (default: ``create_graph``).
        create_graph: record the backward pass too, for higher-order derivatives.
        inputs: accumulate only into these leaves.

    Example:
        >>> w = dl.tensor([1.0, 2.0], requires_grad=True)
        >>> (w * w).sum().backward()
        >>> w.grad
        tensor([2., 4.])
    """
    engine.backward((self,), None if gradient is None else (gradient,), retain_graph, create_graph, inputs)


def retain_grad(self) -> None:
    """Keep the gradient of this non-leaf tensor in ``.grad`` on backward.

    Example:
        >>> y = dl.ones(2, requires_grad=True) * 2
        >>> y.retain_grad(); y.sum().backward(); y.grad
        tensor([1., 1.])
    """
    if not self._requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if self._grad_fn is None:
        return
    self._meta().retains_grad = True
    self._grad_fn.retain(self.output_nr, weakref.ref(self))


def register_hook(self, hook):
    """Call ``hook(grad)`` with this tensor's gradient during backward; a returned tensor replaces it.

    Example:
        >>> w = dl.ones(2, requires_grad=True)
        >>> handle = w.register_hook(lambda g: g * 10)
    """
    if not self._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self._grad_fn is None:
        meta = self._meta()
        if type(meta.hooks) is not list:
            meta.hooks = []
        hooks = meta.hooks
        hooks.append(hook)
        return _RemovableHandle(hooks, hook)
    return self._grad_fn.register_prehook(hook, self.output_nr)


def register_post_accumulate_grad_hook(self, hook):
    """Call ``hook(tensor)`` on this leaf after backward accumulated a gradient into its ``.grad``.

    Example:
        >>> w = dl.ones(2, requires_grad=True)
        >>> handle = w.register_post_accumulate_grad_hook(lambda p: print(p.grad))
    """
    if not self._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self._grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    meta = self._meta()
    if type(meta.post_accumulate_hooks) is not list:
        meta.post_accumulate_hooks = []
    hooks = meta.post_accumulate_hooks
    hooks.append(hook)
    return _RemovableHandle(hooks, hook)


def requires_grad_(self, requires_grad: bool = True):
    """Set ``requires_grad`` in place and return this tensor.

    Example:
        >>> w = dl.zeros(3).requires_grad_()
        >>> w.requires_grad
        True
    """
    self.requires_grad = requires_grad
    return self


def detach_(self):
    """Make this tensor a leaf that does not require grad, in place.

    Example:
        >>> y = dl.ones(2, requires_grad=True) * 2
        >>> y.detach_().requires_grad
        False
    """
    if getattr(self, "_view_base", None) is not None and self._requires_grad:
        raise RuntimeError(
            "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel "
            "(DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP "
            "buckets, and hence detach_() cannot be called on these gradients. To fix this error, please "
            "refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution."
        )
    if self._requires_grad:
        tensor_rebound()  # compiled guards trust version tags for the flag (tensor/rebinds.py)
    self._grad_fn = None
    self._requires_grad = False
    return self


AUTOGRAD_METHODS = {
    "backward": backward,
    "retain_grad": retain_grad,
    "register_hook": register_hook,
    "register_post_accumulate_grad_hook": register_post_accumulate_grad_hook,
    "requires_grad_": requires_grad_,
    "detach_": detach_,
}


def install_autograd_methods(cls=Tensor) -> None:
    """Put the autograd methods on ``cls`` (ops installs the rest of the Tensor API)."""
    for name, fn in AUTOGRAD_METHODS.items():
        setattr(cls, name, fn)
