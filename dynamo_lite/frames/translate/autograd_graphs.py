"""Compiled graphs while autograd records: run them op by op so every op gets its grad_fn.

NOTE: [compiled graphs and autograd] A backend's compiled graph computes values only; it
records no backward history. Every translation is guarded on the grad mode it was traced
under (``GRAD_MODE_SOURCE``), so the mode is known when the graph is built. A graph traced
with grad mode on is wrapped: when a call's inputs or the graph's parameters require grad,
the graph runs op by op through the op registry (the eager semantics, so autograd records
every op exactly as uncompiled code would); otherwise the compiled graph runs. Nodes traced
inside a ``with dl.no_grad()``-like block carry the block's mode in ``node.meta["grad_enabled"]``
and run under it. Compiled training (forward and backward graphs) will replace the
op-by-op path.
"""
from __future__ import annotations

import logging

from ...autograd.grad_mode import GRAD_MODE, set_grad_enabled
from ...graph.interpreter import Interpreter
from ...tensor.tensor import Tensor
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

    def __init__(self, compiled, graph_module, attribute_tensors):
        self.compiled = compiled
        self.graph_module = graph_module
        self.attribute_tensors = attribute_tensors
        self._explained = False

    def __call__(self, *inputs):
        if any(t._requires_grad for t in self.attribute_tensors) or any(
                isinstance(t, Tensor) and t._requires_grad for t in inputs):
            if not self._explained:
                self._explained = True
                LOG.info("graph %s runs op by op through autograd: grad mode is on and an input or parameter "
                         "requires grad (wrap inference in dl.no_grad() to run the compiled graph)",
                         type(self.graph_module).__name__)
            return GradModeInterpreter(self.graph_module).run(*inputs)
        return self.compiled(*inputs)


class GradOffGraph:
    """A compiled graph whose every op was traced with grad off: it runs with grad off."""

    def __init__(self, compiled):
        self.compiled = compiled

    def __call__(self, *inputs):
        with set_grad_enabled(False):
            return self.compiled(*inputs)


def autograd_aware(compiled, graph_module, traced_with_grad: bool):
    """``compiled``, wrapped when autograd could need to record the graph's ops."""
    modes = [node.meta.get("grad_enabled", traced_with_grad) for node in graph_module.graph.nodes
             if node.op in ("call_function", "call_method")]
    if not traced_with_grad and all(mode is False for mode in modes):
        return compiled
    if not any(mode is None or mode for mode in modes):
        return GradOffGraph(compiled)  # an optimizer's step: every op runs with grad off
    attributes = [v for v in graph_module._attributes.values() if isinstance(v, Tensor)]
    return AutogradAwareGraph(compiled, graph_module, attributes)
