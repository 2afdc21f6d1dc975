"""Exact algebraic simplifications on the backend's copy of a graph.

NOTE: [exact simplifications] Every rewrite keeps each remaining node's meta (shape,
dtype, strides) and every value bit for bit:

- ``x * 1``, ``1 * x``, ``x / 1``, ``x - 0``, ``x ** 1`` become ``x``; ``x + 0`` only for
  integer and bool tensors (for floats ``-0.0 + 0`` is ``+0.0``; ``x + (-0.0)`` is exact
  and dropped). Only where the result has ``x``'s exact meta (no promotion, no layout
  change), is not itself a graph output nor viewed by one (an output must be a new tensor,
  not ``x`` or a view of it), and the graph mutates nothing in place (a dropped copy
  could then observe a mutation).
  Sizes compare as expressions (``same_values``): on a graph with symbolic sizes a
  rewrite holds for every size, and it never adds a guard.
- Consecutive views of one kind merge (``view(view(x))``, ``permute(permute(x))``,
  ``transpose(transpose(x))``) when one view rule from ``x`` gives the same geometry.
- ``linear(x, w, b)`` whose readers are all pointwise splits into ``linear(x, w)`` and
  ``add(_, b)``: the same matmul and the same add the kernel does, but the add now joins
  the readers' fused group instead of making its own pass over memory.

Transposes feeding matmuls need no rewrite: a view costs nothing at run time (its array
is a window over the same memory) and NumPy's matmul takes transposed operands as they
are, without a copy.
"""
from __future__ import annotations

import math

from dynamo_lite.graph.passes.fusion import is_fusible
from dynamo_lite.ops.core.registry import REGISTRY, Op
from dynamo_lite.graph.node import nodes_in
from dynamo_lite.tensor.meta import TensorMeta
from dynamo_lite.tensor.symint import same_values


def simplify(graph) -> dict:
    """Apply every rewrite to ``graph`` in place; returns how many of each were made."""
    counts = {"identity": 0, "views": 0, "linear_bias": 0}
    mutates = any(_is_op(n) and "inplace" in n.target.tags for n in graph.nodes)
    outputs = set(graph.output_node.all_input_nodes) if graph.output_node is not None else set()
    for node in list(graph.nodes):
        if node.op != "call_function" or not isinstance(node.target, Op):
            continue
        if not mutates and not _reaches_an_output(node, outputs) and _drop_identity(node):
            counts["identity"] += 1
        elif node.target.view is not None and _merge_views(graph, node):
            counts["views"] += 1
        elif node.target.name == "linear" and _split_linear_bias(graph, node):
            counts["linear_bias"] += 1
    graph.eliminate_dead_code()
    return counts


def _is_op(node) -> bool:
    return node.op == "call_function" and isinstance(node.target, Op)


def _meta(value):
    meta = getattr(value, "meta", {}).get("val") if hasattr(value, "meta") else None
    return meta if isinstance(meta, TensorMeta) else None


def _same_meta(a, b) -> bool:
    return (a is not None and b is not None and a._dtype == b._dtype and same_values(a._sizes, b._sizes)
            and same_values(a._strides, b._strides))


# -- x * 1 and friends ------------------------------------------------------------------------
def _is_number(value, target: float) -> bool:
    return type(value) in (bool, int, float) and value == target


def _is_negative_zero(value) -> bool:
    return type(value) is float and value == 0 and math.copysign(1.0, value) < 0


def _identity_operand(node):
    """The tensor operand ``node`` returns unchanged, or None (see NOTE: [exact simplifications])."""
    if node.kwargs or len(node.args) != 2:
        return None
    name, (a, b) = node.target.name, node.args
    meta = _meta(node)
    if name == "mul":
        candidates = [x for x, c in ((a, b), (b, a)) if _is_number(c, 1)]
    elif name == "div":
        candidates = [a] if _is_number(b, 1) else []
    elif name == "pow":
        candidates = [a] if type(b) is int and b == 1 else []
    elif name == "sub":
        candidates = [a] if _is_number(b, 0) and not _is_negative_zero(b) else []  # -0.0 - (-0.0) is +0.0
    elif name == "add":
        exact_zero = lambda c: _is_negative_zero(c) or (_is_number(c, 0) and not meta._dtype.is_floating_point)  # noqa: E731
        candidates = [x for x, c in ((a, b), (b, a)) if exact_zero(c)]
    else:
        return None
    for x in candidates:
        if _same_meta(_meta(x), meta):
            return x
    return None


