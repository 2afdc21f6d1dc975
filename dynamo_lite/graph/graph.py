"""Graph: an ordered list of Nodes with builders, insertion points, copying and printing."""
from __future__ import annotations

import contextlib
import copy
import weakref
from typing import Any, Callable, Iterator

from .namespace import Namespace
from .node import Node, map_arg


class _NodeList:
    """The nodes of a graph in order; erasing the current node while iterating is safe."""

    def __init__(self, graph: "Graph", reverse: bool = False):
        self._graph, self._reverse = graph, reverse

    def __len__(self) -> int:
        return self._graph._len

    def __iter__(self) -> Iterator[Node]:
        root = self._graph._root
        step = "_prev" if self._reverse else "_next"
        # NOTE: [iterating while erasing] an erased node keeps its old neighbour pointers,
        # so the walk continues from it into the live list.
        node = getattr(root, step)
        while node is not root:
            if not node._erased:
                yield node
            node = getattr(node, step)

    def __reversed__(self) -> "_NodeList":
        return _NodeList(self._graph, not self._reverse)

    def __repr__(self) -> str:
        return repr(list(self))


class Graph:
    """A straight-line tensor program: placeholders, operations, one output.

    Nodes are built with :meth:`placeholder`, :meth:`get_attr`, :meth:`call_function`,
    :meth:`call_method`, :meth:`call_module` and :meth:`output`. New nodes go before the
    output node (or at the end while there is none) unless an ``inserting_before`` /
    ``inserting_after`` block says otherwise; placeholders always go after the last
    placeholder so that inputs stay first.

    Example:
        >>> g = Graph()
        >>> x = g.placeholder("x")
        >>> y = g.call_function(ops.mul, (x, 2))
        >>> g.output(y)
        >>> print(g)
        graph():
            %x : [users=1] = placeholder[target=x]
            %mul : [users=1] = call_function[target=dl.ops.mul](args = (%x, 2))
            return mul
    """

    def __init__(self):
        root = Node.__new__(Node)
        root.graph, root.name, root.op, root._erased = self, "", "root", False
        root._prev = root._next = root
        self._root = root
        self._len = 0
        self._namespace = Namespace()
        self._insert_point: tuple | None = None  # None: before output / at end
        self._output_node: Node | None = None
        self._owning_module = None

    # -- reading -----------------------------------------------------------------------
    @property
    def nodes(self) -> _NodeList:
        return _NodeList(self)

    @property
    def output_node(self) -> Node | None:
        return self._output_node

    @property
    def owning_module(self):
        """The GraphModule that compiled this graph last, if it is still alive."""
        return self._owning_module() if self._owning_module is not None else None

    @owning_module.setter
    def owning_module(self, module) -> None:
        self._owning_module = weakref.ref(module) if module is not None else None

    def find_nodes(self, *, op: str, target: Any = None) -> list:
        """Nodes with the given IR op (and target, compared by identity or equality)."""
        return [n for n in self.nodes if n.op == op and (target is None or n.target is target or n.target == target)]

    # -- building ----------------------------------------------------------------------
    def create_node(self, op: str, target, args=(), kwargs=None, name: str | None = None) -> Node:
        """Make a node at the current insertion point; the name defaults to one from the target."""
        if op == "output" and self._output_node is not None:
            raise ValueError("graph already has an output node; edit its args instead")
        candidate = name if name is not None else _default_name(op, target)
        node = Node(self, self._namespace.create_name(candidate), op, target, args, kwargs or {})
        self._insert(node)
        self._len += 1
        if op == "output":
            self._output_node = node
        return node

    def placeholder(self, name: str) -> Node:
        """An input of the graph, in order of creation (``forward``'s parameter ``name``)."""
        return self.create_node("placeholder", name, name=name)

    def get_attr(self, qualname: str) -> Node:
        """A value held by the owning GraphModule under ``qualname`` (parameter, constant)."""
        return self.create_node("get_attr", qualname)

    def call_function(self, target: Callable, args=(), kwargs=None, name: str | None = None) -> Node:
        """``target(*args, **kwargs)``; ``target`` is usually a registry Op."""
        return self.create_node("call_function", target, args, kwargs, name)

    def call_method(self, method: str, args=(), kwargs=None, name: str | None = None) -> Node:
        """``args[0].method(*args[1:], **kwargs)``: a Tensor method call."""
        return self.create_node("call_method", method, args, kwargs, name)

    def call_module(self, qualname: str, args=(), kwargs=None, name: str | None = None) -> Node:
        """Call the object the owning GraphModule holds under ``qualname``."""
        return self.create_node("call_module", qualname, args, kwargs, name)

    def output(self, value) -> Node:
        """The graph's result: a node, a constant, or nested tuples/lists/dicts of them."""
        return self.create_node("output", "output", (value,))

    def _insert(self, node: Node) -> None:
        if node.op == "placeholder":
            anchor = self._root
            while anchor._next.op == "placeholder":
                anchor = anchor._next
            anchor.append(node)
            return
        point = self._insert_point
        if point is None:
            (self._output_node or self._root).prepend(node)
            return
        where, anchor = point
        if anchor._erased:
            raise RuntimeError(f"insertion point {anchor.name} was erased")
        if where == "before":
            anchor.prepend(node)
        else:
            anchor.append(node)
            self._insert_point = ("after", node)  # keep creation order after the anchor

    @contextlib.contextmanager
    def inserting_before(self, node: Node | None = None):
        """New nodes go immediately before ``node`` (if None: after the placeholders)."""
        if node is None:
            node = self._root._next
            while node.op == "placeholder":
                node = node._next
        saved = self._insert_point
        self._insert_point = ("before", node)
        try:
            yield
        finally:
            self._insert_point = saved

    @contextlib.contextmanager
    def inserting_after(self, node: Node | None = None):
        """New nodes go after ``node`` (at the end if None), in the order they are made."""
        saved = self._insert_point
        self._insert_point = ("after", node if node is not None else self._root._prev)
        try:
            yield
        finally:
            self._insert_point = saved

    def erase_node(self, node: Node) -> None:
        """Remove a node that nobody reads any more.

        Raises:
            RuntimeError: the node still has users (rewire them first).
        """
        if node.graph is not self or node._erased:
            raise RuntimeError(f"erase_node: {node.name} is not a live node of this graph")
        if node.users:
            raise RuntimeError(
                f"Tried to erase Node {node.name} but it still had {len(node.users)} users in "
                f"the graph: {list(node.users)}!"
            )
        if self._insert_point is not None and self._insert_point[1] is node:
            where = self._insert_point[0]
            self._insert_point = (where, node._next if where == "before" else node._prev)
        node._update_args_kwargs((), {})
        prev, nxt = node._prev, node._next
        prev._next, nxt._prev = nxt, prev  # node keeps its pointers: NOTE: [iterating while erasing]
        node._erased = True
        self._len -= 1
        if node is self._output_node:
            self._output_node = None

    # -- copying -----------------------------------------------------------------------
    def node_copy(self, node: Node, arg_transform: Callable[[Node], Any] = lambda n: n) -> Node:
        """Copy ``node`` (from any graph) into this one, mapping its input nodes through ``arg_transform``."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        new = self.create_node(node.op, node.target, args, kwargs, name=node.name)
        new.meta = copy.copy(node.meta)
        return new

    def graph_copy(self, src: "Graph", val_map: dict) -> Any:
        """Copy every node of ``src`` except its output into this graph.

        Nodes already in ``val_map`` are not copied but mapped (e.g. ``src``'s placeholders
        onto existing nodes, to inline ``src``). ``val_map`` is filled with the copies.

        Returns:
            ``src``'s output value with nodes mapped, or None if it has no output.
        """
        for node in src.nodes:
            if node.op == "output":
                return map_arg(node.args[0], val_map.__getitem__)
            if node not in val_map:
                val_map[node] = self.node_copy(node, val_map.__getitem__)
        return None

    def __deepcopy__(self, memo) -> "Graph":
        new = Graph()
        memo[id(self)] = new
        val_map: dict = {}
        result = new.graph_copy(self, val_map)
        if self._output_node is not None:
            out = new.output(result)
            out.meta = copy.copy(self._output_node.meta)
        new._namespace = self._namespace.copy()  # names stay identical and never reused
        return new

    def copy(self) -> "Graph":
        """An independent copy: same names, copied ``meta`` dicts (values shared)."""
        return copy.deepcopy(self)

    # -- checking and cleaning -----------------------------------------------------------
    def lint(self) -> None:
        """Check the graph's invariants; raises ``LintError`` naming the first violation."""
        from .lint import lint_graph

        lint_graph(self)

    def eliminate_dead_code(self, is_impure_node: Callable[[Node], bool] | None = None) -> bool:
        """Erase nodes nobody reads, keeping impure ones (in-place, random, module calls).

        One backward pass suffices: a node's users all come after it, so they have been
        decided by the time the walk reaches it.

        Returns:
            True if any node was erased.
        """
        impure = is_impure_node or Node.is_impure
        changed = False
        for node in reversed(self.nodes):
            if not node.users and not impure(node):
                self.erase_node(node)
                changed = True
        return changed

    # -- printing ----------------------------------------------------------------------
    def __str__(self) -> str:
        lines = ["graph():"] + ["    " + n.format_node() for n in self.nodes]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<Graph with {self._len} nodes>"

    def print_tabular(self) -> str:
        """Print (and return) a table of opcode, name, target, args, kwargs, value."""
        from .printing import format_tabular

        text = format_tabular(self)
        print(text)
        return text

    def to_dot(self, groups=None) -> str:
        """Graphviz DOT text of the graph (fusion ``groups`` drawn as clusters)."""
        from .printing import to_dot

        return to_dot(self, groups)

    def to_svg(self, groups=None) -> str:
        """SVG text rendered by the ``dot`` program or the ``graphviz`` package."""
        from .printing import render_svg

        return render_svg(self.to_dot(groups))


_NAME_FROM_TARGET = {
    "placeholder": str,
    "get_attr": str,
    "call_module": str,
    "call_method": str,
    "output": lambda target: "output",
    "call_function": lambda target: getattr(target, "__name__", None) or type(target).__name__,
}


def _default_name(op: str, target) -> str:
    if op not in _NAME_FROM_TARGET:
        raise ValueError(f"unknown IR op {op!r}")
    return _NAME_FROM_TARGET[op](target)
