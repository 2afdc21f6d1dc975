"""Run a partitioned graph: the compiled forward, and one CompiledFunctionBackward node for autograd.

NOTE: [compiled function node] A call runs the backend's compiled forward graph, which
returns the captured graph's outputs and the saved intermediates (NOTE: [recompute rule]).
The outputs that carry a gradient get one ``CompiledFunctionBackward`` node as their
``grad_fn``; its edges are the gradient edges of the inputs and parameters gradients reach.
On ``backward()`` the engine calls the node once with every output's gradient (zeros for
an output that got none); it runs the backend's compiled backward graph and returns the
input gradients, so no per-op node of the compiled region is ever created or run.
Saved tensors keep eager's checks: a saved value modified in place since the forward
raises eager's "modified by an inplace operation" error, and a second backward without
``retain_graph=True`` raises eager's error (when something was saved).
``create_graph=True`` (double backward) cannot use the compiled backward, whose outputs
have no history: the node then runs the captured graph again op by op on the same inputs
and differentiates that with the eager engine, which records the backward for the next
order. That needs the forward to be repeatable: a graph with random or in-place ops
raises instead of drawing a second mask or updating a buffer twice.
"""
from __future__ import annotations

import logging
import operator

from ...autograd.engine import grad as autograd_grad
from ...autograd.grad_mode import GRAD_MODE
from ...autograd.node import FREED_MESSAGE, Node, gradient_edge
from ...autograd.recording import history, set_history
from ...ops.core.registry import REGISTRY
from ...tensor.meta import TensorMeta
from ...tensor.rebinds import REBINDS
from ...tensor.tensor import Tensor
from .call_state import AttributeState, saved_layout

LOG = logging.getLogger("dynamo_lite.aot")
OPS = REGISTRY

DOUBLE_BACKWARD_IMPURE = (
    "double backward (create_graph=True) through a compiled graph with random or in-place ops is not "
    "supported: the forward would run a second time. Run this part eagerly or under dl.no_grad()."
)


class CompiledFunctionBackward(Node):
    """The backward of one compiled graph: runs the backend's compiled backward graph.

    Attributes:
        output_metas: per forward output, its TensorMeta if it carries a gradient, else None.
    """

    def __init__(self, function, edges, saved, versions, replay, output_metas):
        super().__init__(edges)
        self.function = function
        self.output_metas = output_metas
        self.saved = saved
        self.versions = versions
        self.replay = replay  # (inputs, attribute tensors) for a double backward

    def release(self) -> None:
        super().release()
        if self.saved:  # like OpNode: only a node that saved values refuses a second backward
            self.saved = self.replay = None

    def apply(self, grad_outputs: list) -> list:
        if self.saved is None:
            raise RuntimeError(FREED_MESSAGE)
        for tensor, version in zip(self.saved, self.versions):
            if version is not None and tensor._storage.version != version:  # None: a saved size (an int)
                raise RuntimeError(_modified_message(tensor, version))
        grads = [grad_outputs[i] if i < len(grad_outputs) else None for i in self.function.tangent_outputs]
        if GRAD_MODE.enabled:
            return self._differentiate_eagerly(grads)
        tangents = [g if g is not None else _zeros(self.output_metas[i])
                    for g, i in zip(grads, self.function.tangent_outputs)]
        return list(self.function.backward_fn(*self.saved, *tangents))

    def _differentiate_eagerly(self, grads: list) -> list:
        """The input gradients with history, from an op-by-op rerun (NOTE: [compiled function node])."""
        if self.function.impure:
            raise RuntimeError(DOUBLE_BACKWARD_IMPURE)
        inputs, attributes = self.replay
        outputs = self.function.rerun(*inputs)
        picked = [(outputs[i], g) for i, g in zip(self.function.tangent_outputs, grads) if g is not None]
        targets = [self.function.input_value(inputs, attributes, i) for i in self.function.grad_inputs]
        return list(autograd_grad([o for o, _ in picked], targets, [g for _, g in picked], create_graph=True,
                                  allow_unused=True))


def _zeros(meta: TensorMeta):
    return OPS["zeros"](size=meta._sizes, dtype=meta._dtype, device=meta._device)


def _modified_message(tensor: Tensor, version: int) -> str:
    return ("one of the variables needed for gradient computation has been modified by an inplace operation: "
            f"[dl.{tensor._dtype.name} [{', '.join(map(str, tensor._sizes))}]], which is saved by "
            f"CompiledFunctionBackward, is at version {tensor._storage.version}; expected version {version} instead.")


