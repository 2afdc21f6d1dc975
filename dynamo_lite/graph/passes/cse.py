"""Common-subexpression elimination: pure nodes computing the same thing are merged."""
from __future__ import annotations

from ...tensor.device import device
from ...tensor.dtype import dtype
from ..graph import Graph
from ..node import Node
from ..purity import is_pure_call, possibly_mutated

_MERGEABLE_OPS = ("call_function", "call_method", "get_attr")
# Constants compared by value; anything else (tensors, arrays, lists' contents that are
# objects ...) is compared by identity, which never merges two different objects.
_VALUE_TYPES = (bool, int, str, bytes, complex, type(None), type(Ellipsis), dtype, device)


def _key(value):
    """A hashable key equal for two argument values iff they are interchangeable."""
    if isinstance(value, Node):
        return value
    if isinstance(value, float):
        return (float, repr(value))  # tells 0.0 from -0.0 and 1.0 from 1 / True
    if isinstance(value, _VALUE_TYPES):
        return (type(value), value)
    if isinstance(value, (tuple, list)):
        return (type(value), tuple(_key(v) for v in value))
    if isinstance(value, dict):
        return (dict, tuple((_key(k), _key(v)) for k, v in value.items()))
    if isinstance(value, slice):
        return (slice, _key(value.start), _key(value.stop), _key(value.step))
    return ("id", id(value))


def _node_key(node: Node):
    target = node.target if isinstance(node.target, str) else ("id", id(node.target))
    kwargs = tuple(sorted((k, _key(v)) for k, v in node.kwargs.items()))
    return (node.op, target, _key(node.args), kwargs)


def eliminate_common_subexpressions(module_or_graph) -> int:
    """Replace each pure node that repeats an earlier one with that earlier node.

    Only pure ops merge (random and in-place ops never do), and never a value that is
    written into later, directly or through a view (NOTE: [mutation and aliasing]). Any
    impure node clears what has been seen so far: it may write into memory earlier
    results alias, so a later identical expression can compute something else.

    Args:
        module_or_graph: a GraphModule (recompiled if anything changed) or a Graph.

    Returns:
        How many nodes were removed.

    Example:
        >>> eliminate_common_subexpressions(gm)  # two %x * 2 become one
        1
    """
    graph = module_or_graph if isinstance(module_or_graph, Graph) else module_or_graph.graph
    mutated = possibly_mutated(graph.nodes)
    seen: dict = {}
    removed = 0
    for node in graph.nodes:
        if node.op in _MERGEABLE_OPS and is_pure_call(node.op, node.target) and node not in mutated:
            key = _node_key(node)
            earlier = seen.get(key)
            if earlier is None:
                seen[key] = node
                continue
            node.replace_all_uses_with(earlier)
            for name, value in node.meta.items():
                earlier.meta.setdefault(name, value)
            graph.erase_node(node)
            removed += 1
        elif node.is_impure() and node.op != "placeholder":
            seen.clear()
    if removed and not isinstance(module_or_graph, Graph):
        module_or_graph.recompile()
    return removed
