"""Functionalize a graph's in-place updates of its inputs: out-of-place ops, one copy back per input.

NOTE: [functionalized updates] An optimizer's graph updates parameters and state in
place, op after op (``exp_avg.lerp_(grad, w)``, ``exp_avg_sq.mul_(b).addcmul_(...)``,
``param.add_(...)``). Backends fuse pure pointwise chains, never in-place ops, so every
update is a pass of its own over the tensor. Here each in-place op on a graph input or
attribute becomes its out-of-place op (``lerp``, ``mul``, ``addcmul``...), later readers
read that new value, and one ``copy_`` per updated input writes its final value back at
the end of the graph: the whole update is one pointwise chain the backend fuses. The
tensors the caller sees are the same objects with the same final values. Their version
counters are bumped by what eager's in-place ops would have added (``extra_versions``:
the copies bump once, the wrapper adds the rest).

Only when that is exact: each in-place op on an input has an out-of-place op of the same
result dtype and sizes, no view is taken of an updated input, the inputs hold distinct
storages (a write through one must not be visible through another), and no reader of an
older value runs after a newer write (the old value is gone in eager). Otherwise the
graph is left as it is. An update of a tensor the graph made (``denom.add_(eps)``) becomes
its out-of-place op too, without a copy, when nothing aliases that tensor.
"""
from __future__ import annotations

import operator

from ...graph.graph import Graph
from ...graph.node import map_arg
from ...ops.core.registry import REGISTRY, Op
from ...tensor.meta import TensorMeta
from ...tensor.symint import same_values
from ...tensor.tensor import Tensor


def _inplace(node) -> bool:
    return node.op == "call_function" and isinstance(node.target, Op) and "inplace" in node.target.tags


def _functional(node):
    """The out-of-place op of an in-place node and its arguments: ``mul_`` -> ``mul`` with the
    same ones, ``copy_(target, value)`` -> ``clone(value)``, ``zero_(t)`` -> ``zeros_like(t)``;
    None when there is none."""
    name = node.target.name
    if name == "copy_":
        return REGISTRY["clone"], node.args[1:2], {}
    if name == "zero_":
        meta = node.args[0].meta.get("val")
        return REGISTRY["zeros_like"], node.args[:1], {"dtype": meta._dtype, "device": meta._device}
    functional = REGISTRY.get(name[:-1]) if name.endswith("_") else None
    return None if functional is None else (functional, node.args, node.kwargs)


def _same_result(node) -> bool:
    """Whether the out-of-place op gives the in-place op's dtype and sizes (a float16 target
    updated with a float32 operand rounds at each in-place step: its chain must too)."""
    found = _functional(node)
    if found is None:
        return False
    functional, args, kwargs = found
    metas = [a.meta.get("val") if hasattr(a, "op") else a for a in args]
    try:
        result = functional.meta(*metas, **kwargs)
    except Exception:  # a meta rule that cannot run on these values: leave the graph alone
        return False
    target = node.meta.get("val")
    return (isinstance(result, TensorMeta) and isinstance(target, TensorMeta) and result._dtype is target._dtype
            and same_values(result._sizes, target._sizes))


def _is_view(node) -> bool:
    return node.op == "call_function" and (node.target is operator.getitem or (
        isinstance(node.target, Op) and "view" in node.target.tags))


def _private(node) -> bool:
    """A tensor the graph made that nothing else aliases: not a view, no view taken of it."""
    return node.op == "call_function" and not _is_view(node) and not _inplace(node) and not any(
        _is_view(user) for user in node.users)


def _plan(graph: Graph, roots: set):
    """``{updating node: the first version of its tensor}`` and the writes per input, or None
    when that would not be the same program (NOTE: [functionalized updates])."""
    root_of, latest, writes = {}, {}, {}
    for node in graph.nodes:
        reads = node.all_input_nodes
        if _inplace(node) and node.args:
            target = node.args[0]
            root = root_of.get(target, target)
            if (root in roots or _private(root)) and _same_result(node):
                if latest.get(root, root) is not target:
                    return None
                root_of[node], latest[root] = root, node
                if root in roots:
                    writes[root] = writes.get(root, 0) + 1
                reads = reads[1:]
            elif root in roots:
                return None
        elif _is_view(node) and any(n in roots or n in root_of for n in reads):
            return None
        if node.op == "output":
            break  # returning any version of a tensor returns the tensor: its final value (below)
        for used in reads:  # a read of an older value after a newer write: not the same program
            root = root_of.get(used, used)
            if latest.get(root, root) is not used:
                return None
    return root_of, writes


def functionalize(gm, example_inputs: list):
    """``(graph module, extra_versions)``: ``gm`` with its input updates functionalized
    (NOTE: [functionalized updates]), or ``(gm, None)`` when that is not exact or not useful.

    ``extra_versions`` lists ``(input position or attribute name, n)``: the version bumps
    eager adds beyond the one of the copy back.
    """
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    attributes = [n for n in gm.graph.nodes if n.op == "get_attr"]
    values = {n: example_inputs[i] for i, n in enumerate(placeholders) if i < len(example_inputs)}
    values.update({n: gm.get_attribute(n.target) for n in attributes})
    tensors = {n: v for n, v in values.items() if isinstance(v, Tensor)}
    plan = _plan(gm.graph, set(tensors))
    if plan is None or not plan[0]:
        return gm, None
    root_of, writes = plan
    storages = [id(t._storage) for t in tensors.values()]
    if len(set(storages)) != len(storages):
        return gm, None
    graph, env, latest = Graph(), {}, {}
    for node in gm.graph.nodes:
        if node.op == "output":
            break
        if node in root_of:
            functional, args, kwargs = _functional(node)
            env[node] = latest[root_of[node]] = graph.call_function(
                functional, map_arg(args, env.__getitem__), map_arg(kwargs, env.__getitem__))
            env[node].meta = dict(node.meta)
        else:
            env[node] = graph.node_copy(node, env.__getitem__)
    copies = {}
    for root, value in latest.items():
        if root in writes:  # an input: its final value is written back into it
            copies[root] = graph.call_function(REGISTRY["copy_"], (env[root], value), {})
            copies[root].meta = dict(root.meta)
    outputs = gm.graph.output_node.args[0]
    final = {root: copies.get(root, value) for root, value in latest.items()}
    graph.output(tuple(final.get(root_of.get(o, o), env[o]) if hasattr(o, "op") else o for o in outputs))
    keys = {n: i for i, n in enumerate(placeholders)}
    keys.update({n: n.target for n in attributes})
    extra = [(keys[root], n - 1) for root, n in writes.items() if n > 1]
    return type(gm)(gm._attributes, graph, class_name=getattr(gm, "class_name", "Graph")), extra
