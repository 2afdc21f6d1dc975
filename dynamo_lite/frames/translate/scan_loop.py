"""Loops traced once: a for-loop over ``range(n)`` with a symbolic ``n`` becomes one scan node.

NOTE: [loops traced once] At the first ``FOR_ITER`` of a loop over a SymbolicRangeVariable
the translator runs the body once with the loop variable a fresh step symbol (``t0``,
``0 <= t0``), the tensors the body reassigns (its *carries*, tensors or tuples of them)
replaced by stand-in nodes, and records what the body did:
- nodes that depend on the step or a carry form the body subgraph; the others (reading
  a parameter, ``w.t()``, a placeholder the body touched first) do not change from step
  to step and stay in the outer graph (hoisted), used by the body as *closed* inputs;
- each list that was empty before the loop and got one tensor appended is a per-step
  output, stacked by the scan (ScannedListVariable after the loop);
- a shape relation the body relied on that involves the step (``t0 < s0`` for ``x[t0]``)
  must hold at both ends of the loop (it is linear in the step), and is guarded there.
The graph gets ``scan(body, n, init, closed)`` (NOTE: [scan] in graph/scan.py) and the
translation continues after the loop with the final carries. The body's nodes leave the
outer graph and its side effects are rolled back. Anything else (a break or return in the
body, a changed int or object, another side effect, an in-place op, a random op, a shape
that changes across steps, a value the code after the loop reads that the scan does not
produce, a use of the stacked list that only a real list has) rejects the scan: the loop
is unrolled as before, and the reason is logged (``DYNAMO_LITE_LOGS=dynamic``) and listed
by ``dl.explain`` ("Loops unrolled", from ``TranslationReport.unrolled_loops``).
"""
from __future__ import annotations

from ...graph.graph import Graph
from ...graph.graph_module import GraphModule
from ...graph.purity import is_pure_call
from ...graph.scan import ScanBody, scan
from ...tensor.layout import contiguous_strides
from ...tensor.meta import TensorMeta
from ...tensor.relation import Relation
from ...tensor.sym_expr import INF, Expr, Symbol
from ...tensor.symint import SymInt
from ..bytecode import compat
from ..bytecode.liveness import live_locals
from ..logs import dynamic_log
from ..tracing.proxy import ProxyTensor
from ..tracing.variables.base import CellVariable, ConstantVariable
from ..tracing.variables.containers import BaseListVariable, TupleVariable
from ..tracing.variables.iterators import IteratorVariable
from ..tracing.variables.scan_values import ScannedListVariable
from ..tracing.variables.tensor import TensorVariable
from .loops import for_loops, loop_exits
from .scan_hoist import hoist_projections

_STORES = ("STORE_FAST", "STORE_FAST_STORE_FAST", "STORE_FAST_LOAD_FAST")
_REJECTED_OPS = frozenset(("RETURN_VALUE", "RETURN_CONST", "YIELD_VALUE", "STORE_DEREF", "DELETE_FAST",
                           "DELETE_DEREF", "STORE_GLOBAL", "DELETE_GLOBAL"))


class ScanRejected(Exception):
    """Why a loop is unrolled instead of scanned."""


def _scan_carry(index: int):
    """Stands for carry ``index`` while a scanned body is traced (never in a finished graph)."""
    raise RuntimeError("a scan stand-in was left in a graph")


def _scan_step():
    """Stands for the step while a scanned body is traced (never in a finished graph)."""
    raise RuntimeError("a scan stand-in was left in a graph")


def try_scan(tx, ins, iterator) -> bool:
    """At the first FOR_ITER over a symbolic range: trace the loop once into a scan node and
    continue after the loop (True), or leave it to be unrolled (False)."""
    length = getattr(iterator, "scan_length", None)
    output = tx.output
    if length is None or getattr(output, "scan_active", False):
        return False
    index = tx.pc - 1
    key = (tx.code, index)
    if key in getattr(output, "scan_rejected", ()):
        return False
    try:
        _scan(tx, ins, index, length, key, iterator)
    except ScanRejected as why:
        output.scan_reports = getattr(output, "scan_reports", []) + [(tx.code.co_filename, tx.lineno, str(why))]
        dynamic_log.debug("loop at %s:%s unrolled, not scanned: %s", tx.code.co_filename, tx.lineno, why)
        return False
    return True


