"""``MyFunction.apply(...)`` of a custom ``dl.autograd.Function``, traced into the graph.

NOTE: [custom autograd.Function in the graph] ``forward(ctx, *args)`` is inlined with grad
off (as eager runs it), so its ops are graph nodes the backend compiles, in-place ops on
its own intermediates and views included. What ``ctx`` receives (``save_for_backward``,
attributes, ``set_materialize_grads``, ``mark_non_differentiable``) is kept in a
``CustomFunctionRegion`` hung on the nodes ``forward`` returns (``node.meta
["custom_function"]``). When the graph is compiled for training, the joint tracer
(frames/aot/custom_functions.py) gives those outputs the user's ``backward``, traced on
proxies into the backward graph, instead of the derivatives of the ops inside. A graph
holding a region is never run op by op (that would differentiate the ops inside): if no
joint graph can be made, the frame runs eagerly. ``mark_dirty`` (in-place on an input),
``setup_context`` and outputs that are inputs are a graph break (``apply`` runs eagerly).
"""
from __future__ import annotations

import types
from dataclasses import dataclass, field

from ....autograd.function import Function
from ...errors import Unsupported
from .base import ConstantVariable, VariableTracker
from .containers import TupleVariable
from .functions import UserFunctionVariable
from .objects import ObjectVariable
from .tensor import TensorVariable


@dataclass(eq=False)
class CustomFunctionRegion:
    """One traced ``apply``: what the joint tracer needs to call ``backward``.

    Attributes:
        function: the Function subclass.
        inputs: per positional argument of ``apply``, its graph node (None: not a tensor).
        outputs: the graph nodes ``forward`` returned, in order.
        saved: per ``save_for_backward`` argument, its graph node or constant.
        attributes: ``ctx`` attributes ``forward`` set: name -> graph node or constant.
        non_differentiable: output positions ``mark_non_differentiable`` named.
        materialize_grads: whether missing output gradients reach ``backward`` as zeros.
    """

    function: type
    inputs: list
    outputs: list
    saved: list = field(default_factory=list)
    attributes: dict = field(default_factory=dict)
    non_differentiable: set = field(default_factory=set)
    materialize_grads: bool = True

    def kept(self) -> list:
        """The graph nodes ``backward`` reads (saved tensors and tensor attributes of ctx)."""
        return [v for v in [*self.saved, *self.attributes.values()] if not isinstance(v, ConstantMarker)]


def is_traceable_function(cls) -> bool:
    """A Function subclass whose ``forward``/``backward`` are Python static methods (no
    ``setup_context``, no ``vjp`` of its own)."""
    if not (isinstance(cls, type) and issubclass(cls, Function)) or cls is Function:
        return False
    forward, backward = cls.__dict__.get("forward"), None
    for klass in cls.__mro__:
        if "backward" in klass.__dict__:
            backward = klass.__dict__["backward"]
            break
    return (isinstance(forward, staticmethod) and isinstance(forward.__func__, types.FunctionType)
            and isinstance(backward, staticmethod) and isinstance(backward.__func__, types.FunctionType)
            and cls.setup_context is Function.setup_context)


class FunctionApplyVariable(VariableTracker):
    """``MyFunction.apply``: calling it inlines ``forward`` and records the region."""

    def __init__(self, function: type, source=None):
        self.function, self.source = function, source

    def python_type(self) -> type:
        return types.MethodType

    def describe(self) -> str:
        return f"{self.function.__qualname__}.apply()"

    def reconstruct(self, cg) -> None:
        cg.load_const(self.function.apply)

    def call(self, tx, args, kwargs) -> VariableTracker:
        if kwargs:
            raise Unsupported(f"{self.function.__qualname__}.apply() with keyword arguments (runs eagerly)")
        output = tx.output
        inputs = [a.proxy.node if isinstance(a, TensorVariable) else None for a in args]
        ctx = FunctionCtxVariable(self.function, inputs)
        checkpoint = output.checkpoint()
        output.grad_mode_blocks.append(False)  # forward runs without recording, as in eager
        try:
            result = UserFunctionVariable(self.function.forward, None).call(tx, [ctx, *args], {})
        finally:
            output.grad_mode_blocks.pop()
        if not (output.grad_mode_blocks[-1] if output.grad_mode_blocks else output.grad_enabled):
            return result  # grad off: apply records nothing, forward's result is the answer
        made = set(output.nodes_since(checkpoint))
        items = list(result.items) if isinstance(result, TupleVariable) else [result]
        outputs = [item.proxy.node for item in items if isinstance(item, TensorVariable)]
        if not outputs or any(node not in made for node in outputs) or len(set(outputs)) != len(outputs):
            raise Unsupported(f"{self.function.__qualname__}.forward returns an input or no new tensor "
                              "(apply runs eagerly)")
        region = CustomFunctionRegion(self.function, inputs, outputs, ctx.saved, ctx.attributes,
                                      {i for i, n in enumerate(outputs) if n in ctx.non_differentiable},
                                      ctx.materialize_grads)
        for node in outputs:
            node.meta["custom_function"] = region
        for node in region.kept():
            node.meta["kept_for_backward"] = True  # dead-code elimination keeps it
        for node in {*outputs, *region.kept()}:  # the joint tracer notes the region after the last of them
            node.meta.setdefault("custom_function_parts", []).append(region)
        return result


