"""Graph.lint(): ownership, order, names, ops, targets and use lists, checked in one walk."""
from __future__ import annotations

import keyword

from .node import IR_OPS, Node, nodes_in


class LintError(RuntimeError):
    """A graph invariant does not hold (the message names the node and the rule)."""


_TARGET_KIND = {
    "placeholder": (str, "an input name"),
    "get_attr": (str, "a qualified attribute name"),
    "call_module": (str, "a qualified attribute name"),
    "call_method": (str, "a method name"),
    "output": (str, '"output"'),
}


def lint_graph(graph) -> None:
    """Raise LintError unless every invariant of ``graph`` holds.

    Checks: the linked list is consistent and its length matches; every node belongs to
    the graph, has a legal op and target and a unique identifier for a name; every
    input is a live node of this graph defined earlier (topological order); ``users``
    agrees exactly with the arguments; placeholders come first; at most one output and
    nothing after it; get_attr/call_module targets exist on the owning module.
    """
    module = graph.owning_module
    nodes = _walk(graph)
    names: set[str] = set()
    for node in nodes:  # structure first, so later messages can trust the records
        if node.graph is not graph:
            raise LintError(f"node {node.name} belongs to another graph")
        if node._erased:
            raise LintError(f"node {node.name} is erased but still linked")
        _check_name_op_target(node, names)
        names.add(node.name)
        actual = nodes_in((node.args, node.kwargs))
        if list(actual) != list(node._input_nodes):
            raise LintError(f"node {node.name}'s recorded inputs do not match its arguments")
        for arg in actual:
            if arg.graph is not graph:
                raise LintError(f"node {node.name} reads {arg.name}, which belongs to another graph")
            if arg._erased:
                raise LintError(f"node {node.name} reads {arg.name}, which was erased")
        if module is not None and node.op in ("get_attr", "call_module"):
            if not module.has_attribute(node.target):
                raise LintError(f"node {node.name} refers to {node.target!r}, which the module does not hold")
    seen: set[Node] = set()
    seen_other = seen_output = False
    for node in nodes:
        if seen_output:
            raise LintError(f"node {node.name} comes after the output node")
        if node.op == "placeholder" and seen_other:
            raise LintError(f"placeholder {node.name} comes after a non-placeholder node")
        seen_other = seen_other or node.op != "placeholder"
        seen_output = node.op == "output"
        for arg in node._input_nodes:
            if arg not in seen:
                raise LintError(f"node {node.name} reads {arg.name} before it is defined (not topologically ordered)")
            if node not in arg.users:
                raise LintError(f"node {node.name} reads {arg.name} but is missing from its users")
        _check_users(graph, node)
        seen.add(node)
    if seen_output != (graph._output_node is not None):
        raise LintError("the graph's output node record is out of date")


def _walk(graph) -> list:
    """The linked nodes in order, checking the links and the length on the way."""
    nodes = []
    root = graph._root
    node = root._next
    while node is not root:
        if len(nodes) >= graph._len:
            raise LintError(f"node list is longer than the graph's length {graph._len} (a cycle?)")
        _check_links(node)
        nodes.append(node)
        node = node._next
    if len(nodes) != graph._len:
        raise LintError(f"graph length {graph._len} does not match its {len(nodes)} linked nodes")
    return nodes


def _check_links(node: Node) -> None:
    if node._prev._next is not node or node._next._prev is not node:
        raise LintError(f"node {node.name} is not properly linked to its neighbours")


def _check_name_op_target(node: Node, names: set) -> None:
    if node.op not in IR_OPS:
        raise LintError(f"node {node.name} has illegal op {node.op!r}; legal ops are {IR_OPS}")
    if not node.name.isidentifier() or keyword.iskeyword(node.name):
        raise LintError(f"node name {node.name!r} is not a usable Python identifier")
    if node.name in names:
        raise LintError(f"node name {node.name!r} is used twice")
    if node.op == "call_function":
        if not callable(node.target):
            raise LintError(f"call_function {node.name} has a non-callable target {node.target!r}")
    else:
        kind, what = _TARGET_KIND[node.op]
        if not isinstance(node.target, kind):
            raise LintError(f"{node.op} {node.name} needs {what} as target, got {node.target!r}")
    if node.op == "output" and len(node.args) != 1:
        raise LintError(f"output node {node.name} must have exactly one argument")


def _check_users(graph, node: Node) -> None:
    for user in node.users:
        if user.graph is not graph or user._erased:
            raise LintError(f"node {node.name} lists {user.name} as a user, which is not a live node here")
        if node not in user._input_nodes:
            raise LintError(f"node {node.name} lists {user.name} as a user, but {user.name} does not read it")