def scan_unrolled(unfit) -> None:
    """Log that a scanned loop is translated again unrolled (its stacked list was used as a list)."""
    code, index = unfit.loop
    dynamic_log.debug("loop of %s (%s) unrolled on a second translation: %s", code.co_qualname,
                      code.co_filename, unfit.reason)


def _loop_of(tx, index: int):
    for loop in for_loops(tx.code):
        if loop[1] == index:
            return loop
    raise ScanRejected("not a plain for statement")


def _body_names(instructions, first: int, last: int) -> set:
    stored = set()
    for ins in instructions[first:last + 1]:
        if ins.opname in _REJECTED_OPS:
            raise ScanRejected(f"the body has {ins.opname}")
        if ins.opname in _STORES:
            names = ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)
            stored.update(n for n in names if isinstance(n, str))
    return stored


_LOADS = ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_LOAD_FAST")


def _only_appended(instructions, first: int, last: int, name: str) -> bool:
    """Whether the body uses list ``name`` only to append to it (``name.append(v)`` or
    ``name += [v]``): a body that reads it (``len``, ``[-1]``) would see one step's length."""
    for index in range(first, last + 1):
        ins = instructions[index]
        names = ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)
        if ins.opname not in _LOADS or name not in names:
            continue
        if ins.opname == "LOAD_FAST_LOAD_FAST" and names[-1] == name:
            return False  # loaded as the second value: an argument of something
        after = [i.opname for i in instructions[index + 1:index + 5]]
        argvals = [i.argval for i in instructions[index + 1:index + 5]]
        if after and after[0] in ("LOAD_ATTR", "LOAD_METHOD") and argvals[0] == "append":
            continue
        if "BUILD_LIST" in after:
            at = after.index("BUILD_LIST")
            built = instructions[index + 1 + at]
            following = instructions[index + 2 + at] if index + 2 + at <= last else None
            if built.argval == 1 and following is not None and following.opname == "BINARY_OP" and \
                    following.argrepr == "+=":
                continue
        return False
    return True


def _flatten(value) -> list | None:
    """The tensors of a carry (a tensor or nested tuples of them), or None."""
    if isinstance(value, TensorVariable):
        return [value]
    if isinstance(value, TupleVariable) and value.python_type() is tuple:
        flat = []
        for item in value.items:
            part = _flatten(item)
            if part is None:
                return None
            flat += part
        return flat
    return None


def _rebuild(value, tensors: list):
    """``value``'s structure over ``tensors`` (consumed from the front)."""
    if isinstance(value, TensorVariable):
        return tensors.pop(0)
    return TupleVariable([_rebuild(item, tensors) for item in value.items])


def _same_geometry(env, a: TensorVariable, b: TensorVariable) -> bool:
    pa, pb = a.proxy, b.proxy
    if pa.dtype != pb.dtype or pa.ndim != pb.ndim or pa.device != pb.device:
        return False
    return all(env.simplify(Expr.constant(x) if type(x) is int else x.expr)
               == env.simplify(Expr.constant(y) if type(y) is int else y.expr) for x, y in zip(pa._sizes, pb._sizes))


def _stand_in(output, target, args, meta) -> TensorVariable:
    node = output._created(output.graph.call_function(target, args, {}))
    return TensorVariable(ProxyTensor.create(node, meta))