def _graph_value(variable):
    """What the region keeps of a ctx value: a graph node, or the constant itself."""
    if isinstance(variable, TensorVariable):
        return variable.proxy.node
    if variable.is_python_constant():
        return ConstantMarker(variable.as_python_constant())
    raise Unsupported("a ctx value that is neither a tensor nor a constant (apply runs eagerly)")


@dataclass(frozen=True)
class ConstantMarker:
    """A constant kept on ``ctx`` (saved or as an attribute)."""

    value: object


class FunctionCtxVariable(ObjectVariable):
    """The ``ctx`` ``forward`` receives while it is inlined."""

    def __init__(self, function: type, inputs: list):
        super().__init__(None, None)  # no Python object stands for it while tracing
        self.function = function
        self.needs_input_grad = tuple(node is not None for node in inputs)
        self.saved: list = []
        self.attributes: dict = {}
        self.values: dict = {}  # name -> variable, what forward reads back
        self.non_differentiable: set = set()
        self.materialize_grads = True

    def python_type(self) -> type:
        return self.function._backward_cls

    def describe(self) -> str:
        return f"the ctx of {self.function.__qualname__}"

    def var_getattr(self, tx, name: str) -> VariableTracker:
        if name in self.values:
            return self.values[name]
        if name == "needs_input_grad":
            return TupleVariable([ConstantVariable(flag) for flag in self.needs_input_grad])
        if name in _CTX_METHODS:
            return CtxMethodVariable(self, name)
        raise Unsupported(f"reading ctx.{name} in {self.function.__qualname__}.forward")

    def store_attribute(self, tx, name: str, value) -> None:
        self.attributes[name] = _graph_value(value)
        self.values[name] = value

    def reconstruct(self, cg) -> None:
        raise Unsupported(f"the ctx of {self.function.__qualname__} cannot leave forward")


def _save_for_backward(tx, ctx, args) -> None:
    # A tensor is saved as a fresh alias of itself: its node then comes after the in-place
    # writes that filled it (``H[:, t].add_(...)``), so the backward may read what they left.
    ctx.saved = [_graph_value(_alias(tx, a) if isinstance(a, TensorVariable) else a) for a in args]


def _alias(tx, tensor):
    return tx.call_function(tensor.var_getattr(tx, "view_as"), [tensor], {})


def _mark_non_differentiable(tx, ctx, args) -> None:
    ctx.non_differentiable = {a.proxy.node for a in args if isinstance(a, TensorVariable)}


def _set_materialize_grads(tx, ctx, args) -> None:
    ctx.materialize_grads = bool(args[0].as_python_constant())


def _mark_dirty(tx, ctx, args) -> None:
    raise Unsupported(f"ctx.mark_dirty in {ctx.function.__qualname__}.forward (an in-place change of an input: "
                      "apply runs eagerly)")


_CTX_METHODS = {"save_for_backward": _save_for_backward, "mark_non_differentiable": _mark_non_differentiable,
                "set_materialize_grads": _set_materialize_grads, "mark_dirty": _mark_dirty}


class CtxMethodVariable(VariableTracker):
    """``ctx.save_for_backward`` and friends, bound to the traced ctx."""

    def __init__(self, ctx: FunctionCtxVariable, name: str):
        self.ctx, self.name = ctx, name

    def call(self, tx, args, kwargs) -> VariableTracker:
        if kwargs:
            raise Unsupported(f"ctx.{self.name} with keyword arguments")
        _CTX_METHODS[self.name](tx, self.ctx, list(args))
        return ConstantVariable(None)
