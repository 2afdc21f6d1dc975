"""utils.checkpoint: recompute a function's activations in backward instead of keeping them.

NOTE: [checkpoint] ``checkpoint(fn, *args)`` runs ``fn`` once, records which leaves (the
parameters ``fn`` reads) its result depends on, and then lets go of every intermediate
tensor: the result hangs off one autograd node whose inputs are ``args``' tensors and
those leaves. Its backward runs ``fn`` again with grad enabled (on the random state the
first run saw) and differentiates that run. Parameters used inside ``fn`` get gradients
even when no input requires grad (``use_reentrant=False`` semantics). Compiled code runs a
checkpoint eagerly (one graph break: its backward node cannot live in a graph).
"""
from __future__ import annotations

from ..autograd.engine import grad as autograd_grad
from ..autograd.function import Function
from ..autograd.grad_mode import GRAD_MODE, enable_grad
from ..autograd.node import AccumulateGrad
from ..tensor.generator import default_generator
from ..tensor.tensor import Tensor

__all__ = ["checkpoint"]


def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
    """``function(*args, **kwargs)``, keeping none of its intermediate tensors for backward
    (they are recomputed when the gradient is needed); see NOTE: [checkpoint].

    Args:
        function: returns a tensor or a tuple of tensors.
        use_reentrant: False (or None) only: the reentrant variant is not provided.
        preserve_rng_state: recompute with the random state of the first run (dropout agrees).

    Example:
        >>> y = dl.utils.checkpoint.checkpoint(block, x, use_reentrant=False)
        >>> y.sum().backward()   # block's activations are recomputed here
    """
    if use_reentrant:
        raise NotImplementedError("dl.utils.checkpoint supports use_reentrant=False only")
    if not GRAD_MODE.enabled:
        return function(*args, **kwargs)
    state = default_generator.get_state() if preserve_rng_state else None
    result = function(*args, **kwargs)
    outputs = list(result) if isinstance(result, tuple) else [result]
    if not all(isinstance(o, Tensor) for o in outputs):
        raise TypeError("checkpoint: the function must return a tensor or a tuple of tensors")
    inputs = [a for a in args if isinstance(a, Tensor)]
    leaves = _leaves_reached(outputs, inputs)
    if not any(o._requires_grad for o in outputs):
        return result
    run = _Run(function, args, kwargs, state, [o.detach() for o in outputs], inputs, leaves, isinstance(result, tuple))
    del outputs, result  # the first run's graph (its activations) is released here
    return _Recompute.apply(run, *inputs, *leaves)


class _Run:
    """What backward needs to run the function again."""

    def __init__(self, function, args, kwargs, rng_state, outputs, inputs, leaves, many):
        self.function, self.args, self.kwargs, self.rng_state = function, args, kwargs, rng_state
        self.outputs, self.input_count, self.leaves, self.many = outputs, len(inputs), leaves, many


def _leaves_reached(outputs, inputs) -> list:
    """The leaves requiring grad that ``outputs`` depend on, not through ``inputs`` (their own edges)."""
    boundary = {id(t._grad_fn) for t in inputs if t._grad_fn is not None} | {id(t) for t in inputs}
    pending = [o._grad_fn for o in outputs if o._grad_fn is not None]
    seen, leaves = set(), []
    while pending:
        node = pending.pop()
        if node is None or id(node) in seen or id(node) in boundary:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            if id(node.variable) not in boundary:
                leaves.append(node.variable)
            continue
        pending.extend(next_node for next_node, _ in node.next_functions)
    return leaves


class _Recompute(Function):
    """The one autograd node of a checkpointed call (NOTE: [checkpoint])."""

    @staticmethod
    def forward(ctx, run, *tensors):
        ctx.run = run
        ctx.save_for_backward(*tensors[:run.input_count])
        return tuple(run.outputs) if run.many else run.outputs[0]

    @staticmethod
    def backward(ctx, *grads):
        run = ctx.run
        inputs = [t.detach().requires_grad_(t._requires_grad) for t in ctx.saved_tensors]
        replaced = iter(inputs)
        args = [next(replaced) if isinstance(a, Tensor) else a for a in run.args]
        leaves = run.leaves
        current = default_generator.get_state()
        if run.rng_state is not None:
            default_generator.set_state(run.rng_state)
        try:
            with enable_grad():
                result = run.function(*args, **run.kwargs)
        finally:
            default_generator.set_state(current)
        outputs = list(result) if isinstance(result, tuple) else [result]
        differentiable = [(o, g) for o, g in zip(outputs, grads) if o._requires_grad and g is not None]
        targets = [t for t in inputs if t._requires_grad] + leaves
        found = iter(autograd_grad([o for o, _ in differentiable], targets, [g for _, g in differentiable],
                                   allow_unused=True) if differentiable and targets else [None] * len(targets))
        input_grads = [next(found) if t._requires_grad else None for t in inputs]
        return (None, *input_grads, *found)
