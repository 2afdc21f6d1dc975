"""Autograd attributes of the tensors a frame holds: ``.grad`` read and written, the rest guarded or a break.

NOTE: [autograd attributes in compiled frames] A train step reads and writes autograd
state of tensors it did not create: ``p.grad`` of every parameter (the optimizer),
``p.grad = None`` (``zero_grad``). For a tensor read from the frame (it has a source
and a real value), such state is data like any other: ``p.grad`` becomes a graph input
(source ``p.grad``, guarded like every input tensor) or the constant None (guarded
``p.grad is None``); ``p.grad = value`` is a side effect replayed after the graph, in
program order, through the real setter (so eager's checks run); ``requires_grad``,
``grad_fn is None`` and ``is_leaf`` are guarded constants. A tensor computed inside the
graph has no such state yet (autograd has not run), so reading it is a graph break, and
``backward()`` always is one: it runs the autograd engine.
"""
from __future__ import annotations

from ...errors import Unsupported
from .. import guards as G
from ..sources import AttrSource
from .base import ConstantVariable

#: Why calling these on a tensor in a compiled frame breaks the graph.
BREAKING_METHODS = {
    "backward": "backward() runs the autograd engine (eagerly, between the compiled graphs before and after it)",
    "retain_grad": "retain_grad() changes autograd state of a tensor",
    "register_hook": "register_hook() installs an autograd hook on a tensor",
    "requires_grad_": "requires_grad_() changes autograd state of a tensor",
    "detach_": "detach_() changes autograd state of a tensor",
}


def _frame_tensor(variable, name: str):
    """The real tensor behind ``variable``, which must come from the frame."""
    if variable.value is None or variable.source is None:
        raise Unsupported(f"{name} of a tensor computed in the graph (its autograd state exists only "
                          "when the ops run eagerly)")
    return variable.value


def _read_grad(variable, tx):
    tensor = _frame_tensor(variable, "grad")
    stored = tx.output.side_effects.attribute(tensor, "grad")
    if stored is not None:
        return stored
    grad, source = tensor.grad, AttrSource(variable.source, "grad")
    if grad is None:
        tx.output.guards.add(source, G.CONSTANT_MATCH, None)
        return ConstantVariable(None, source)
    if grad._grad_fn is not None or grad._requires_grad:
        raise Unsupported("grad of a tensor whose gradient itself records autograd history (create_graph=True)")
    # A fresh gradient tensor on every backward(): an input, never a constant guarded by identity.
    return tx.output.wrap_tensor(grad, source, is_input=True)


def _unwritten_frame_tensor(variable, name: str):
    """The real tensor behind ``variable``, which the graph must not have written in place
    (an in-place op with grad on can give a tensor history, which the real one lacks yet)."""
    tensor = _frame_tensor(variable, name)
    if variable.proxy.node.op not in ("placeholder", "get_attr"):
        raise Unsupported(f"{name} of a tensor the graph changed in place")
    return tensor


def _guarded_flag(read):
    """A reader of a flag of a leaf of the frame, guarded on ``requires_grad`` and ``grad_fn is None``."""

    def getter(variable, tx):
        tensor = _unwritten_frame_tensor(variable, "autograd state")
        if tensor._grad_fn is not None:
            raise Unsupported(f"autograd history (grad_fn) of {variable.source.name()}")
        tx.output.guards.add(AttrSource(variable.source, "requires_grad"), G.CONSTANT_MATCH, tensor._requires_grad)
        tx.output.guards.add(AttrSource(variable.source, "grad_fn"), G.CONSTANT_MATCH, None)
        return ConstantVariable(read(tensor))
    return getter


#: Attribute name -> how a tensor variable of the frame answers it.
READERS = {
    "grad": _read_grad,
    "requires_grad": _guarded_flag(lambda t: t._requires_grad),
    "is_leaf": _guarded_flag(lambda t: True),
    "grad_fn": _guarded_flag(lambda t: None),
}


def autograd_attribute(variable, tx, name: str):
    """The variable for ``tensor.<name>`` when ``name`` is autograd state, else None."""
    reader = READERS.get(name)
    return None if reader is None else reader(variable, tx)


def call_autograd_method(variable, tx, name: str, args: list, kwargs: dict):
    """``tensor.<name>(...)`` for a name in BREAKING_METHODS: breaks, except for what changes
    nothing (``requires_grad_(False)`` on a frame tensor that does not require grad, as
    ``zero_grad(set_to_none=False)`` does to every gradient): that returns the tensor."""
    if name == "requires_grad_" and variable.value is not None and variable.source is not None and not kwargs \
            and len(args) <= 1 and all(isinstance(a, ConstantVariable) for a in args):
        wanted = bool(args[0].value) if args else True
        if wanted == _unwritten_frame_tensor(variable, name)._requires_grad:
            tx.output.guards.add(AttrSource(variable.source, "requires_grad"), G.CONSTANT_MATCH, wanted)
            return variable
    raise Unsupported(BREAKING_METHODS[name])


def store_grad(variable, tx, name: str, value) -> None:
    """``tensor.grad = value`` on a tensor of the frame: a side effect replayed after the graph."""
    if name != "grad":
        raise Unsupported(f"assignment to attribute {name!r} of a tensor")
    tensor = _frame_tensor(variable, "assignment to grad")
    if isinstance(value, ConstantVariable) and value.value is None:
        tx.output.side_effects.store_attribute(variable, name, value)
        return
    proxy = getattr(value, "proxy", None)
    if proxy is None or proxy.shape != tensor.shape or proxy.dtype != tensor.dtype or proxy.device != tensor.device:
        raise Unsupported("assignment to grad of something other than None or a tensor like the parameter")
    tx.output.side_effects.store_attribute(variable, name, value)
