"""Scan in the joint graph: the forward scan saves its carries, the backward is a reverse scan.

NOTE: [scan in the joint graph] A ``scan`` node of a captured graph (NOTE: [scan]) is traced
into the joint graph as a scan whose body also returns its carries, so the forward keeps
every step's carry stacked, and the matrix products that read a carry (the hidden-to-hidden
product), so the reverse scan reads them instead of computing them again (their gradient
formulas need only their inputs). When a carry or a closed input requires grad the node goes on
the tape with a formula that records a second scan running the steps backwards
(``r = length - 1 - t``): its body is the vector-Jacobian product of the forward body,
traced once with the same derivative formulas as every other op (a JointTracer over the
body, the step a fresh symbol), reading step ``r``'s saved carries and output gradients.
It carries the carries' gradients and accumulates the closed inputs' gradients over the
steps. So compiled training of a recurrent loop has one forward and one backward graph
for every length.
"""
from __future__ import annotations

import operator

from ...graph.graph_module import GraphModule
from ...graph.scan import ScanBody, scan, scan_meta
from ...ops.core import api as ops_api
from ...ops.core.dispatch import TRACING
from ...ops.core.registry import REGISTRY
from ...tensor.meta import TensorMeta
from ...tensor.sym_expr import INF, Expr, Symbol
from ...tensor.symint import SymInt
from ..errors import Unsupported
from ..tracing.output_graph import to_metas
from ..tracing.proxy import ProxyTensor

OPS = REGISTRY


def _differentiable(value) -> bool:
    return isinstance(value, ProxyTensor) and (value._dtype.is_floating_point or value._dtype.is_complex)


_PRODUCTS = ("linear", "matmul", "mm", "addmm", "bmm")


def _saved_products(graph, n_carry: int) -> list:
    """The body's matrix products that read a carry (NOTE: [scan in the joint graph]: saved, not recomputed)."""
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    on_carry = set(placeholders[1:1 + n_carry])
    products = []
    for node in graph.nodes:
        if node.op != "call_function" or not any(a in on_carry for a in node.all_input_nodes):
            continue
        on_carry.add(node)
        if getattr(node.target, "name", None) in _PRODUCTS:
            products.append(node)
    return products


def _saving_body(body: ScanBody) -> tuple:
    """``(body whose outputs also hold its carries and the products that read them, how many
    products)``: the scan stacks them (the saved carries and products)."""
    graph = body.gm.graph.copy()
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    products = _saved_products(graph, body.n_carry)
    output = graph.output_node
    outs = tuple(output.args[0]) + tuple(placeholders[1:1 + body.n_carry]) + tuple(products)
    graph.erase_node(output)
    graph.output(outs)
    saving = ScanBody(GraphModule({}, graph, class_name="ScanBodySaving"), body.n_carry,
                      body.n_out + body.n_carry + len(products))
    return saving, len(products)


def trace_scan(tracer, tape_entry, body: ScanBody, length, init: tuple, closed: tuple):
    """The scan in ``tracer``'s joint graph; on its tape (a ``tape_entry``) when a gradient can
    flow through it."""
    if not isinstance(length, (int, SymInt)):
        raise Unsupported("a scan whose length is not a size")
    saving, _ = _saving_body(body)
    metas = scan_meta(saving, length, to_metas(init), to_metas(closed))
    node = tracer.graph.call_function(scan, (saving, tracer._nodes(length), tracer._nodes(tuple(init)),
                                             tracer._nodes(tuple(closed))))
    results = list(tracer._proxies(node, tuple(metas)))
    n_carry, n_out = body.n_carry, body.n_out
    produced, saved = results[:n_carry + n_out], results[n_carry + n_out:]
    inputs = list(init) + list(closed)
    needs = [isinstance(x, ProxyTensor) and x.node in tracer.requires_grad for x in inputs]
    if not (tracer.recording and any(needs)):
        return tuple(produced)
    outputs = [ProxyTensor.create(p.node, TensorMeta.of(p)) if _differentiable(p) else None for p in produced]
    for out in outputs:
        if out is not None:
            tracer.requires_grad.add(out.node)
    formula = ScanVJP(tracer, body, length, list(init), list(closed), saved, needs, produced)
    args = tuple(inputs) + tuple(saved)
    slots = [(i, x) for i, x in enumerate(inputs) if isinstance(x, ProxyTensor)]
    tracer.tape.append(tape_entry(formula, args, {}, outputs, None, True, slots, set(formula.params), []))
    return tuple(produced)


