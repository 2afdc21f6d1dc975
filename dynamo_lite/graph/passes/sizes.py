"""Specialize a graph with symbolic sizes to one concrete input signature.

A graph whose placeholders have symbolic sizes (see NOTE: [symbolic inputs] in
frames/tracing/shape_guards.py) computes its sizes at run time with ``sym_size`` and int
arithmetic. A backend that generates code per shape re-derives every meta from the
actual inputs (ShapeProp) and replaces those size nodes by the ints they take, leaving a
static graph for that signature.
"""
from __future__ import annotations

from ...tensor.symint import SIZE_FUNCTIONS, SymInt, has_symbols
from ..shape_prop import ShapeProp


def is_symbolic(graph) -> bool:
    """True when a placeholder's meta has a symbolic size or is a symbolic int."""
    return any(n.op == "placeholder" and (type(n.meta.get("val")) is SymInt
                                          or has_symbols(getattr(n.meta.get("val"), "_sizes", ())))
               for n in graph.nodes)


def fold_sizes(graph) -> None:
    """Replace size nodes by the ints ShapeProp computed (metas must be concrete)."""
    for node in list(graph.nodes):
        if node.op == "call_function" and node.target in SIZE_FUNCTIONS:
            value = node.meta.get("val")
            if not isinstance(value, int):
                raise ValueError(f"{node.name}: its size is not known for this signature (propagate first)")
            node.replace_all_uses_with(value)
            graph.erase_node(node)


class _GraphWithAttributes:
    """What ShapeProp reads of a module (without generating a GraphModule's code per shape)."""

    def __init__(self, graph, attributes: dict):
        self.graph, self.attributes = graph, attributes

    def get_attribute(self, qualname: str):
        return self.attributes[qualname]


def propagate(graph, attributes: dict, inputs) -> None:
    """Re-derive every meta of ``graph`` (a private copy) from ``inputs``; size nodes keep
    their place and get the ints they take for these inputs."""
    ShapeProp(_GraphWithAttributes(graph, attributes)).propagate(*inputs)


def specialize(graph, attributes: dict, inputs) -> None:
    """Make ``graph`` (a private copy) static for ``inputs``: metas re-derived, sizes folded."""
    propagate(graph, attributes, inputs)
    fold_sizes(graph)


def signature_of(args) -> tuple:
    """The geometry key of a call's tensor arguments: what a per-shape compile is valid for."""
    return tuple((a._sizes, a._strides, a._offset, a._dtype) if hasattr(a, "_sizes")
                 else (int, a) if type(a) is int else (type(a),) for a in args)  # a symbolic int's value counts
