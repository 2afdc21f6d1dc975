"""Trace a captured graph and its derivative formulas into one joint forward-backward graph.

NOTE: [joint graph] The captured graph is run again on proxies (ops recorded, not run),
with the autograd rules eager recording applies: an op whose tensor argument requires
grad (under the grad mode its node was traced in) is decomposed if the derivative table
says so (dropout becomes ``input * dropout(ones)``, so its mask is a value of the graph)
and noted on a tape with the arguments its formula saves. Then, from one ``tangent``
placeholder per differentiable output, the tape is walked backwards calling each op's
formula from the derivative table on the proxies, exactly as ``OpNode.apply`` calls it
on tensors (saved arguments as values, the others as TensorMetas, gradients reduced to
the input's shape and dtype by the same ``reduce_to``): the formulas are the only source
of backward rules. The result is one graph: inputs, forward nodes, tangents, backward
nodes; ``JointGraph`` says which node is which. Anything eager autograd would do that
a pure graph cannot express (an in-place op on a tensor requiring grad, a formula that
needs data) raises ``Unsupported``: the caller then runs the graph op by op.

NOTE: [symbolic joint graphs] A graph with symbolic sizes (automatic dynamic shapes) is
traced the same way: the proxies carry the captured graph's SymInts, so meta rules and
formulas compute sizes over the same symbols, and the decisions they take (``reduce_to``
comparing sizes) land in the frame's ShapeEnv and become guards like the translator's.
A size an op of the joint graph takes as an argument becomes size nodes (``sym_size`` of
an input, ``operator`` arithmetic) as in the captured graph (tracing/sym_nodes.py); the
partition recomputes them wherever they are needed (NOTE: [recompute rule]).
"""
from __future__ import annotations

import operator
from dataclasses import dataclass, field

from ...autograd.derivatives.table import DECOMPOSE, NO_GRADIENT, derivative_rule
from ...autograd.op_node import pick_gradient, reduce_to
from ...autograd.recording import is_saved, tensor_slots
from ...graph.graph import Graph
from ...graph.scan import scan
from ...graph.node import Node
from ...ops.core.dispatch import TRACING
from ...ops.core.registry import REGISTRY, Op
from ...tensor.meta import TensorMeta
from ...tensor.symint import SIZE_FUNCTIONS, SymInt
from ...tensor.tensor import Tensor
from ..errors import Unsupported
from ..tracing.output_graph import to_metas
from ..tracing.proxy import ProxyTensor
from .custom_functions import CustomEntry, note_region
from ..tracing.sym_nodes import SymbolicNodes
from .scan_grad import trace_scan

OPS = REGISTRY


@dataclass
class TapeEntry:
    """One differentiable op of the forward, as its formula will see it."""

    formula: object
    args: tuple
    kwargs: dict
    outputs: list       # a proxy per output, None for an output that carries no gradient
    results: list       # every output as the formula's ``result`` sees it (indices too), or None if unsaved
    multi_output: bool
    slots: list         # (key, proxy) per tensor argument
    kept: set           # the argument names the formula saves (eager's ``_save_inputs`` rule)
    versions: list      # (proxy, its node when the op ran): an in-place write since then changes it


@dataclass
class JointGraph:
    """A joint forward-backward graph and the roles of its nodes.

    Attributes:
        graph: inputs, forward nodes, tangent placeholders, backward nodes, in that order.
        inputs: the placeholder nodes, then the get_attr nodes (each in graph order): the
            inputs of the captured graph.
        forward_outputs: the nodes the captured graph returns.
        forward_nodes: every node made while tracing the forward.
        tangents: ``output index -> tangent placeholder`` for outputs that carry a gradient.
        input_grads: ``input node -> gradient node`` for inputs a gradient reaches.
    """

    graph: Graph
    inputs: list
    forward_outputs: list
    forward_nodes: set
    tangents: dict = field(default_factory=dict)
    input_grads: dict = field(default_factory=dict)


def requires_grad_flags(inputs, attributes) -> list:
    """Per input of a captured graph (call arguments, then get_attr tensors), whether it requires grad."""
    return [isinstance(t, Tensor) and t._requires_grad for t in (*inputs, *attributes)]


def _aliases(node) -> bool:
    """Whether ``node`` may share its storage with another value (a view, an item of a tuple)."""
    return node.op == "call_function" and (node.target is operator.getitem or "view" in node.target.tags)


