"""Node: one operation of a Graph, with its arguments, users and metadata."""
from __future__ import annotations

from typing import Any, Callable

from ..ops.core.registry import Op
from .purity import is_pure_call

IR_OPS = ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output")


def map_aggregate(value: Any, fn: Callable[[Any], Any]) -> Any:
    """Apply ``fn`` to every leaf of nested tuples/lists/dicts/slices, rebuilding containers.

    Argument structures are as deep as the code that built them, never as deep as the
    graph, so recursing here is bounded (NOTE: [iterative graph algorithms] concerns
    walks over nodes).
    """
    if isinstance(value, tuple):
        mapped = tuple(map_aggregate(v, fn) for v in value)
        # Named tuples (e.g. a ``(values, indices)`` result) keep their type.
        return type(value)(*mapped) if hasattr(value, "_fields") else mapped
    if isinstance(value, list):
        return [map_aggregate(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: map_aggregate(v, fn) for k, v in value.items()}
    if isinstance(value, slice):
        return slice(map_aggregate(value.start, fn), map_aggregate(value.stop, fn), map_aggregate(value.step, fn))
    return fn(value)


def map_arg(value: Any, fn: Callable[["Node"], Any]) -> Any:
    """Apply ``fn`` to every Node inside ``value``; constants are kept as they are."""
    return map_aggregate(value, lambda v: fn(v) if isinstance(v, Node) else v)


def nodes_in(value: Any) -> dict:
    """The Nodes inside ``value``, in first-appearance order, as an ordered set."""
    found: dict[Node, None] = {}
    map_arg(value, found.setdefault)
    return found


class Node:
    """One operation in a :class:`Graph`.

    Attributes:
        graph: the owning graph.
        name: unique within the graph; also the variable name in generated code.
        op: one of ``IR_OPS``.
        target: what ``op`` acts on: an input name (placeholder), an attribute's qualified
            name (get_attr, call_module), a callable (call_function), a method name
            (call_method), or ``"output"``.
        users: ordered set (``dict`` keys) of nodes that read this node; maintained by
            the graph, never edit it directly.
        meta: free-form metadata; ``meta["val"]`` holds the output TensorMeta (or tuple).

    Example:
        >>> g = Graph(); x = g.placeholder("x"); y = g.call_function(ops.neg, (x,))
        >>> list(x.users)
        [neg]
    """

    def __init__(self, graph, name: str, op: str, target, args: tuple, kwargs: dict):
        if op not in IR_OPS:
            raise ValueError(f"unknown IR op {op!r}; expected one of {IR_OPS}")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self.users: dict[Node, None] = {}
        self.meta: dict[str, Any] = {}
        self._input_nodes: dict[Node, None] = {}
        self._args: tuple = ()
        self._kwargs: dict = {}
        self._prev: Node = self
        self._next: Node = self
        self._erased = False
        self._update_args_kwargs(tuple(args), dict(kwargs))

    # -- arguments and use lists -------------------------------------------------------
    @property
    def args(self) -> tuple:
        return self._args

    @args.setter
    def args(self, value) -> None:
        self._update_args_kwargs(tuple(value), self._kwargs)

    @property
    def kwargs(self) -> dict:
        return self._kwargs

    @kwargs.setter
    def kwargs(self, value) -> None:
        self._update_args_kwargs(self._args, dict(value))

    def update_arg(self, index: int, value) -> None:
        args = list(self._args)
        args[index] = value
        self.args = args

    def update_kwarg(self, key: str, value) -> None:
        self.kwargs = {**self._kwargs, key: value}

    @property
    def all_input_nodes(self) -> list:
        """The distinct Nodes this node reads, in order of appearance."""
        return list(self._input_nodes)

    def _update_args_kwargs(self, args: tuple, kwargs: dict) -> None:
        for node in self._input_nodes:
            node.users.pop(self, None)
        self._args, self._kwargs = args, kwargs
        self._input_nodes = nodes_in((args, kwargs))
        for node in self._input_nodes:
            if node.graph is not self.graph:
                raise ValueError(f"argument {node.name} of {self.name} belongs to another graph")
            node.users[self] = None

    def replace_input_with(self, old: "Node", new) -> None:
        """Make this node read ``new`` wherever it read ``old``."""
        swap = lambda n: new if n is old else n  # noqa: E731
        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    def replace_all_uses_with(self, replace_with, delete_user_cb: Callable | None = None,
                              *, propagate_meta: bool = False) -> list:
        """Point every user of this node at ``replace_with`` (a Node or a constant).

        Args:
            replace_with: the new value users read.
            delete_user_cb: if given, only users for which it returns True are rewired.
            propagate_meta: copy this node's ``meta`` entries onto ``replace_with`` where
                it has none.

        Returns:
            The users that were rewired.

        Example:
            >>> add.replace_all_uses_with(mul)   # every reader of %add now reads %mul
        """
        if isinstance(replace_with, Node):
            if replace_with.graph is not self.graph:
                raise ValueError("replace_all_uses_with: replacement belongs to another graph")
            if propagate_meta:
                for key, value in self.meta.items():
                    replace_with.meta.setdefault(key, value)
        changed = [u for u in self.users if delete_user_cb is None or delete_user_cb(u)]
        for user in changed:
            user.replace_input_with(self, replace_with)
        return changed

    # -- position in the graph ---------------------------------------------------------
    @property
    def next(self) -> "Node":
        return self._next

    @property
    def prev(self) -> "Node":
        return self._prev

    def prepend(self, node: "Node") -> None:
        """Move (or insert) ``node`` to sit immediately before this node."""
        if node is self:
            return
        if node.graph is not self.graph:
            raise ValueError("prepend: node belongs to another graph")
        if node._erased:
            raise ValueError(f"prepend: {node.name} was erased; create a new node instead")
        node._unlink()
        prev = self._prev
        prev._next, node._prev, node._next, self._prev = node, prev, self, node

    def append(self, node: "Node") -> None:
        """Move (or insert) ``node`` to sit immediately after this node."""
        self._next.prepend(node)

    def _unlink(self) -> None:
        prev, nxt = self._prev, self._next
        prev._next, nxt._prev = nxt, prev
        self._prev = self._next = self

    # -- properties used by passes -----------------------------------------------------
    def is_impure(self) -> bool:
        """True if removing or merging this node could change what the program does."""
        if self.op in ("placeholder", "output"):
            return True
        return not is_pure_call(self.op, self.target)

    def format_node(self) -> str:
        """The node as one line of ``str(graph)``: ``%name : [users=N] = op[target=T](args = ...)``."""
        if self.op == "output":
            return f"return {format_arg(self._args[0], node_prefix='') if self._args else None}"
        line = f"%{self.name} : [users={len(self.users)}] = {self.op}[target={format_target(self.target)}]"
        if self.op == "placeholder":
            return line
        if self.op != "get_attr" or self._args or self._kwargs:
            line += f"(args = {format_arg(self._args)}"
            if self._kwargs:
                line += f", kwargs = {format_arg(self._kwargs)}"
            line += ")"
        return line

    def __repr__(self) -> str:
        return self.name


def format_target(target) -> str:
    """A short readable name for a node target (``dl.ops.add``, ``operator.getitem`` ...)."""
    if isinstance(target, str):
        return target
    if isinstance(target, Op):
        return repr(target)
    module = getattr(target, "__module__", None)
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None)
    if name is None:
        return repr(target)
    if module in (None, "builtins"):
        return name
    return f"{module.replace('_operator', 'operator')}.{name}"


def format_arg(arg, node_prefix: str = "%") -> str:
    """Arguments as ``str(graph)`` shows them: nodes as ``%name``, constants by repr."""
    if isinstance(arg, Node):
        return f"{node_prefix}{arg.name}"
    if isinstance(arg, tuple):
        inner = ", ".join(format_arg(a, node_prefix) for a in arg)
        return f"({inner},)" if len(arg) == 1 else f"({inner})"
    if isinstance(arg, list):
        return "[" + ", ".join(format_arg(a, node_prefix) for a in arg) + "]"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {format_arg(v, node_prefix)}" for k, v in arg.items()) + "}"
    if isinstance(arg, slice):
        parts = (arg.start, arg.stop, arg.step)
        return "slice(" + ", ".join(format_arg(p, node_prefix) for p in parts) + ")"
    return repr(arg)