class CompiledFunction:
    """A compiled forward and backward pair standing in for one captured graph.

    Called like the captured graph (its inputs, returning its outputs); the outputs that
    carry a gradient get a ``CompiledFunctionBackward`` node (NOTE: [compiled function node]).

    Attributes:
        graph_module: the captured graph (what runs op by op on a double backward).
        forward_module, backward_module: the partitioned graphs the backend compiled.
    """

    def __init__(self, graph_module, partition, forward_module, forward_fn, backward_module, backward_fn,
                 input_requires_grad, rerun):
        self.graph_module = graph_module
        self.forward_module, self.forward_fn = forward_module, forward_fn
        self.backward_module, self.backward_fn = backward_module, backward_fn
        self.saved = partition.saved
        self.tangent_outputs = partition.tangent_outputs
        self.grad_inputs = partition.grad_inputs
        self.rerun = rerun
        outputs = forward_module.graph.output_node.args[0]
        self.output_count = partition.output_count
        tangents = set(self.tangent_outputs)
        self.output_metas = [outputs[i].meta.get("val") if i in tangents else None for i in range(self.output_count)]
        self.symbolic = any(not all(type(s) is int for s in m._sizes) for m in self.output_metas if m is not None)
        self.attribute_names = [n.target for n in graph_module.graph.nodes if n.op == "get_attr"]
        self.placeholder_count = sum(1 for n in graph_module.graph.nodes if n.op == "placeholder")
        self.input_requires_grad = input_requires_grad
        self.impure = any(n.op == "call_function" and not getattr(n.target, "is_pure", True)
                          for n in graph_module.graph.nodes)
        # per-call work over the parameters reused between calls (NOTE: [flat training-call overhead])
        self.saved_input_positions, self.saved_attribute_names = saved_layout(self.saved)
        self._pick_inputs = (operator.itemgetter(*self.saved_input_positions)
                             if len(self.saved_input_positions) > 1 else None)
        self._exact_names = all(name in graph_module._attributes for name in self.attribute_names)
        self._input_flags = input_requires_grad[:self.placeholder_count]
        self._attribute_state = None

    def _attributes(self) -> list:
        if self._exact_names:
            return list(map(self.graph_module._attributes.__getitem__, self.attribute_names))
        return [self.graph_module.get_attribute(name) for name in self.attribute_names]

    def _state(self) -> AttributeState:
        """The reused per-call state, rebuilt when an attribute is another object, refreshed after a rebind."""
        state = self._attribute_state
        if state is None or not self._exact_names or state.version != self.graph_module.attribute_version:
            attributes = self._attributes()  # else: exact names and no set_attribute since, the same objects
            key = tuple(map(id, attributes))
            if state is None or state.key != key:
                state = self._attribute_state = AttributeState(self, attributes, key)
            state.version = getattr(self.graph_module, "attribute_version", None)
        if state.rebinds != REBINDS.count:
            state.refresh()
        return state

    def _saved_inputs(self, inputs: tuple) -> list:
        if self._pick_inputs is not None:
            return list(self._pick_inputs(inputs))
        return [inputs[p] for p in self.saved_input_positions]

    def input_value(self, inputs, attributes, position):
        """Input ``position`` of the joint graph: a call argument, then the get_attr tensors."""
        if position < self.placeholder_count:
            return inputs[position]
        return attributes[position - self.placeholder_count]

    def __call__(self, *inputs):
        state = self._state()
        input_flags = [isinstance(t, Tensor) and t._requires_grad for t in inputs]
        if state.stale or input_flags != self._input_flags:
            # the guards on requires_grad recompile before this happens; never reuse a wrong graph
            LOG.info("graph %s runs op by op: requires_grad of an input or parameter changed since it was "
                     "compiled", self.graph_module.class_name)
            return self.rerun(*inputs)
        mode, GRAD_MODE.enabled = GRAD_MODE.enabled, False  # the backend's ops must not record: this node is their history
        try:
            results = self.forward_fn(*inputs)
        finally:
            GRAD_MODE.enabled = mode
        count = self.output_count
        outputs = tuple(results[:count])
        extra = results[count:]
        saved_inputs = self._saved_inputs(inputs) if self.saved_input_positions else []
        saved = [*saved_inputs, *state.saved_attributes, *extra]
        try:
            versions = [t._storage.version for t in saved_inputs]
            if state.saved_storages is None:
                versions += [t._storage.version for t in state.saved_attributes]
            else:
                versions += [s.version for s in state.saved_storages]
            versions += [t._storage.version for t in extra]
        except AttributeError:  # a saved size (an int) among them
            versions = [t._storage.version if isinstance(t, Tensor) else None for t in saved]
        edges = state.edges
        if state.input_edges:
            edges = list(edges)
            for slot, position in state.input_edges:
                edges[slot] = gradient_edge(history(self.input_value(inputs, state.attributes, position)))
        metas = self.output_metas
        if self.symbolic:  # the zeros of an output without a gradient take this call's sizes
            metas = [TensorMeta.of(outputs[i]) if m is not None else None for i, m in enumerate(metas)]
        node = CompiledFunctionBackward(self, edges, saved, versions, (inputs, state.attributes), metas)
        for i in self.tangent_outputs:
            set_history(outputs[i], node, i)
        return outputs