def _scan(tx, ins, index: int, length: SymInt, key, iterator) -> None:
    output, env = tx.output, tx.output.shape_env
    get_iter, for_iter, last, kept = _loop_of(tx, index)
    if kept:
        raise ScanRejected("a comprehension")
    exits = loop_exits(tx.code, get_iter)
    if exits is None or len(exits) != 1:
        raise ScanRejected("the body leaves the loop early (break or return)")
    exit_index = exits[0][1]
    stored = _body_names(tx.instructions, for_iter + 1, last)
    if any(isinstance(tx.locals.get(name), CellVariable) for name in stored):
        raise ScanRejected("the body assigns a variable an inner function captures")
    if env.hint(length) < 1:
        raise ScanRejected("no steps")

    saved_locals, saved_stack = dict(tx.locals), list(tx.stack)
    saved_heads, saved_with = dict(tx.loop_heads), dict(tx.with_heads)
    saved_position = (tx.pc, tx.lineno, tx.kw_names)
    lists = {id(v): (v, len(v.items)) for v in saved_locals.values()
             if isinstance(v, BaseListVariable) and v.python_type() is list}
    carries = {name: _flatten(saved_locals[name]) for name in sorted(stored) if name in saved_locals}
    carries = {name: flat for name, flat in carries.items() if flat}
    checkpoint = output.checkpoint()
    n_guards, n_symbols, replacements = len(env.guards), len(env.hints), dict(env.replacements)
    step = Symbol(f"t{n_symbols}")
    env.hints[step], env.ranges[step], env.sources[step] = 0, (0, INF), "a scan's step"
    step_node = output._created(output.graph.call_function(_scan_step, (), {}))
    output.sym_nodes.nodes[Expr.symbol(step)] = step_node
    stand_ins, inits = [], []
    for name, flat in carries.items():
        replaced = []
        for tensor in flat:
            stand = _stand_in(output, _scan_carry, (len(inits),), TensorMeta.of(tensor.proxy))
            stand_ins.append(stand)
            inits.append(tensor)
            replaced.append(stand)
        tx.locals[name] = _rebuild(saved_locals[name], replaced)
    output.scan_active = True
    try:
        try:
            tx.push(iterator.scan_item(tx, SymInt(Expr.symbol(step), env)))
            while tx.pc != for_iter:
                if not for_iter < tx.pc <= last or tx.returned is not None:
                    raise ScanRejected("the body leaves the loop")
                tx.step()
        except ScanRejected:
            raise
        except Exception as exc:  # Unsupported, GraphBreak, an error of the program: unroll instead
            reason = getattr(exc, "reason", exc)
            raise ScanRejected(f"the body cannot be traced once: {getattr(reason, 'reason', reason)}") from None
        plan = _analyse(tx, saved_locals, saved_stack, lists, carries, stand_ins, checkpoint, step, exit_index,
                        (for_iter + 1, last))
        _check_step_guards(env, n_guards, step, length, replacements, n_symbols)
    except BaseException:
        _undo(tx, output, env, checkpoint, step, n_guards, saved_locals, saved_stack, saved_heads, saved_with)
        tx.pc, tx.lineno, tx.kw_names = saved_position
        raise
    finally:
        output.scan_active = False
    body, closed, outs = _extract(output, checkpoint, step_node, stand_ins, plan)
    _undo(tx, output, env, checkpoint, step, n_guards, saved_locals, saved_stack, saved_heads, saved_with,
          keep_nodes=True, erase=body["erase"])
    env.decide(Relation(">=", length.expr, Expr.constant(1)))
    hoist_projections(output, body["graph"], body["step"], body["closed_phs"], closed)  # NOTE: [hoisted input projections]
    gm = GraphModule({}, body["graph"], class_name="ScanBody")
    _emit(tx, output, gm, length, inits, closed, plan, key)
    tx.pop()  # the iterator
    tx.jump_to(ins.argval)
    tx.pc += compat.FOR_ITER_EXIT_SKIP


def _analyse(tx, saved_locals, saved_stack, lists, carries, stand_ins, checkpoint, step, exit_index,
             body_range: tuple) -> dict:
    """What the traced body produced: the new carries and the per-step outputs (or ScanRejected)."""
    output, env = tx.output, tx.output.shape_env
    if len(tx.stack) != len(saved_stack) or any(a is not b for a, b in zip(tx.stack, saved_stack)):
        raise ScanRejected("the body left values on the stack")
    live_after = live_locals(tx.code, exit_index)
    ends = []
    for name, flat in carries.items():
        end = _flatten(tx.locals.get(name))
        if end is None or len(end) != len(flat):
            raise ScanRejected(f"{name!r} is not a tensor (or tuple of them) of one structure at every step")
        for stand, new in zip(stand_ins[len(ends):], end):
            if not _same_geometry(env, stand, new):
                raise ScanRejected(f"{name!r} changes shape or dtype from step to step")
        ends += end
    for name, value in tx.locals.items():
        if name in carries:
            continue
        before = saved_locals.get(name)
        if before is None:
            if name in live_after:
                raise ScanRejected(f"the code after the loop reads {name!r}, which the body assigns")
        elif value is not before and not (isinstance(before, BaseListVariable) and id(before) in lists):
            raise ScanRejected(f"the body changes {name!r}, which is not a tensor")
    outputs = []
    for variable, before in lists.values():
        items = variable.items
        if len(items) == before:
            continue
        names = [name for name, value in saved_locals.items() if value is variable]
        first, last = body_range
        if len(names) != 1 or not _only_appended(tx.instructions, first, last, names[0]):
            raise ScanRejected("the body reads a list it appends to (or reaches it by another name)")
        if before != 0 or len(items) != 1 or not isinstance(items[0], TensorVariable):
            raise ScanRejected("a list the body appends to is not empty before the loop, or gets more than one "
                               "tensor per step")
        outputs.append((variable, items[0]))
    effects = output.side_effects
    n_entries, n_journal = checkpoint[1]
    if len(effects.entries) != n_entries:
        raise ScanRejected("the body has a side effect outside the graph")
    accepted = {id(v) for v, _ in outputs}
    for variable, _ in effects.journal[n_journal:]:
        if id(variable) not in accepted and not isinstance(variable, IteratorVariable):
            raise ScanRejected("the body mutates a container or object")
    if len(output._rebinds) != checkpoint[2]:
        raise ScanRejected("the body has an in-place tensor op")
    return {"ends": ends, "outputs": outputs, "carries": carries}


