"""Dead-code elimination: erase pure nodes whose values nobody reads."""
from __future__ import annotations

from ..graph import Graph


def eliminate_dead_code(module_or_graph, *, delete_unused_attributes: bool = False) -> bool:
    """Erase unread pure nodes; in-place, random and module calls always stay.

    Args:
        module_or_graph: a GraphModule (recompiled if anything changed) or a Graph.
        delete_unused_attributes: also drop module attributes no node refers to any more.

    Returns:
        True if the graph changed.

    Example:
        >>> eliminate_dead_code(gm)   # %unused = mul(%x, 2) disappears, x.add_(1) stays
        True
    """
    graph = module_or_graph if isinstance(module_or_graph, Graph) else module_or_graph.graph
    changed = graph.eliminate_dead_code()
    if not isinstance(module_or_graph, Graph):
        if delete_unused_attributes:
            module_or_graph.delete_unused_attributes()
        if changed:
            module_or_graph.recompile()
    return changed
