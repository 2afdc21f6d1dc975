"""Compiled graphs while autograd records: a compiled forward and backward, or op by op as a fallback.

NOTE: [compiled graphs and autograd] A backend's compiled graph computes values only; it
records no backward history. Every translation is guarded on the grad mode it was traced
under (``GRAD_MODE_SOURCE``) and on ``requires_grad`` of its tensor inputs and parameters,
so both are known when the graph is built. A graph traced with grad mode on whose inputs
or parameters require grad becomes a compiled forward graph and a compiled backward graph
joined to autograd as one node (frames/aot, NOTE: [joint graph]). When that is not possible
(an in-place op on a tensor requiring grad, symbolic sizes, an op without a derivative
...), the reason is logged and the graph runs op by op through the op registry (the eager
semantics, so autograd records every op exactly as uncompiled code would). Nodes traced
inside a ``with dl.no_grad()``-like block carry the block's mode in
``node.meta["grad_enabled"]`` and run under it.
"""
from __future__ import annotations

import logging
import operator

from ...autograd.grad_mode import GRAD_MODE, set_grad_enabled
from ...backends.registry import compile_graph
from ...graph.interpreter import Interpreter
from ...tensor.tensor import Tensor
from ..aot.bucket_split import split_at_ddp_buckets
from ..aot.compile_joint import compile_joint
from ..aot.functionalize import functionalize
from ..errors import Unsupported
from ..tracing.sources import AttrSource, ConstSource

LOG = logging.getLogger("dynamo_lite.graph_breaks")

#: The grad mode every translation is guarded on (autograd records only while it is on).
GRAD_MODE_SOURCE = AttrSource(ConstSource(GRAD_MODE, "dynamo_lite.autograd.grad_mode.GRAD_MODE"), "enabled",
                              "dl.is_grad_enabled()")


class GradModeInterpreter(Interpreter):
    """Runs a graph through the registry, each node under the grad mode it was traced in."""

    def run_node(self, node):
        mode = node.meta.get("grad_enabled")
        if mode is None or mode == GRAD_MODE.enabled:
            return super().run_node(node)
        with set_grad_enabled(mode):
            return super().run_node(node)


class AutogradAwareGraph:
    """A compiled graph that falls back to op-by-op execution when autograd must record."""

    def __init__(self, compiled, graph_module, attribute_tensors, reason: str):
        self.compiled = compiled
        self.graph_module = graph_module
        self.attribute_tensors = attribute_tensors
        self.reason = reason
        self._explained = False

    def __call__(self, *inputs):
        if any(t._requires_grad for t in self.attribute_tensors) or any(
                isinstance(t, Tensor) and t._requires_grad for t in inputs):
            if not self._explained:
                self._explained = True
                LOG.info("graph %s runs op by op through autograd: %s", self.graph_module.class_name, self.reason)
            return GradModeInterpreter(self.graph_module).run(*inputs)
        return self.compiled(*inputs)


class VersionBumps:
    """A compiled functionalized graph, then the version bumps eager's in-place ops add beyond
    its copies back (NOTE: [functionalized updates])."""

    def __init__(self, compiled, graph_module, extra: list):
        self.compiled = compiled
        self._input_bumps = [(key, n) for key, n in extra if isinstance(key, int)]
        self._attribute_bumps = [(graph_module.get_attribute(key), n) for key, n in extra if not isinstance(key, int)]

    def __call__(self, *inputs):
        result = self.compiled(*inputs)
        for tensor, n in self._attribute_bumps:
            tensor._storage.version += n
        for position, n in self._input_bumps:
            inputs[position]._storage.version += n
        return result


def compile_functionalized(compiler, graph_module, example_inputs: list):
    """The backend's callable for ``graph_module`` with its in-place updates of inputs
    functionalized when that is exact (NOTE: [functionalized updates])."""
    functional, extra = functionalize(graph_module, example_inputs)
    compiled = compile_graph(compiler, functional, example_inputs)
    return VersionBumps(compiled, graph_module, extra) if extra else compiled


class GradOffGraph:
    """A compiled graph whose every op was traced with grad off (an optimizer's step): it runs with grad off."""

    def __init__(self, compiled):
        self.compiled = compiled

    def __call__(self, *inputs):
        with set_grad_enabled(False):
            return self.compiled(*inputs)