def _check_step_guards(env, n_guards: int, step, length: SymInt, replacements: dict, n_symbols: int) -> None:
    """Relations on the step hold for every step when they hold at both ends (they are linear)."""
    if len(env.hints) != n_symbols + 1:
        raise ScanRejected("the body reads a new symbolic size")
    fixed = {k: v for k, v in env.replacements.items() if replacements.get(k) != v}
    if step in fixed or any(step in v.symbols() for v in fixed.values()):
        raise ScanRejected(f"the body fixes the step to a value ({fixed})")
    last = length.expr - Expr.constant(1)
    for relation in env.guards[n_guards:]:
        if step not in relation.symbols():
            continue
        if relation.op in ("==", "!="):
            raise ScanRejected(f"the body branches on the step ({relation})")
        if any(len(m) > 1 and step in m for m, _ in (relation.lhs - relation.rhs).terms):
            raise ScanRejected(f"a relation of the body is not linear in the step ({relation})")
        for end in (Expr.constant(0), last):
            at_end = Relation(relation.op, relation.lhs.substitute({step: end}), relation.rhs.substitute({step: end}))
            diff = env.simplify(at_end.lhs - at_end.rhs)
            if step in diff.symbols() or not env.decide(at_end):
                raise ScanRejected(f"the body's relation {relation} does not hold at every step")


def _dependent(nodes: list, seeds: set) -> list:
    """The nodes that (transitively) read a seed, or are impure (random: run every step)."""
    dependent = set(seeds)
    ordered = []
    for node in nodes:
        if node in seeds:
            continue
        impure = node.op == "call_function" and not is_pure_call(node.op, node.target) and \
            node.target not in (_scan_carry, _scan_step)
        if impure or any(n in dependent for n in node.all_input_nodes):
            dependent.add(node)
            ordered.append(node)
    return ordered


def _extract(output, checkpoint, step_node, stand_ins: list, plan: dict):
    """Move the body's nodes into their own graph; returns (body dict, closed outer nodes, outputs)."""
    created = output._nodes[checkpoint[0]:]
    carry_nodes = [s.node for s in stand_ins]
    seeds = {step_node, *carry_nodes}
    moved = _dependent(created, seeds)
    moved_set = set(moved)
    outs = [v.node for v in plan["ends"]] + [item.node for _, item in plan["outputs"]]
    closed = []
    for node in moved:
        for n in node.all_input_nodes:
            if n not in moved_set and n not in seeds and n not in closed:
                closed.append(n)
    for n in outs:
        if n not in moved_set and n not in seeds and n not in closed:
            closed.append(n)
    graph = Graph()
    mapping = {step_node: graph.placeholder("t")}
    for i, node in enumerate(carry_nodes):
        mapping[node] = graph.placeholder(f"carry_{i}")
        mapping[node].meta = dict(node.meta)
    for i, node in enumerate(closed):
        mapping[node] = graph.placeholder(f"closed_{node.name}")
        mapping[node].meta = dict(node.meta)
    for node in moved:
        mapping[node] = graph.node_copy(node, lambda n: mapping[n])
    graph.output(tuple(mapping[n] for n in outs))
    closed_phs = {mapping[n]: n for n in closed}
    return {"graph": graph, "step": mapping[step_node], "closed_phs": closed_phs,
            "erase": list(moved) + [step_node] + carry_nodes}, closed, outs


