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
joint graph can be made, the frame runs eagerly. The ``forward(*args)`` + ``setup_context(ctx,
inputs, output)`` form inlines both. An input that ``forward`` changes in place and names in
``mark_dirty`` may be returned: the joint tracer then gives that tensor the Function's history
from there on (``dirty``: the in-place nodes that wrote it, replayed without recording). An input
returned unchanged becomes a fresh alias of it, as eager makes one.
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
from .tensor_autograd import autograd_attribute


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
        dirty: the in-place nodes of ``forward`` that wrote an input named in ``mark_dirty``.
    """

    function: type
    inputs: list
    outputs: list
    saved: list = field(default_factory=list)
    attributes: dict = field(default_factory=dict)
    non_differentiable: set = field(default_factory=set)
    materialize_grads: bool = True
    dirty: list = field(default_factory=list)

    def triggers(self) -> list:
        """The nodes after the last of which the region is complete: outputs it made, kept values, and
        the writes into inputs it marks dirty (a dirty output is such an input, made before it)."""
        return [n for n in self.outputs if n not in self.inputs] + self.kept() + self.dirty

    def kept(self) -> list:
        """The graph nodes ``backward`` reads (saved tensors and tensor attributes of ctx)."""
        return [v for v in [*self.saved, *self.attributes.values()] if not isinstance(v, ConstantMarker)]


def is_traceable_function(cls) -> bool:
    """A Function subclass whose ``forward``/``backward`` (and ``setup_context`` if it has one) are
    Python static methods."""
    if not (isinstance(cls, type) and issubclass(cls, Function)) or cls is Function:
        return False
    forward, backward = cls.__dict__.get("forward"), None
    for klass in cls.__mro__:
        if "backward" in klass.__dict__:
            backward = klass.__dict__["backward"]
            break
    setup = next((k.__dict__["setup_context"] for k in cls.__mro__ if "setup_context" in k.__dict__), None)
    return all(isinstance(m, staticmethod) and isinstance(m.__func__, types.FunctionType)
               for m in (forward, backward, setup))


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
        ctx = FunctionCtxVariable(self.function, inputs, [a if isinstance(a, TensorVariable) else None for a in args])
        checkpoint = output.checkpoint()
        output.grad_mode_blocks.append(False)  # forward runs without recording, as in eager
        try:
            if self.function.setup_context is Function.setup_context:
                result = UserFunctionVariable(self.function.forward, None).call(tx, [ctx, *args], {})
            else:
                result = UserFunctionVariable(self.function.forward, None).call(tx, list(args), {})
                UserFunctionVariable(self.function.setup_context, None).call(
                    tx, [ctx, TupleVariable(list(args)), result], {})
        finally:
            output.grad_mode_blocks.pop()
        if not (output.grad_mode_blocks[-1] if output.grad_mode_blocks else output.grad_enabled):
            return result  # grad off: apply records nothing, forward's result is the answer
        made = output.nodes_since(checkpoint)
        dirty_roots = {_storage_root(node) for node in ctx.dirty}
        dirty = [node for node in made if "inplace" in getattr(node.target, "tags", ())
                 and _storage_root(node.args[0]) in dirty_roots]
        items = list(result.items) if isinstance(result, TupleVariable) else [result]
        outputs = []
        for i, item in enumerate(items):
            if not isinstance(item, TensorVariable):
                continue
            node = _before_inplace(item.proxy.node)
            if node in inputs and _storage_root(node) in dirty_roots:
                if not dirty or node.op in ("placeholder", "get_attr"):
                    raise Unsupported(f"{self.function.__qualname__}.forward returns an input it marks dirty "
                                      "without changing it, or a leaf of the frame (apply runs eagerly)")
            elif node in inputs:  # an input returned unchanged: a new alias of it, as in eager
                items[i] = _alias(tx, item)
                node = items[i].proxy.node
            elif item.proxy.node not in made or _storage_root(item.proxy.node) in dirty_roots:
                raise Unsupported(f"{self.function.__qualname__}.forward returns a tensor it did not make, or a "
                                  "view of an input it changes (apply runs eagerly)")
            else:
                node = item.proxy.node
            outputs.append(node)
        result = TupleVariable(items) if isinstance(result, TupleVariable) else items[0]
        made = set(output.nodes_since(checkpoint))
        if not outputs or len(set(outputs)) != len(outputs):
            raise Unsupported(f"{self.function.__qualname__}.forward returns no new tensor, or one twice "
                              "(apply runs eagerly)")
        region = CustomFunctionRegion(self.function, inputs, outputs, ctx.saved, ctx.attributes,
                                      {i for i, n in enumerate(outputs) if n in ctx.non_differentiable},
                                      ctx.materialize_grads, dirty)
        for node in dirty:
            node.meta["custom_function_dirty"] = True  # replayed without recording (frames/aot/joint.py)
        for node in outputs:
            node.meta.setdefault("custom_function", region)
        for node in region.triggers():
            node.meta["kept_for_backward"] = True  # dead-code elimination keeps it (an unused output too)
        for node in set(region.triggers()):  # the joint tracer notes the region after the last of them
            node.meta.setdefault("custom_function_parts", []).append(region)
        return result


def _requires_grad(tx, tensor, function) -> bool:
    """Whether an argument of ``apply`` requires grad: read (and guarded) on a tensor of the frame."""
    if tensor is None:
        return False
    if tensor.proxy.node.op in ("placeholder", "get_attr") and tensor.source is not None:
        return autograd_attribute(tensor, tx, "requires_grad").as_python_constant()
    raise Unsupported(f"ctx.needs_input_grad read in {function.__qualname__}.forward for a tensor computed "
                      "in the frame (apply runs eagerly)")


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

    def __init__(self, function: type, inputs: list, tensors: list):
        super().__init__(None, None)  # no Python object stands for it while tracing
        self.function = function
        self.tensors = tensors
        self.saved: list = []
        self.attributes: dict = {}
        self.values: dict = {}  # name -> variable, what forward reads back
        self.non_differentiable: set = set()
        self.dirty: set = set()
        self.materialize_grads = True

    def python_type(self) -> type:
        return self.function._backward_cls

    def describe(self) -> str:
        return f"the ctx of {self.function.__qualname__}"

    def var_getattr(self, tx, name: str) -> VariableTracker:
        if name in self.values:
            return self.values[name]
        if name == "needs_input_grad":
            return TupleVariable([ConstantVariable(_requires_grad(tx, t, self.function)) for t in self.tensors])
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
    ctx.dirty = {a.proxy.node for a in args if isinstance(a, TensorVariable)}


def _before_inplace(node):
    """The node an in-place node (or a chain of them) wrote into."""
    while node.op == "call_function" and "inplace" in getattr(node.target, "tags", ()):
        node = node.args[0]
    return node


def _storage_root(node):
    """The node whose storage ``node`` shares through views and in-place ops."""
    while node.op == "call_function" and getattr(node.target, "tags", set()) & {"view", "inplace"} \
            and node.args and hasattr(node.args[0], "op"):
        node = node.args[0]
    return node


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
