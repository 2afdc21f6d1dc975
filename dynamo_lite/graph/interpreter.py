"""Interpreter: runs a GraphModule node by node, one overridable method per IR op."""
from __future__ import annotations

from typing import Any

from .graph import Graph
from .node import Node, map_arg


class Interpreter:
    """Executes a graph one node at a time; subclass and override a method to change one op.

    ``run_node`` fetches a node's arguments from the environment and calls the method
    named after its op (``placeholder``, ``get_attr``, ``call_function``,
    ``call_method``, ``call_module``, ``output``) with ``(target, args, kwargs)``.
    Values are dropped from the environment after their last use, as compiled code does.

    Args:
        module: a GraphModule (attributes come from it) or a bare Graph (no attributes).
        garbage_collect_values: free each value after its last reader has run.

    Example:
        >>> class Tracing(Interpreter):
        ...     def call_function(self, target, args, kwargs):
        ...         print("calling", target)
        ...         return super().call_function(target, args, kwargs)
        >>> Tracing(gm).run(x, y)
    """

    def __init__(self, module, garbage_collect_values: bool = True):
        self.module = None if isinstance(module, Graph) else module
        self.graph: Graph = module if isinstance(module, Graph) else module.graph
        self.garbage_collect_values = garbage_collect_values
        self.env: dict[Node, Any] = {}
        self._free_after: dict[Node, list] = {}
        if garbage_collect_values:
            last_reader: dict[Node, Node] = {}
            for node in self.graph.nodes:
                for arg in node.all_input_nodes:
                    last_reader[arg] = node
            for value, reader in last_reader.items():
                self._free_after.setdefault(reader, []).append(value)

    def run(self, *args, initial_env: dict | None = None) -> Any:
        """Run the graph on positional inputs; returns what the output node returns.

        Args:
            *args: one value per placeholder, in order.
            initial_env: node -> value for nodes that should not be computed.
        """
        self.env = dict(initial_env or {})
        placeholders = [n for n in self.graph.nodes if n.op == "placeholder" and n not in self.env]
        owner = getattr(self.module, "class_name", None)
        _check_arity(f"{owner}.forward" if owner else "forward", placeholders, args)
        self._args_iter = iter(args)
        for node in self.graph.nodes:
            if node not in self.env:
                try:
                    self.env[node] = self.run_node(node)
                except Exception as error:
                    error.add_note(f"While executing {node.format_node()}")
                    raise
            if node.op == "output":
                return self.env[node]
            for value in self._free_after.get(node, ()):
                self.env.pop(value, None)
        return None

    def run_node(self, node: Node) -> Any:
        """Compute one node from the values of its inputs."""
        args, kwargs = self.fetch_args_kwargs_from_env(node)
        return getattr(self, node.op)(node.target, args, kwargs)

    # -- one method per IR op ----------------------------------------------------------
    def placeholder(self, target: str, args: tuple, kwargs: dict) -> Any:
        return next(self._args_iter)

    def get_attr(self, target: str, args: tuple, kwargs: dict) -> Any:
        return self.fetch_attr(target)

    def call_function(self, target, args: tuple, kwargs: dict) -> Any:
        return target(*args, **kwargs)

    def call_method(self, target: str, args: tuple, kwargs: dict) -> Any:
        receiver, *rest = args
        return getattr(receiver, target)(*rest, **kwargs)

    def call_module(self, target: str, args: tuple, kwargs: dict) -> Any:
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target, args: tuple, kwargs: dict) -> Any:
        return args[0]

    # -- helpers -----------------------------------------------------------------------
    def fetch_attr(self, qualname: str) -> Any:
        if self.module is None:
            raise AttributeError(f"a bare Graph has no attribute {qualname!r}; wrap it in a GraphModule")
        return self.module.get_attribute(qualname)

    def fetch_args_kwargs_from_env(self, node: Node) -> tuple:
        lookup = self.env.__getitem__
        return map_arg(node.args, lookup), map_arg(node.kwargs, lookup)


def _check_arity(function: str, placeholders: list, args: tuple) -> None:
    """Raise the TypeError calling the compiled ``forward`` with these arguments would raise."""
    expected = len(placeholders)
    if len(args) > expected:
        raise TypeError(f"{function}() takes {expected} positional arguments but {len(args)} were given")
    missing = [p.name for p in placeholders[len(args):]]
    if missing:
        names = " and ".join(repr(m) for m in missing) if len(missing) <= 2 else (
            ", ".join(repr(m) for m in missing[:-1]) + f", and {missing[-1]!r}")
        plural = "s" if len(missing) > 1 else ""
        raise TypeError(f"{function}() missing {len(missing)} required positional argument{plural}: {names}")
