"""Constant folding: evaluate pure subgraphs that read no graph input, once, at compile time."""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

from ..node import Node, map_arg
from ..purity import is_pure_call, possibly_mutated

_COMPUTING_OPS = ("call_function", "call_method")
# Results of these types are written into the code as literals instead of attributes.
_LITERAL_TYPES = (bool, int, float, complex, str, type(None))


@dataclass
class FoldResult:
    """What :func:`fold_constants` did.

    Attributes:
        attributes: qualified names of the new attributes holding folded values.
        inlined: nodes replaced by a Python literal (e.g. a folded ``len``).
        sources: attributes whose values were read to fold; the folded values are
            snapshots of them, so a caller that lets those change between calls must
            re-fold (or guard on them).
    """

    attributes: list = field(default_factory=list)
    inlined: int = 0
    sources: list = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.attributes or self.inlined)


def _constant_nodes(nodes: list, excluded: set) -> dict:
    """Nodes computable without any placeholder: get_attrs and pure ops over them (ordered set)."""
    const: dict[Node, None] = {}
    for node in nodes:
        if node in excluded:
            continue
        if node.op == "get_attr":
            const[node] = None
        elif (node.op in _COMPUTING_OPS and is_pure_call(node.op, node.target)
              and all(arg in const for arg in node.all_input_nodes)):
            const[node] = None
    return const


def _evaluate(module, nodes: list, const: dict) -> dict:
    """Run the constant nodes eagerly; a node that raises is left for run time (and so are its users)."""
    env: dict = {}
    for node in nodes:
        if node not in const or any(arg not in env for arg in node.all_input_nodes):
            continue
        args = map_arg(node.args, env.__getitem__)
        kwargs = map_arg(node.kwargs, env.__getitem__)
        try:
            if node.op == "get_attr":
                env[node] = module.get_attribute(node.target)
            elif node.op == "call_function":
                env[node] = node.target(*args, **kwargs)
            else:
                env[node] = getattr(args[0], node.target)(*args[1:], **kwargs)
        except Exception:  # noqa: BLE001 - eager execution will raise it where it belongs
            continue
    return env


def _is_literal(value) -> bool:
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return all(_is_literal(v) for v in value)
    return isinstance(value, _LITERAL_TYPES)


def _source_attributes(folded: list) -> list:
    """Qualified names of the attributes the folded values were computed from."""
    sources, stack, visited = set(), list(folded), set()
    while stack:
        node = stack.pop()
        if node in visited:
            continue
        visited.add(node)
        if node.op == "get_attr":
            sources.add(node.target)
        stack.extend(node.all_input_nodes)
    return sorted(sources)


def _attribute_name(module, node: Node) -> str:
    base, n = f"_folded_{node.name}", 0
    name = base
    while module.has_attribute(name):
        n += 1
        name = f"{base}_{n}"
    return name


def fold_constants(module) -> FoldResult:
    """Evaluate every pure computation that reads no placeholder and store its value.

    A folded tensor becomes a new attribute read by a ``get_attr`` node; a folded Python
    scalar becomes a literal in its users' arguments. Random ops are impure, so they
    are never folded; values and attributes that an in-place op in the graph writes
    into (directly or through views) are not constants. The folded nodes are erased and
    the module recompiled.

    Args:
        module: the GraphModule to fold (attributes are read from and added to it).

    Returns:
        A :class:`FoldResult`.

    Example:
        >>> fold_constants(gm).attributes      # %t = t(%w); %mm = mm(%x, %t) ->
        ['_folded_t']                          # %_folded_t = get_attr; mm(%x, %_folded_t)
    """
    graph = module.graph
    nodes = list(graph.nodes)
    # A value written into in the graph must be computed afresh on every call, and an
    # attribute written into is no constant (NOTE: [mutation and aliasing]).
    const = _constant_nodes(nodes, possibly_mutated(nodes))
    env = _evaluate(module, nodes, const)
    result = FoldResult()
    folded: list[Node] = []
    for node in nodes:
        if node.op == "get_attr" or node not in env:
            continue
        if all(user in env for user in node.users):
            continue  # only the frontier is stored; interior nodes die with it
        value = env[node]
        if _is_literal(value):
            node.replace_all_uses_with(value, lambda user: user not in env)
            result.inlined += 1
        else:
            name = _attribute_name(module, node)
            module.set_attribute(name, value)
            with graph.inserting_before(node):
                replacement = graph.get_attr(name)
            replacement.meta = copy.copy(node.meta)
            node.replace_all_uses_with(replacement, lambda user: user not in env)
            result.attributes.append(name)
        folded.append(node)
    if not folded:
        return result
    result.sources = _source_attributes(folded)
    for node in reversed(nodes):  # users before producers, so chains die completely
        if node in env and not node.users and node.graph is graph and not node._erased:
            graph.erase_node(node)
    module.recompile()
    return result
