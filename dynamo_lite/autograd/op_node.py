"""The nodes recorded for registry ops (one class per op, named like torch's) and for views."""
from __future__ import annotations

import re

from ..ops.core.registry import REGISTRY
from ..tensor.meta import TensorMeta
from ..tensor.symint import same_values
from ..tensor.tensor import Tensor
from .node import FREED_MESSAGE, Node, SavedTensor

OPS = REGISTRY


class OpNode(Node):
    """The backward of one registry op call: applies the op's formula from the derivative table.

    Attributes:
        formula: the op's Derivative.
        slots: ``(key, TensorMeta)`` per tensor argument (key: position, ``(position,
            index)`` inside a list, or keyword name), aligned with ``next_functions``.
    """

    def __init__(self, formula, edges, slots, saved_args, saved_kwargs, output_metas, multi_output):
        super().__init__(edges)
        self.formula = formula
        self.slots = slots
        self.saved_args = saved_args
        self.saved_kwargs = saved_kwargs
        self.saved_result = None
        self.output_metas = output_metas
        self.multi_output = multi_output

    def release(self) -> None:
        super().release()
        if self.formula.saves:  # like torch: only a node that saved values refuses a second backward
            self.saved_args = self.saved_kwargs = self.saved_result = None

    def apply(self, grad_outputs: list) -> list:
        if self.saved_args is None:
            raise RuntimeError(FREED_MESSAGE)
        grads = [
            (g if g is not None else _zeros(meta)) if meta is not None else None
            for g, meta in zip(grad_outputs, self.output_metas)
        ]
        args = [_unpack(a, self) for a in self.saved_args]
        kwargs = {k: _unpack(v, self) for k, v in self.saved_kwargs.items()} if self.saved_kwargs else {}
        if self.saved_result is not None:
            results = [s.unpack(self) if isinstance(s, SavedTensor) else s for s in self.saved_result]
            kwargs["result"] = tuple(results) if self.multi_output else results[0]
        out = self.formula.formula(tuple(grads) if self.multi_output else grads[0], *args, **kwargs)
        return [reduce_to(pick_gradient(out, key), meta) if edge[0] is not None else None
                for (key, meta), edge in zip(self.slots, self.next_functions)]


def _unpack(value, node):
    if isinstance(value, SavedTensor):
        return value.unpack(node)
    if isinstance(value, (tuple, list)):
        return type(value)(_unpack(v, node) for v in value)
    return value


def pick_gradient(out, key):
    """The gradient for slot ``key`` from a formula's return value."""
    if not isinstance(out, tuple):
        out = (out,)
    if isinstance(key, str):
        extra = out[-1] if out and isinstance(out[-1], dict) else {}
        return extra.get(key)
    if isinstance(key, tuple):
        group = out[key[0]] if key[0] < len(out) else None
        return None if group is None else group[key[1]]
    return out[key] if key < len(out) and not isinstance(out[key], dict) else None


def _zeros(meta: TensorMeta) -> Tensor:
    return OPS["zeros"](size=meta._sizes, dtype=meta._dtype, device=meta._device)


def reduce_to(grad, meta: TensorMeta):
    """``grad`` summed over broadcast dimensions and cast to the dtype of the input ``meta``.

    NOTE: [broadcast reduction] formulas may return a gradient in the broadcast shape (or
    the result dtype); this one place reduces it to what the input was, for every op.
    """
    if grad is None:
        return None
    sizes = meta._sizes
    if type(grad) is Tensor and grad._dtype is meta._dtype and grad._sizes == sizes:
        return grad  # eager, nothing to reduce (real tensors have int sizes: == records no guard)
    # same_values: symbolic sizes (a joint graph) are compared without guards (NOTE: [guard-free fast paths])
    if not same_values(grad._sizes, sizes):
        lead = grad.ndim - len(sizes)
        dims = tuple(range(lead)) + tuple(
            lead + i for i, n in enumerate(sizes) if n == 1 and grad._sizes[lead + i] != 1
        )
        if dims:
            grad = OPS["sum"](grad, dim=dims, keepdim=True)
        if not same_values(grad._sizes, sizes):
            grad = grad.reshape(sizes)
    if grad._dtype.is_complex and not meta._dtype.is_complex:
        grad = OPS["select"](OPS["view_as_real"](grad), -1, 0)  # a real input gets the real part (as torch)
    if grad._dtype is not meta._dtype:
        grad = grad.to(meta._dtype)
    return grad


def _window(tensor: Tensor, view_geometry, base_offset: int):
    """The as_strided window of ``tensor`` (laid out like the base) that a view of the base covers."""
    sizes, strides, offset = view_geometry
    return tensor.as_strided(sizes, strides, offset - base_offset)


def _like_base(base_meta: TensorMeta) -> Tensor:
    return OPS["empty_strided"](size=base_meta._sizes, stride=base_meta._strides, dtype=base_meta._dtype,
                                device=base_meta._device)


class CopySlices(Node):
    """The history of a base after an in-place op wrote through one of its views.

    ``next_functions``: the base's old history, then the in-place op's other inputs.
    """

    def __init__(self, base_edge, base: Tensor, view: Tensor, op_node: OpNode):
        super().__init__((base_edge,) + op_node.next_functions[1:])
        self.base_meta = TensorMeta.of(base)
        self.view_geometry = (view._sizes, view._strides, view._offset)
        self.op_node = op_node

    def release(self) -> None:
        super().release()
        self.op_node.release()

    def apply(self, grad_outputs: list) -> list:
        grad = _like_base(self.base_meta)
        grad.copy_(grad_outputs[0])
        window = _window(grad, self.view_geometry, self.base_meta._offset)
        op_grads = self.op_node.apply([window.clone()])
        if op_grads[0] is None:
            window.zero_()
        else:
            window.copy_(op_grads[0])
        return [grad] + op_grads[1:]


class ViewOfBase(Node):
    """The history of a view after its base's history was rewritten: "this window of the base"."""

    def __init__(self, base_edge, base: Tensor, view: Tensor):
        super().__init__((base_edge,))
        self.base_meta = TensorMeta.of(base)
        self.view_geometry = (view._sizes, view._strides, view._offset)

    def apply(self, grad_outputs: list) -> list:
        grad = _like_base(self.base_meta)
        grad.zero_()
        _window(grad, self.view_geometry, self.base_meta._offset).copy_(grad_outputs[0])
        return [grad]


ViewOfBase.__name__ = ViewOfBase.__qualname__ = "AsStridedBackward0"

_NODE_CLASSES: dict = {}


def node_class(op_name: str) -> type:
    """The OpNode subclass for an op, named like torch's (``mul`` -> ``MulBackward0``)."""
    cls = _NODE_CLASSES.get(op_name)
    if cls is None:
        camel = "".join(part.capitalize() for part in re.split(r"_+", op_name.strip("_")))
        cls = _NODE_CLASSES[op_name] = type(f"{camel}Backward0", (OpNode,), {"__module__": __name__})
    return cls