def records_history(graph_module, example_inputs: list) -> bool:
    """Whether autograd records any op of ``graph_module`` traced with grad on: some op running
    with grad on reads a tensor that requires grad (the inputs' and parameters' flags are
    guarded, so this holds for every call the graph serves).

    An in-place op or a view keeps its target's flag whatever the mode; another op's result
    requires grad only when it runs with grad on and reads one that does. When nothing is
    recorded, running the whole graph with grad off is the same program (``zero_()`` on the
    grads of ``zero_grad(set_to_none=False)`` after an optimizer's grad-off updates).
    """
    requires = {}
    placeholders = iter(example_inputs)
    for node in graph_module.graph.nodes:
        if node.op == "placeholder":
            value = next(placeholders, None)
            requires[node] = isinstance(value, Tensor) and value._requires_grad
        elif node.op == "get_attr":
            value = graph_module.get_attribute(node.target)
            requires[node] = isinstance(value, Tensor) and value._requires_grad
        elif node.op in ("call_function", "call_method"):
            reads = any(requires.get(n, True) for n in node.all_input_nodes)
            if reads and node.meta.get("grad_enabled", True) is not False:
                return True
            keeps_flag = node.target is operator.getitem or "inplace" in getattr(node.target, "tags", ()) or (
                "view" in getattr(node.target, "tags", ()))
            requires[node] = reads and keeps_flag
    return False


def autograd_aware(compiler, graph_module, example_inputs: list, traced_with_grad: bool):
    """``graph_module`` compiled by ``compiler`` for the grad mode and inputs it was traced with:
    a ``CompiledFunction`` (compiled forward and backward) when autograd must record it,
    else the backend's callable (wrapped to run op by op if autograd needs it after all).
    A graph whose every op runs with grad off (an optimizer's step) runs its in-place
    updates of inputs functionalized."""
    modes = [node.meta.get("grad_enabled", traced_with_grad) for node in graph_module.graph.nodes
             if node.op in ("call_function", "call_method")]
    if traced_with_grad and any("custom_function" in node.meta for node in graph_module.graph.nodes):
        return _with_custom_backward(compiler, graph_module, example_inputs)
    if not traced_with_grad and all(mode is False for mode in modes):
        return compile_graph(compiler, graph_module, example_inputs)
    if not any(mode is None or mode for mode in modes) or (
            False in modes and not records_history(graph_module, example_inputs)):
        # an optimizer's step (with zero_grad(set_to_none=False) zeroing the grads after it)
        return GradOffGraph(compile_functionalized(compiler, graph_module, example_inputs))
    reason = "grad mode is on and an input or parameter requires grad"
    if traced_with_grad:
        split = split_at_ddp_buckets(  # NOTE: [DDP graph split]
            graph_module, lambda piece, inputs: autograd_aware(compiler, piece, inputs, traced_with_grad))
        if split is not None:
            return split
        try:
            function = compile_joint(compiler, graph_module, example_inputs,
                                     lambda *inputs: GradModeInterpreter(graph_module).run(*inputs))
        except Unsupported as exc:
            reason = f"no compiled backward graph: {exc.reason}"
            LOG.info("graph %s: %s", graph_module.class_name, reason)
        except Exception as exc:  # an internal error: the op-by-op path is always correct
            reason = f"no compiled backward graph: internal error {type(exc).__name__}: {exc}"
            LOG.info("graph %s: %s", graph_module.class_name, reason)
        else:
            if function is not None:
                return function
    compiled = compile_graph(compiler, graph_module, example_inputs)
    attributes = [v for v in graph_module._attributes.values() if isinstance(v, Tensor)]
    return AutogradAwareGraph(compiled, graph_module, attributes, reason)


def _with_custom_backward(compiler, graph_module, example_inputs):
    """A graph holding a custom autograd.Function's forward: compiled with its joint graph,
    whose backward is the Function's own (NOTE: [custom autograd.Function in the graph]).
    Running it op by op would differentiate the ops inside forward instead: without a joint
    graph the frame runs eagerly (``Unsupported``)."""
    try:
        function = compile_joint(compiler, graph_module, example_inputs, _no_rerun)
    except Unsupported as exc:
        raise Unsupported(f"a custom autograd.Function without a compiled backward graph: {exc.reason}") from None
    if function is None:  # nothing requires grad: the forward alone is the answer
        return compile_graph(compiler, graph_module, example_inputs)
    return function


def _no_rerun(*inputs):
    """The op-by-op rerun of a graph holding a custom Function (double backward) would
    differentiate the ops inside its forward: refused."""
    raise RuntimeError("a second-order gradient through a compiled custom autograd.Function is not supported: "
                       "run that function uncompiled (dl.compiler.disable)")