class ScanVJP:
    """The tape formula of a scan: records the reverse scan (see NOTE: [scan in the joint graph])."""

    def __init__(self, tracer, body, length, init, closed, saved, needs, produced):
        self.tracer, self.body, self.length, self.produced = tracer, body, length, produced
        self.init, self.closed, self.saved, self.needs = init, closed, saved, needs
        self.params = tuple(f"arg{i}" for i in range(len(init) + len(closed) + len(saved)))
        self.saves = frozenset()

    def formula(self, grads, *args):
        tracer, n_carry = self.tracer, self.body.n_carry
        grads = [g if g is not None else (OPS["zeros"](size=tuple(p._sizes), dtype=p._dtype, device=p._device)
                                          if isinstance(p, ProxyTensor) else None)
                 for g, p in zip(grads, self.produced)]
        n_init = len(self.init)
        closed_needs = self.needs[n_init:]
        sliced, flipped = step_sliced(self.body)
        accumulate = [c for i, (c, need) in enumerate(zip(self.closed, closed_needs)) if need and i not in sliced]
        reverse, batched = _vjp_body(tracer, tracer.shape_env, self.body, self.init, self.closed, self.saved,
                                     grads[n_carry:], closed_needs, self.length, flipped)
        zeros = [OPS["zeros"](size=tuple(c._sizes), dtype=c._dtype, device=c._device)
                 for k, c in enumerate(accumulate) if k not in batched]
        init_bwd = tuple(grads[:n_carry]) + tuple(zeros)
        saved, dys, closed = list(self.saved), list(grads[n_carry:]), list(self.closed)
        if flipped:  # every step-indexed input reversed: the reverse scan reads them at its own step
            saved, dys = [OPS["flip"](v, (0,)) for v in saved], [OPS["flip"](v, (0,)) for v in dys]
            closed = [OPS["flip"](c, (sliced[i][0],)) if i in sliced else c for i, c in enumerate(closed)]
        closed_bwd = tuple(saved) + tuple(dys) + tuple(closed) + (self.length,)
        metas = scan_meta(reverse, self.length, to_metas(init_bwd), to_metas(closed_bwd))
        node = tracer.graph.call_function(scan, (reverse, tracer._nodes(self.length), tracer._nodes(init_bwd),
                                                 tracer._nodes(closed_bwd)))
        results = list(tracer._proxies(node, tuple(metas)))
        carry_grads = results[:n_carry]
        rest = iter(results[n_carry:])
        accumulated = [next(rest) for k in range(len(accumulate)) if k not in batched]
        per_step = [next(rest) for i in sliced if closed_needs[i]]
        products = {k: (next(rest), next(rest)) for k in sorted(batched)}
        accumulated, per_step = iter(accumulated), iter(per_step)
        out, k = list(carry_grads), 0
        for i, (c, need) in enumerate(zip(self.closed, closed_needs)):
            if not need:
                out.append(None)
            elif i in sliced:  # stacked from the last step to the first, along a new dim 0
                out.append(ops_api.movedim(OPS["flip"](next(per_step), (0,)), 0, sliced[i][0]))
            else:
                out.append(_one_product(*products[k]) if k in products else next(accumulated))
                k += 1
        return tuple(out)


def _one_product(lhs, rhs):
    """``sum over t of lhs[t]^T @ rhs[t]`` as one GEMM over all steps (NOTE: [scan in the joint graph])."""
    lhs = ops_api.reshape(lhs, (-1, lhs._sizes[-1]))
    rhs = ops_api.reshape(rhs, (-1, rhs._sizes[-1]))
    return ops_api.mm(ops_api.transpose(lhs, 0, 1), rhs)


def _weight_product(grad):
    """``(a, b)`` when a step's gradient is ``a^T @ b`` of two matrices (a weight's), else None."""
    node = getattr(grad, "node", None)
    if node is None or getattr(node.target, "name", None) != "mm":
        return None
    left, right = node.args
    if getattr(left, "op", None) != "call_function" or getattr(left.target, "name", None) != "transpose":
        return None
    if tuple(left.args[1:]) not in ((-2, -1), (-1, -2), (0, 1), (1, 0)):
        return None
    inner = left.args[0]
    metas = [getattr(n, "meta", {}).get("val") for n in (inner, right)]
    if not all(isinstance(m, TensorMeta) and m.ndim == 2 for m in metas):
        return None
    return ProxyTensor.create(inner, metas[0]), ProxyTensor.create(right, metas[1])