def _reaches_an_output(node, outputs: set) -> bool:
    """Whether ``node`` or a view of it (of a view ...) is a graph output: an output must
    stay a new tensor, not share the dropped node's operand's memory."""
    pending = [node]
    while pending:
        current = pending.pop()
        if current in outputs:
            return True
        pending.extend(user for user in current.users
                       if _is_op(user) and user.target.view is not None and user.args and user.args[0] is current)
    return False


def _drop_identity(node) -> bool:
    operand = _identity_operand(node)
    if operand is None:
        return False
    node.replace_all_uses_with(operand)
    return True


# -- consecutive views ------------------------------------------------------------------------
def _compose_permute(outer_args, inner_args):
    inner, outer = inner_args[0], outer_args[0]
    return (tuple(inner[d] for d in outer),)


# (outer op, inner op) -> the single op's arguments after the input, from (outer args, inner args).
_MERGES = {
    ("view", "view"): lambda outer, inner: tuple(outer),
    ("permute", "permute"): _compose_permute,
    ("transpose", "transpose"): None,  # the same pair twice is no view at all
}


def _merge_views(graph, node) -> bool:
    parent = node.args[0]
    if not _is_op(parent) or parent.target.view is None or parent.kwargs or node.kwargs:
        return False
    if nodes_in((node.args[1:], parent.args[1:])):  # sizes computed at run time
        return False
    key = (node.target.name, parent.target.name)
    if key not in _MERGES:
        return False
    source = parent.args[0]
    source_meta, meta = _meta(source), _meta(node)
    if source_meta is None or meta is None:
        return False
    geometry = (meta._sizes, meta._strides, meta._offset)
    source_geometry = (source_meta._sizes, source_meta._strides, source_meta._offset)
    merge = _MERGES[key]
    if merge is None:
        if set(node.args[1:]) != set(parent.args[1:]):
            return False
        op, args = REGISTRY["alias"], ()
    else:
        op, args = node.target, merge(node.args[1:], parent.args[1:])
    try:
        merged = op.view(source_geometry, *args)
    except (RuntimeError, ValueError, IndexError, TypeError):
        return False
    if not all(same_values(tuple(m), tuple(g)) for m, g in zip(merged[:2], geometry[:2])):
        return False
    if not same_values((merged[2],), (geometry[2],)):
        return False
    with graph.inserting_before(node):
        new = graph.call_function(op, (source, *args))
    new.meta = dict(node.meta)
    node.replace_all_uses_with(new)
    return True


# -- linear bias into the fused readers -------------------------------------------------------
def _split_linear_bias(graph, node) -> bool:
    if len(node.args) != 3 or node.kwargs:
        return False
    x, weight, bias = node.args
    bias_meta, meta = _meta(bias), _meta(node)
    if bias_meta is None or len(bias_meta._sizes) != 1 or not node.users:
        return False
    if not all(is_fusible(user) and same_values(_meta(user)._sizes, meta._sizes) for user in node.users):
        return False
    linear, add = REGISTRY["linear"], REGISTRY["add"]
    try:
        product_meta = linear.meta(_meta(x), _meta(weight))
        sum_meta = add.meta(product_meta, bias_meta)
    except (RuntimeError, TypeError, ValueError):
        return False
    if not (_same_meta(product_meta, meta) and _same_meta(sum_meta, meta)):
        return False
    with graph.inserting_before(node):
        product = graph.call_function(linear, (x, weight))
        product.meta["val"] = product_meta
        total = graph.call_function(add, (product, bias))
        total.meta["val"] = sum_meta
    node.replace_all_uses_with(total)
    return True