def _differentiable(meta) -> bool:
    return isinstance(meta, TensorMeta) and (meta._dtype.is_floating_point or meta._dtype.is_complex)


def _tensors(value) -> list:
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    return []


class JointTracer:
    """Records the ops dispatched while it is ``TRACING.tracer`` into ``graph``, keeping
    the autograd tape while the forward is traced (NOTE: [joint graph])."""

    def __init__(self, shape_env=None):
        self.graph = Graph()
        self.requires_grad: set = set()   # nodes whose value requires grad
        self.tape: list = []
        self.recording = False            # forward phase, with grad enabled for the node
        self.dirty_write = False          # the node writes an input a custom Function marks dirty
        self.shape_env = shape_env        # the captured graph's, when its sizes are symbolic
        self.sym_nodes = SymbolicNodes(self)  # NOTE: [symbolic joint graphs]

    def _created(self, node):
        """SymbolicNodes' hook for a node it made (nothing to track here)."""
        return node

    # -- recording ------------------------------------------------------------------
    def record(self, op, args, kwargs):
        """Called by ops/core/dispatch.py for every op while tracing: add a node, return proxies."""
        if self.dirty_write:  # NOTE: [custom autograd.Function in the graph]: its forward records nothing
            return self._record_plain(op, args, kwargs)
        tensors = _tensors((args, kwargs))
        differentiable = any(t.node in self.requires_grad for t in tensors if isinstance(t, ProxyTensor))
        if "inplace" in op.tags and (args[0].node in self.requires_grad or self.recording and differentiable):
            return self._record_functionalized(op, args, kwargs)
        if self.recording and differentiable:
            return self._record_differentiable(op, args, kwargs)
        return self._record_plain(op, args, kwargs)

    def _record_functionalized(self, op, args, kwargs):
        """An in-place op on an intermediate that requires grad (``relu_``), recorded as its
        out-of-place op; the target's proxy then stands for the result (NOTE: [joint graph]).

        Only when nothing else can see the old value: the target is made by an op of the
        graph (not an input), is not a view and has no views; the result has its geometry.
        Earlier ops that read the target notice it (``TapeEntry.versions``).
        """
        target, node = args[0], args[0].node
        functional = REGISTRY.get(op.name[:-1]) if op.name.endswith("_") else None
        if (not self.recording or functional is None or node.op != "call_function" or _aliases(node)
                or any(_aliases(user) and user.args[0] is node for user in node.users)):
            raise Unsupported(f"in-place op {op.name} on a tensor that requires grad (version-counter semantics)")
        before = ProxyTensor.create(node, TensorMeta.of(target))
        result = self.record(functional, (before,) + tuple(args[1:]), kwargs)
        if not isinstance(result, ProxyTensor) or TensorMeta.of(result) != TensorMeta.of(target):
            raise Unsupported(f"in-place op {op.name} changes its target's dtype or layout out of place")
        target.node = result.node
        return target

    def _record_plain(self, op, args, kwargs):
        meta = op.meta(*to_metas(args), **to_metas(kwargs))
        node = self.graph.call_function(op, self._nodes(args), self._nodes(kwargs))
        if "inplace" in op.tags:
            node.meta["val"] = meta
            args[0].node = node
            return args[0]
        return self._proxies(node, meta)

    def _record_differentiable(self, op, args, kwargs):
        try:
            kind, formula = derivative_rule(op.name, "inplace" in op.tags)  # as eager recording does
        except RuntimeError as exc:
            raise Unsupported(str(exc)) from exc
        if kind == DECOMPOSE:
            return formula(*args, **kwargs)
        if kind == NO_GRADIENT:
            return self._record_plain(op, args, kwargs)
        result = self._record_plain(op, args, kwargs)
        multi = isinstance(result, (tuple, list))
        raw = list(result if multi else (result,))
        # proxies of their own: user code may rebind the ones it holds (_record_functionalized)
        outputs = [ProxyTensor.create(o.node, TensorMeta.of(o)) if isinstance(o, ProxyTensor) and _differentiable(
            TensorMeta.of(o)) else None for o in raw]
        if not any(o is not None for o in outputs):
            return result
        for out in outputs:
            if out is not None:
                self.requires_grad.add(out.node)
        by_name = dict(zip(formula.params, args), **kwargs)
        kept = {name for name in set(formula.params) | set(kwargs) if is_saved_on_proxies(formula, name, by_name, self)}
        versions = [(t, t.node) for t in _tensors((args, kwargs)) if isinstance(t, ProxyTensor)]
        results = None
        if "result" in formula.saves:  # eager saves every output (an argmax's indices too) and checks its version
            results = [own if own is not None else o for own, o in zip(outputs, raw)]
            versions += [(o, o.node) for o in raw if isinstance(o, ProxyTensor)]
        self.tape.append(TapeEntry(formula, args, kwargs, outputs, results, multi, tensor_slots(args, kwargs), kept,
                                   versions))
        return result

    def _nodes(self, value):
        if isinstance(value, ProxyTensor):
            return value.node
        if isinstance(value, Tensor):
            raise Unsupported("a derivative formula made a constant tensor from data")
        if type(value) is SymInt:
            return self.sym_nodes.node_for(value)
        if isinstance(value, slice):  # x[:, :n] with a symbolic n
            return slice(self._nodes(value.start), self._nodes(value.stop), self._nodes(value.step))
        if isinstance(value, (tuple, list)):
            return type(value)(self._nodes(v) for v in value)
        if isinstance(value, dict):
            return {k: self._nodes(v) for k, v in value.items()}
        return value

    def _proxies(self, node, meta):
        if isinstance(meta, TensorMeta):
            return ProxyTensor.create(node, meta)
        node.meta["val"] = meta
        if isinstance(meta, (tuple, list)):
            items = [ProxyTensor.create(self.graph.call_function(operator.getitem, (node, i)), m)
                     if isinstance(m, TensorMeta) else m for i, m in enumerate(meta)]
            return type(meta)(*items) if hasattr(meta, "_fields") else type(meta)(items)
        return meta

    # -- the backward ----------------------------------------------------------------
    def backward(self, outputs: list) -> tuple[dict, dict]:
        """Trace the tape's formulas from a tangent per differentiable output.

        Returns:
            ``{output index: tangent node}`` and ``{node: gradient proxy}`` for every node
            a gradient reached.
        """
        grads, tangents = {}, {}
        for i, out in enumerate(outputs):
            if isinstance(out, ProxyTensor) and out.node in self.requires_grad:
                tangent = self.graph.placeholder(f"tangent_{i}")
                tangents[i] = tangent
                _accumulate(grads, out.node, ProxyTensor.create(tangent, TensorMeta.of(out)))
        for entry in reversed(self.tape):
            received = [grads.get(o.node) if o is not None else None for o in entry.outputs]
            if all(g is None for g in received):
                continue
            if isinstance(entry, CustomEntry):  # the user's backward (aot/custom_functions.py)
                for tensor, grad in zip(entry.inputs, entry.gradients(received)):
                    if tensor is not None and grad is not None:
                        _accumulate(grads, tensor.node, grad)
                continue
            if any(proxy.node is not node for proxy, node in entry.versions):
                raise Unsupported("a tensor the backward needs is modified by an in-place op later in the forward")
            grad_outputs = [g if g is not None or o is None else _zeros(o) for g, o in zip(received, entry.outputs)]
            kwargs = {k: self._formula_argument(k, v, entry) for k, v in entry.kwargs.items()}
            args = [self._formula_argument(entry.formula.params[i] if i < len(entry.formula.params) else None, a, entry)
                    for i, a in enumerate(entry.args)]
            if entry.results is not None:
                kwargs["result"] = tuple(entry.results) if entry.multi_output else entry.results[0]
            out = entry.formula.formula(tuple(grad_outputs) if entry.multi_output else grad_outputs[0], *args, **kwargs)
            for key, tensor in entry.slots:
                if tensor.node in self.requires_grad:
                    grad = reduce_to(pick_gradient(out, key), TensorMeta.of(tensor))
                    if grad is not None:
                        _accumulate(grads, tensor.node, grad)
        return tangents, grads

    def _formula_argument(self, name, value, entry):
        if isinstance(value, (tuple, list)):
            return type(value)(self._formula_argument(name, v, entry) for v in value)
        if isinstance(value, Tensor) and name not in entry.kept:
            return TensorMeta.of(value)
        return value