def _vjp_body(outer, env, body: ScanBody, init, closed, saved, output_grads, closed_needs, length,
              flipped: bool) -> tuple:
    """The reverse scan's body: ``(t, *dcarry, *dacc, *saved, *dys, *closed, length) ->
    (*dcarry at step r, *dacc + the closed inputs' gradients at step r)``, ``r = length - 1 - t``."""
    tracer = type(outer)(env)
    graph = tracer.graph
    step_ph = graph.placeholder("t")
    dcarry_phs = [graph.placeholder(f"dcarry_{i}") for i in range(body.n_carry)]
    sliced, _ = step_sliced(body)
    acc = [c for i, (c, need) in enumerate(zip(closed, closed_needs)) if need and i not in sliced]
    dacc_phs = [graph.placeholder(f"dacc_{i}") for i in range(len(acc))]
    saved_phs = [graph.placeholder(f"saved_{i}") for i in range(len(saved))]
    dys_phs = [graph.placeholder(f"dys_{i}") for i in range(len(output_grads))]
    closed_phs = [graph.placeholder(f"closed_{i}") for i in range(len(closed))]
    length_ph = graph.placeholder("length")
    last = graph.call_function(operator.sub, (length_ph, 1))
    r_node = graph.call_function(operator.sub, (last, step_ph))
    symbol = Symbol(f"r{len(env.hints)}")
    n_guards = len(env.guards)
    env.hints[symbol], env.ranges[symbol], env.sources[symbol] = 0, (0, INF), "a reverse scan's step"
    r = SymInt(Expr.symbol(symbol), env)
    tracer.sym_nodes.nodes[Expr.symbol(symbol)] = step_ph if flipped else r_node
    tracer.sym_nodes.nodes[env.simplify(length.expr if type(length) is SymInt else Expr.constant(length))] = length_ph
    for ph, value in zip(dcarry_phs + saved_phs + closed_phs, list(init) + list(saved) + list(closed)):
        if isinstance(value, ProxyTensor):
            tracer.sym_nodes.note_input(ph, value._sizes)
        elif type(value) is SymInt:
            tracer.sym_nodes.nodes.setdefault(env.simplify(value.expr), ph)
    previous, TRACING.tracer = TRACING.tracer, tracer
    try:
        def proxy(node, value):
            return ProxyTensor.create(node, TensorMeta.of(value))

        def at_step(ph, value):
            stacked = proxy(ph, value)
            return OPS["squeeze"](OPS["narrow"](stacked, 0, r, 1), (0,))

        dcarry = [proxy(ph, v) for ph, v in zip(dcarry_phs, init)]
        dacc = [proxy(ph, v) for ph, v in zip(dacc_phs, acc)]
        carries = [at_step(ph, v) for ph, v in zip(saved_phs[:body.n_carry], saved[:body.n_carry])]
        saved_products = [at_step(ph, v) for ph, v in zip(saved_phs[body.n_carry:], saved[body.n_carry:])]
        product_at = {n.name: p for n, p in zip(_saved_products(body.gm.graph, body.n_carry), saved_products)}
        recomputed = []
        dys = [at_step(ph, g) for ph, g in zip(dys_phs, output_grads)]
        closed_values = [proxy(ph, v) if isinstance(v, ProxyTensor) else v for ph, v in zip(closed_phs, closed)]
        for c in carries:
            tracer.requires_grad.add(c.node)
        for i, (value, need) in enumerate(zip(closed_values, closed_needs)):
            if need and i not in sliced:
                tracer.requires_grad.add(value.node)
        slices = {i: [] for i in sliced if closed_needs[i]}
        slice_nodes = {n: i for i, (_, nodes) in sliced.items() if i in slices for n in nodes}
        env_map, outputs = {}, None
        body_placeholders = [n for n in body.gm.graph.nodes if n.op == "placeholder"]
        for n, value in zip(body_placeholders, [r, *carries, *closed_values]):
            env_map[n] = value
        tracer.recording = True
        for n in body.gm.graph.nodes:
            if n.op == "placeholder":
                continue
            if n.op == "output":
                outputs = [_lookup(a, env_map) for a in n.args[0]]
                break
            if n.op != "call_function":
                raise Unsupported(f"scan body node {n.format_node()}")
            args, kwargs = _lookup(n.args, env_map), _lookup(n.kwargs, env_map)
            env_map[n] = n.target(*args, **kwargs)
            if n.name in product_at:  # its gradient formula is traced; its value is read where saved
                recomputed.append((env_map[n].node, product_at[n.name].node))
            if n in slice_nodes:  # this step's rows of a sliced input: its gradient is a step output
                tracer.requires_grad.add(env_map[n].node)
                slices[slice_nodes[n]].append(env_map[n])
        tracer.recording = False
        grads = _backward(tracer, outputs, dcarry + dys)
        for node, saved_node in recomputed:
            node.replace_all_uses_with(saved_node)
        new_dcarry = [grads[c.node] if c.node in grads else
                      OPS["zeros"](size=tuple(c._sizes), dtype=c._dtype, device=c._device) for c in carries]
        grads_of_closed = [grads.get(v.node) for i, (v, need) in enumerate(zip(closed_values, closed_needs))
                           if need and i not in sliced]
        pairs = {k: _weight_product(g) for k, g in enumerate(grads_of_closed)}
        pairs = {k: pair for k, pair in pairs.items() if pair is not None}  # batched after the loop
        new_acc = [a if g is None else OPS["add"](a, g) for k, (a, g) in enumerate(zip(dacc, grads_of_closed))
                   if k not in pairs]
        step_grads = []
        for i, proxies in slices.items():
            total = None
            for p in proxies:
                g = grads.get(p.node)
                total = g if total is None else (total if g is None else OPS["add"](total, g))
            if total is None:
                total = OPS["zeros"](size=tuple(proxies[0]._sizes), dtype=proxies[0]._dtype, device=proxies[0]._device)
            step_grads.append(total)
        products = [m for k in sorted(pairs) for m in pairs[k]]
        graph.output(tuple(tracer._nodes(v) for v in new_dcarry + new_acc + step_grads + products))
        graph.eliminate_dead_code()
        for k in pairs:
            graph.erase_node(dacc_phs[k])
    finally:
        TRACING.tracer = previous
        tracer.recording = False
        env.guards[:] = env.guards[:n_guards] + [g for g in env.guards[n_guards:] if symbol not in g.symbols()]
        for table in (env.hints, env.ranges, env.sources):
            table.pop(symbol, None)
    reverse = ScanBody(GraphModule({}, graph, class_name="ScanBodyBackward"), body.n_carry + len(acc) - len(pairs),
                       len(slices) + 2 * len(pairs))
    return reverse, set(pairs)


