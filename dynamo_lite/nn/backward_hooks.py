"""Module backward hooks: the identity autograd nodes that hand a call's gradients to the hooks.

``register_full_backward_pre_hook``: ``hook(module, grad_output)`` runs when the gradients
w.r.t. the module's outputs are known and may return replacements. ``register_full_
backward_hook``: ``hook(module, grad_input, grad_output)`` runs when the gradients w.r.t.
the module's positional inputs are known (``None`` for inputs that are not tensors or do
not require grad) and may return a replacement ``grad_input``. Each hooked call wraps its
tensor inputs and outputs in an identity ``autograd.Function`` whose backward calls them.
"""
from __future__ import annotations

from ..autograd.function import Function
from ..tensor.tensor import Tensor


class _HookedIdentity(Function):
    """Returns its tensor arguments unchanged; backward passes the gradients to ``ctx.on_backward``."""

    @staticmethod
    def forward(ctx, *tensors):
        ctx.set_materialize_grads(False)
        ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        on_backward = getattr(ctx, "on_backward", None)
        return tuple(grads) if on_backward is None else on_backward(tuple(grads))


def _wrap(tensors: list, on_backward):
    """``tensors`` through one ``_HookedIdentity``: new tensors whose backward calls ``on_backward``."""
    outputs = _HookedIdentity.apply(*tensors)
    node = next((t.grad_fn for t in outputs if t.grad_fn is not None), None)
    if node is not None:
        node.on_backward = on_backward
    return outputs


class BackwardHookCall:
    """One module call's backward hooks: wraps its inputs and outputs, then runs the hooks in backward."""

    def __init__(self, module, hooks: list, pre_hooks: list):
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.n_inputs = 0
        self.input_positions = None  # positions of the tensor inputs that require grad, once wrapped
        self.grad_outputs = None

    def wrap_inputs(self, args: tuple) -> tuple:
        self.n_inputs = len(args)
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        if not any(args[i].requires_grad for i in positions) or not self.hooks:
            return args
        self.input_positions = positions
        wrapped = _wrap([args[i] for i in positions], self._input_backward)
        args = list(args)
        for i, t in zip(positions, wrapped):
            args[i] = t
        return tuple(args)

    def wrap_outputs(self, output):
        single = isinstance(output, Tensor)
        items = [output] if single else list(output) if isinstance(output, tuple) else None
        if items is None:
            return output
        positions = [i for i, o in enumerate(items) if isinstance(o, Tensor)]
        if not any(items[i].requires_grad for i in positions):
            return output
        wrapped = _wrap([items[i] for i in positions], self._output_backward)
        for i, t in zip(positions, wrapped):
            items[i] = t
        return items[0] if single else tuple(items)

    def _output_backward(self, grads: tuple) -> tuple:
        for hook in self.pre_hooks:
            result = hook(self.module, grads)
            if result is not None:
                result = result if isinstance(result, tuple) else (result,)
                if len(result) != len(grads):
                    raise RuntimeError(f"Backward pre hook returned an invalid number of grad_output, got "
                                       f"{len(result)}, but expected {len(grads)}")
                grads = result
        self.grad_outputs = grads
        if self.input_positions is None and self.hooks:  # no input needs a gradient: hooks run now
            nothing = (None,) * self.n_inputs
            for hook in self.hooks:
                result = hook(self.module, nothing, grads)
                if result is not None and not all(g is None for g in result):
                    raise RuntimeError("Backward hook for Modules where no input requires gradient should "
                                       "always return None or None for all gradients.")
        return grads

    def _input_backward(self, grads: tuple) -> tuple:
        grad_input = [None] * self.n_inputs
        for i, g in zip(self.input_positions, grads):
            grad_input[i] = g
        grad_input = tuple(grad_input)
        for hook in self.hooks:
            result = hook(self.module, grad_input, self.grad_outputs)
            if result is not None:
                result = result if isinstance(result, tuple) else (result,)
                if len(result) != len(grad_input):
                    raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got "
                                       f"{len(result)}, but expected {len(grad_input)}")
                grad_input = result
        return tuple(grad_input[i] for i in self.input_positions)
