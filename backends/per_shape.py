"""Run a graph with symbolic sizes on a backend that compiles for static shapes: one compile per shape.

NOTE: [backends and symbolic sizes] A backend says it takes graphs with symbolic sizes
as they are by a true ``symbolic_shapes`` attribute (``eager`` runs the graph itself,
``numpy`` specializes per signature on its own). Any other backend is handed a static
copy of the graph for each concrete input signature it meets (``PerShapeCompiled``),
so a backend written for static shapes stays correct on every size the frame's guards
let through; the most recent ``MAX_SHAPES`` compiles are kept.
"""
from __future__ import annotations

from dynamo_lite.graph import GraphModule
from dynamo_lite.graph.passes.sizes import is_symbolic, signature_of, specialize

MAX_SHAPES = 8


class PerShapeCompiled:
    """``compiler``'s function for each signature of the inputs of a symbolic ``gm``."""

    def __init__(self, compiler, gm):
        self.compiler, self.gm = compiler, gm
        self.attributes = {n.target: gm.get_attribute(n.target) for n in gm.graph.nodes if n.op == "get_attr"}
        self.functions: dict = {}

    def compile_for(self, args):
        graph = self.gm.graph.copy()
        specialize(graph, self.attributes, args)
        static = GraphModule(self.attributes, graph, class_name=getattr(self.gm, "class_name", "graph"))
        return self.compiler(static, list(args))

    def __call__(self, *args):
        key = signature_of(args)
        function = self.functions.get(key)
        if function is None:
            if len(self.functions) >= MAX_SHAPES:
                del self.functions[next(iter(self.functions))]
            function = self.functions[key] = self.compile_for(args)
        return function(*args)


def compile_graph(compiler, gm, example_inputs):
    """``compiler(gm, example_inputs)``, through ``PerShapeCompiled`` when ``gm`` has symbolic
    sizes the compiler does not take (see NOTE: [backends and symbolic sizes])."""
    graph = getattr(gm, "graph", None)
    if getattr(compiler, "symbolic_shapes", False) or graph is None or not is_symbolic(graph):
        return compiler(gm, example_inputs)
    per_shape = PerShapeCompiled(compiler, gm)
    per_shape.functions[signature_of(example_inputs)] = per_shape.compile_for(example_inputs)
    return per_shape
