"""Hoist a scanned body's input projections out of the loop: one matrix product over all steps.

NOTE: [hoisted input projections] In an RNN body ``linear(x[t], W_ih, b_ih)`` depends on the
step only through ``x[t]`` (a slice of a tensor from outside the loop), not on the carries:
its value for every step is ``linear(x, W_ih, b_ih)[t]``. So the scan gets that product of
the whole input as one more closed input (one large GEMM before the loop instead of one
small one per step) and the body reads its step's rows. Exact for products that contract
the last dim (``linear``, ``matmul``/``mm`` with a weight) when the step slices another dim.
"""
from __future__ import annotations

from ..tracing.proxy import ProxyTensor
from ...ops.core import api as ops

_PRODUCTS = {"linear": ops.linear, "matmul": ops.matmul, "mm": ops.matmul}


def _step_slice(node, step_ph, closed_phs: dict):
    """``(closed node, dim)`` when ``node`` is ``squeeze(narrow(closed, dim, t, 1), dim)``, else None."""
    if node.op != "call_function" or getattr(node.target, "name", None) != "squeeze" or len(node.args) != 2:
        return None
    narrow = node.args[0]
    if getattr(narrow, "op", None) != "call_function" or getattr(narrow.target, "name", None) != "narrow":
        return None
    source, dim, start, length = narrow.args
    dims = node.args[1] if isinstance(node.args[1], tuple) else (node.args[1],)
    if start is not step_ph or length != 1 or dims != (dim,) or source not in closed_phs:
        return None
    return source, dim


def hoist_projections(output, body, step_ph, closed_phs: dict, closed: list) -> int:
    """Rewrite ``body`` (a Graph) in place: each projection of a step slice by closed weights
    reads its rows of one product computed in ``output``'s graph (appended to ``closed``,
    a placeholder added to ``body``). ``closed_phs`` maps body placeholders to outer nodes.
    Returns how many products were hoisted."""
    hoisted = 0
    for node in list(body.nodes):
        name = getattr(node.target, "name", None) if node.op == "call_function" else None
        if name not in _PRODUCTS or node.kwargs or not node.args:
            continue
        sliced = _step_slice(node.args[0], step_ph, closed_phs)
        others = node.args[1:]
        if sliced is None or not others or not all(a is None or a in closed_phs for a in others):
            continue
        source_ph, dim = sliced
        outer_source = closed_phs[source_ph]
        source_meta = outer_source.meta.get("val")
        if source_meta is None or dim in (-1, source_meta.ndim - 1) or dim < 0:
            continue
        weight_meta = others[0].meta.get("val") if others[0] is not None else None
        if name in ("matmul", "mm") and (weight_meta is None or weight_meta.ndim != 2):
            continue
        proxies = [ProxyTensor.create(closed_phs[a], closed_phs[a].meta["val"]) if a is not None else None
                   for a in (source_ph, *others)]
        with output.tracing("a hoisted input projection"):
            product = _PRODUCTS[name](*proxies)
        closed.append(product.node)
        first_op = next(n for n in body.nodes if n.op != "placeholder")
        with body.inserting_before(first_op):
            placeholder = body.placeholder(f"closed_{product.node.name}")
        placeholder.meta = dict(product.node.meta)
        closed_phs[placeholder] = product.node
        narrow_target, squeeze_target = node.args[0].args[0].target, node.args[0].target
        with body.inserting_before(node):
            rows = body.call_function(narrow_target, (placeholder, dim, step_ph, 1))
            step_rows = body.call_function(squeeze_target, (rows, (dim,)))
        step_rows.meta = dict(node.meta)
        node.replace_all_uses_with(step_rows)
        body.erase_node(node)
        hoisted += 1
    if hoisted:
        body.eliminate_dead_code()
        for placeholder, outer in list(closed_phs.items()):  # inputs only the hoisted products read
            if not placeholder.users:
                body.erase_node(placeholder)
                closed.remove(outer)
                del closed_phs[placeholder]
    return hoisted