def _undo(tx, output, env, checkpoint, step, n_guards, saved_locals, saved_stack, saved_heads, saved_with,
          keep_nodes: bool = False, erase=()) -> None:
    """Put the translator back as it was before the body ran; with ``keep_nodes`` only the
    body's own nodes (``erase``) leave the graph and the hoisted ones stay."""
    if keep_nodes:
        gone = set(erase)
        for node in reversed(output._nodes[checkpoint[0]:]):
            if node in gone:
                output.graph.erase_node(node)
        ids = {id(n) for n in gone}
        output._nodes = [n for n in output._nodes if id(n) not in ids]
        output.sym_nodes.forget(ids)
        output._by_tensor_id = {k: v for k, v in output._by_tensor_id.items() if id(v.proxy.node) not in ids}
        output.side_effects.rollback(checkpoint[1])
    else:
        _rollback_keeping_inputs(output, checkpoint)
    output.sym_nodes.nodes.pop(Expr.symbol(step), None)
    env.guards[:] = [g for g in env.guards if step not in g.symbols()]
    for table in (env.hints, env.ranges, env.sources):
        table.pop(step, None)
    tx.locals.clear()
    tx.locals.update(saved_locals)
    tx.stack[:] = saved_stack
    tx.loop_heads.clear()
    tx.loop_heads.update(saved_heads)
    tx.with_heads.clear()
    tx.with_heads.update(saved_with)


def _rollback_keeping_inputs(output, checkpoint) -> None:
    """``output.rollback`` that keeps the graph inputs the body read first: containers of the
    frame realized their items while the body ran (lazily, not journaled) and hold them, so
    they stay inputs (unused ones cost nothing) and only the body's computations go."""
    n_nodes, n_effects, n_rebinds, _ = checkpoint
    erased = [n for n in output._nodes[n_nodes:] if n.op not in ("placeholder", "get_attr")]
    for node in reversed(erased):
        output.graph.erase_node(node)
    ids = {id(n) for n in erased}
    output._nodes = [n for n in output._nodes if id(n) not in ids]
    output.side_effects.rollback(n_effects)
    for proxy, node in reversed(output._rebinds[n_rebinds:]):
        proxy.node = node
    del output._rebinds[n_rebinds:]
    output.sym_nodes.forget(ids)
    output._by_tensor_id = {k: v for k, v in output._by_tensor_id.items() if id(v.proxy.node) not in ids}


def _emit(tx, output, gm, length: SymInt, inits: list, closed: list, plan: dict, key) -> None:
    """The scan node, and the translator's state after the loop."""
    n_carry, outputs = len(inits), plan["outputs"]
    length_arg = output.sym_nodes.node_for(length)
    body = ScanBody(gm, n_carry, len(outputs))
    node = output._created(output.graph.call_function(
        scan, (body, length_arg, tuple(t.node for t in inits), tuple(closed)), {}))
    metas = [TensorMeta.of(end.proxy) for end in plan["ends"]]
    for _, item in outputs:
        sizes = (length, *item.proxy._sizes)
        metas.append(TensorMeta.from_geometry(sizes, contiguous_strides(sizes), item.proxy.dtype, item.proxy.device))
    proxies = list(output._proxies_for(node, tuple(metas)))
    finals = [TensorVariable(p) for p in proxies[:n_carry]]
    for name in plan["carries"]:
        tx.locals[name] = _rebuild(tx.locals[name], finals)
    for (variable, _), proxy in zip(outputs, proxies[n_carry:]):
        scanned = ScannedListVariable(TensorVariable(proxy), length, key)
        for name, value in list(tx.locals.items()):
            if value is variable:
                tx.locals[name] = scanned
    where = f"{tx.code.co_filename}:{tx.lineno}"
    dynamic_log.debug("loop at %s scanned over %s steps: %d carries, %d stacked outputs, %d body ops", where,
                      length.expr, n_carry, len(outputs), sum(1 for n in gm.graph.nodes if n.op.startswith("call_")))