def is_saved_on_proxies(formula, name, by_name, tracer) -> bool:
    """``is_saved`` of eager recording, with "requires grad" read from the tracer."""
    partner = formula.only_for.get(name)
    if partner is None:
        return is_saved(formula, name, by_name)
    value = by_name.get(partner)
    return isinstance(value, ProxyTensor) and value.node in tracer.requires_grad


def _zeros(like):
    return OPS["zeros"](size=tuple(like._sizes), dtype=like._dtype, device=like._device)


def _accumulate(grads: dict, node, grad) -> None:
    current = grads.get(node)
    grads[node] = grad if current is None else OPS["add"](current, grad)


def trace_joint(gm, requires_grad: list) -> JointGraph:
    """The joint graph of a captured GraphModule.

    Args:
        gm: the captured graph (placeholders, get_attr parameters, registry ops).
        requires_grad: per input of ``gm`` (its placeholders, then its get_attr nodes, each
            in graph order), whether the value passed at run time requires grad.

    Raises:
        Unsupported: the graph cannot be differentiated as one graph (the caller runs it op by op).
    """
    tracer = JointTracer(_shape_env(gm))
    graph = tracer.graph
    env, placeholders, attributes, regions = {}, [], [], {}
    inputs_in_order = [n for n in gm.graph.nodes if n.op == "placeholder"] + [
        n for n in gm.graph.nodes if n.op == "get_attr"]
    flags = dict(zip(inputs_in_order, requires_grad))
    previous, TRACING.tracer = TRACING.tracer, tracer
    try:
        for node in gm.graph.nodes:
            if node.op in ("placeholder", "get_attr"):
                meta = node.meta.get("val")
                if not isinstance(meta, TensorMeta):
                    raise Unsupported(f"graph input {node.name} is not a tensor (a symbolic int)")
                new = graph.placeholder(node.name) if node.op == "placeholder" else graph.get_attr(node.target)
                env[node] = ProxyTensor.create(new, meta)
                tracer.sym_nodes.note_input(new, meta._sizes)
                (placeholders if node.op == "placeholder" else attributes).append(new)
                if flags[node]:
                    tracer.requires_grad.add(new)
            elif node.op == "call_function" and node.target in SIZE_FUNCTIONS:
                env[node] = node.meta["val"]  # a size: the joint graph computes it again where needed
            elif node.op == "call_function":
                args, kwargs = _lookup(node.args, env), _lookup(node.kwargs, env)
                target = node.target
                if target is scan:  # NOTE: [scan in the joint graph]
                    tracer.recording = node.meta.get("grad_enabled") is not False
                    env[node] = trace_scan(tracer, TapeEntry, *args, **kwargs)
                    tracer.recording = False
                    continue
                if not isinstance(target, Op) and target is not operator.getitem:
                    raise Unsupported(f"graph node {node.format_node()} is not a registry op")
                tracer.recording = node.meta.get("grad_enabled") is not False
                tracer.dirty_write = node.meta.get("custom_function_dirty", False)
                env[node] = target(*args, **kwargs)
                tracer.recording = tracer.dirty_write = False
                note_region(tracer, node, env, regions)  # NOTE: [custom autograd.Function in the graph]
            elif node.op == "output":
                outputs = list(_lookup(node.args[0], env))
            else:
                raise Unsupported(f"graph node {node.format_node()} ({node.op})")
        if any(regions.values()):  # a custom Function whose backward would never be called
            raise Unsupported("a custom autograd.Function region was not completed in the joint graph")
        output_nodes = [tracer._nodes(o) for o in outputs]
        forward_nodes = set(graph.nodes)
        tangents, grads = tracer.backward(outputs)
    finally:
        TRACING.tracer = previous
    inputs = placeholders + attributes
    input_grads = {n: grads[n].node for n in inputs if n in grads}
    return JointGraph(graph, inputs, output_nodes, forward_nodes, tangents, input_grads)


def _shape_env(gm):
    """The ShapeEnv of ``gm``'s symbolic sizes (None: all sizes are static)."""
    for node in gm.graph.nodes:
        meta = node.meta.get("val")
        for size in getattr(meta, "_sizes", ()) if isinstance(meta, TensorMeta) else (meta,):
            if type(size) is SymInt:
                return size.env
    return None


def _lookup(value, env):
    if isinstance(value, (tuple, list)):
        return type(value)(_lookup(v, env) for v in value)
    if isinstance(value, dict):
        return {k: _lookup(v, env) for k, v in value.items()}
    if isinstance(value, slice):
        return slice(_lookup(value.start, env), _lookup(value.stop, env), _lookup(value.step, env))
    return env[value] if isinstance(value, Node) else value