def step_sliced(body: ScanBody) -> tuple:
    """``({closed index: (dim, squeeze nodes)}, only)``: closed inputs the body reads only as their
    step's slice (``squeeze(narrow(x, dim, t, 1), dim)``), and whether the step is used for
    nothing else. Their gradient is one slice per step, stacked by the reverse scan, not a
    sum carried over the steps; when ``only``, the reverse scan reads every input flipped at
    its own step (no ``length - 1 - t``)."""
    placeholders = [n for n in body.gm.graph.nodes if n.op == "placeholder"]
    step = placeholders[0]
    found, covered = {}, set()
    for i, ph in enumerate(placeholders[1 + body.n_carry:]):
        squeezes, dims = [], set()
        for user in ph.users:
            if not (getattr(user.target, "name", None) == "narrow" and user.args[0] is ph and user.args[2] is step
                    and user.args[3] == 1 and all(getattr(u.target, "name", None) == "squeeze"
                                                  and u.args[1] in ((user.args[1],), user.args[1])
                                                  for u in user.users)):
                squeezes = None
                break
            dims.add(user.args[1])
            squeezes += list(user.users)
        if squeezes and len(dims) == 1:
            found[i] = (dims.pop(), squeezes)
            covered.update(ph.users)
    return found, all(user in covered for user in step.users)


def _backward(tracer, outputs: list, cotangents: list) -> dict:
    """The tape of ``tracer`` walked back from ``cotangents`` of ``outputs`` (JointTracer.backward
    with given gradients in place of the tangent placeholders it makes)."""
    tangents, grads = tracer.backward(outputs)
    given = {}
    for index, placeholder in tangents.items():
        placeholder.replace_all_uses_with(cotangents[index].node)
        given[placeholder] = cotangents[index]
        tracer.graph.erase_node(placeholder)
    return {node: given.get(g.node, g) for node, g in grads.items()}


def _lookup(value, env):
    if isinstance(value, (tuple, list)):
        return type(value)(_lookup(v, env) for v in value)
    if isinstance(value, dict):
        return {k: _lookup(v, env) for k, v in value.items()}
    if isinstance(value, slice):
        return slice(_lookup(value.start, env), _lookup(value.stop, env), _lookup(value.step, env))
    return env[value] if hasattr(value, "op") and value in env else value
