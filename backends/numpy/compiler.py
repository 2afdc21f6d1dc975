"""The numpy backend's pipeline: simplify, fuse, plan memory, generate and compile one function per signature.

NOTE: [signatures] Generated code is specialized to its inputs' exact geometry (sizes,
strides, storage offset, dtype): buffer sizes, block lists and views are constants.
A graph with symbolic sizes (the frame compiler's dynamic shapes) serves every size its
guards admit: its metas are re-derived from each signature's inputs, and its size
nodes (``sym_size`` and the int arithmetic over them) become constants of that
signature's function, so one graph costs one cheap specialization per concrete shape.
The function opens with a check of that signature; the compiler's guards make it pass
on every call they let through, and any other call (a caller of the backend with new
shapes) goes to ``Specializations.call``, which builds and caches a function for the
new signature (metas re-derived by ShapeProp), up to ``MAX_SIGNATURES``, after which
the graph runs eagerly.
"""
from __future__ import annotations

import itertools
import linecache
import logging
import weakref
from dataclasses import dataclass, field

import numpy as np

from dynamo_lite.graph import GraphModule, ShapeProp
from dynamo_lite.graph.passes.fusion import FusionGroup, fusion_schedule, partition_pointwise
from dynamo_lite.graph.passes.sizes import is_symbolic, signature_of, specialize
from dynamo_lite.tensor.dtype import bfloat16
from dynamo_lite.tensor.tensor import Tensor

from . import runtime
from .blocking import DEFAULT_BLOCK_BYTES
from .codegen import FunctionBuilder
from .fused import emit_group, plan_group
from .memory import plan_memory
from .simplify import simplify
from .values import Unsupported, analyze

log = logging.getLogger("dynamo_lite")
graph_log = logging.getLogger("dynamo_lite.graph")

MAX_SIGNATURES = 8
_FUNCTION_IDS = itertools.count()


@dataclass
class Program:
    """The generated function of one signature, with what went into it."""

    source: str
    function: object
    groups: list = field(default_factory=list)
    simplifications: dict = field(default_factory=dict)
    pool_bytes: int = 0
    buffers_reused: int = 0

    def summary(self) -> str:
        blocked = sum(1 for g in self.groups if g.blocking is not None)
        fused = sum(len(g.group.nodes) for g in self.groups)
        made = ", ".join(f"{k} {v}" for k, v in self.simplifications.items() if v) or "none"
        return (f"{len(self.groups)} pointwise groups ({fused} ops, {blocked} blocked), pool "
                f"{self.pool_bytes / 1024:.0f} KiB ({self.buffers_reused} buffers reused), "
                f"simplifications: {made}")


class Specializations:
    """Generated functions of one graph, one per input signature.

    Args:
        gm: the GraphModule the frame compiler captured (never modified).
        block_bytes: bytes of one operand per block in fused loops.
        workers: the threads large fused groups are shared with.
        lowering: emits fused groups and nodes another way (``emit_group(builder, plan) -> bool``,
            ``emit_node(builder, node) -> bool``, ``relocated(groups, values)`` -> nodes run at
            another node's step, ``finish(builder)`` before the function is compiled), e.g.
            the native backend's C.
    """

    def __init__(self, gm, block_bytes: int = DEFAULT_BLOCK_BYTES, workers: runtime.BlockWorkers | None = None,
                 lowering=None):
        self.gm = gm
        self.lowering = lowering
        self.block_bytes = block_bytes
        self.workers = workers or runtime.BlockWorkers(1)
        self.attributes = {n.target: gm.get_attribute(n.target) for n in gm.graph.nodes if n.op == "get_attr"}
        self.functions: dict = {}
        self.programs: list = []
        self.eager_reason: str | None = None  # why the first signature runs eagerly, if it does
        self.symbolic = is_symbolic(gm.graph)

    def build(self, inputs, *, propagate: bool):
        """The function for ``inputs``' signature (``gm.forward`` if the graph is not compilable)."""
        graph = self.gm.graph.copy()
        try:
            if self.symbolic:
                specialize(graph, self.attributes, inputs)
            elif propagate:
                ShapeProp(GraphModule(self.attributes, graph)).propagate(*inputs)
            _refuse_bfloat16(graph, inputs)
            program = generate(graph, self.attributes, list(inputs), self.block_bytes, self.workers, self.call,
                               getattr(self.gm, "class_name", "graph"), self.lowering)
        except Unsupported as exc:
            log.debug("numpy backend runs %s eagerly: %s", getattr(self.gm, "class_name", "graph"), exc)
            self.eager_reason = self.eager_reason or str(exc)
            return self.gm.forward
        if not (self.symbolic and self.programs):  # a dynamic graph meets unboundedly many shapes
            self.programs.append(program)
        return program.function

    def call(self, *args):
        """Run a call whose signature the generated function was not built for."""
        key = signature_of(args)
        function = self.functions.get(key)
        if function is None:
            if not all(isinstance(a, Tensor) for a in args):
                return self.gm.forward(*args)
            if len(self.functions) >= MAX_SIGNATURES:
                if not self.symbolic:
                    return self.gm.forward(*args)
                del self.functions[next(iter(self.functions))]  # a dynamic graph keeps the latest
            try:
                function = self.build(args, propagate=True)
            except Exception:  # a meta rule rejected the new inputs: eager raises the real error
                return self.gm.forward(*args)
            self.functions[key] = function
        return function(*args)



def generate(graph, attributes: dict, inputs: list, block_bytes: int, workers, respecialize,
             class_name: str, lowering=None) -> Program:
    """Compile ``graph`` (already a private copy) for ``inputs``' signature.

    Raises:
        Unsupported: the graph holds something only eager mode runs.
    """
    if any(not isinstance(x, Tensor) for x in inputs):
        raise Unsupported("a graph input is not a tensor")
    simplifications = simplify(graph)
    groups = partition_pointwise(graph)
    schedule = fusion_schedule(graph, groups)
    scratch = {m for g in groups for m in g.nodes if m not in g.outputs}
    values = analyze(graph, attributes, inputs, scratch)
    for value in values.values():
        if value.is_tensor and value.kind != "multi" and value.numel == 0:
            raise Unsupported(f"{value.name} has no elements")
    steps = {}
    for i, item in enumerate(schedule):
        for node in (item.nodes if isinstance(item, FusionGroup) else [item]):
            steps[node] = i
    if lowering is not None:  # nodes a lowering computes at another node's step (native row prologues)
        steps.update({node: steps[at] for node, at in lowering.relocated(groups, values).items()})
    memory = plan_memory(steps, values)
    plans = [plan_group(g, values, block_bytes, workers.threads) for g in groups]
    memory.arena_bytes = max([p.arena_bytes for p in plans], default=0)
    memory.zeros_bytes = max([p.zeros_bytes for p in plans], default=0)
    builder = FunctionBuilder(values, memory)
    for node in graph.nodes:
        builder.fresh_name(node.name)  # node names are taken: parameters and readable locals
    plan_of = {id(p.group): p for p in plans}
    for item in schedule:
        if isinstance(item, FusionGroup):
            if lowering is None or not lowering.emit_group(builder, plan_of[id(item)]):
                emit_group(builder, plan_of[id(item)])
        elif item.op == "call_function" and (lowering is None or not lowering.emit_node(builder, item)):
            emit_node(builder, item)
    result = builder.output(graph.output_node.args[0]) if graph.output_node is not None else "None"
    if lowering is not None:
        lowering.finish(builder)
    source = _assemble(builder, graph, values, result)
    function = _compile(source, builder, memory, respecialize, workers, class_name)
    program = Program(source, function, plans, simplifications, memory.total_bytes, memory.reused)
    function.program = program
    return program


def emit_node(builder, node) -> None:
    """One op outside any fused group: its kernel writing into preallocated memory."""
    value = builder.values[node]
    op = node.target
    if value.kind in ("view", "alias") and "inplace" not in getattr(op, "tags", ()):
        return  # views and getitem make no memory; their arrays are defined where first read
    builder.comment(node)
    kernel = builder.bind(op.kernel, f"k_{op.name}")
    args = [builder.bind(np, "np")] + [builder.argument(a) for a in node.args]
    kwargs = [f"{k}={builder.argument(v)}" for k, v in node.kwargs.items()]
    if "inplace" in op.tags:
        target = builder.array_of(value)
        builder.emit(f"{kernel}({', '.join(args + kwargs)}, out={target})")
        if value.root.kind in ("input", "param", "fresh"):
            builder.emit(f"{builder.tensor_of(value.root)}._bump_version()")
        return
    if value.kind == "multi":
        outs = [builder.allocate_fresh(part) for part in value.parts]
        out = f"({', '.join(outs)},)"
    elif value.root.kind == "fresh":
        out = builder.allocate_fresh(value)
    else:
        out = builder.array_of(value)
    builder.emit(f"_r = {kernel}({', '.join(args + kwargs + ['out=' + out])})")
    if value.kind == "multi":
        builder.emit(f"{builder.bind(runtime.store, 'store')}({out}, _r)")
    else:
        builder.emit(f"if _r is not {out}: {out}[...] = _r")


def _assemble(builder, graph, values, result: str) -> str:
    params = [n.name for n in graph.nodes if n.op == "placeholder"]
    checks = []
    for node in graph.nodes:
        if node.op == "placeholder":
            v = values[node]
            dtype = builder.bind(v.dtype, f"dl_{v.dtype.name}")
            checks.append(f"{node.name}._sizes != {v.sizes!r} or {node.name}._strides != {v.strides!r} "
                          f"or {node.name}._offset != {v.offset} or {node.name}._dtype is not {dtype}")
    lines = list(builder.preamble) + [f"def forward({', '.join(params)}):"]
    if checks:
        lines.append(f"    if {' or '.join(checks)}:")
        lines.append(f"        return _respecialize({', '.join(params)})")
    names = [name for name, _ in builder.pool_entries]
    if names:
        lines.append("    _P = _pool.pop() if _pool else _new_set()")
        lines.append(f"    {', '.join(names)}{',' if len(names) == 1 else ''} = _P")
    lines += ["    " + line for line in builder.lines]
    if names:
        lines.append("    _pool.append(_P)")
    lines.append(f"    return {result}")
    return "\n".join(lines) + "\n"


def _compile(source: str, builder, memory, respecialize, workers, class_name: str):
    builds = [build for _, build in builder.pool_entries]

    def new_set():
        mem = memory.allocate()
        return tuple(build(mem) for build in builds)

    namespace = dict(builder.globals)
    namespace.update(_pool=[], _new_set=new_set, _respecialize=respecialize, _run_blocks=workers.run,
                     __name__=f"dynamo_lite.generated.numpy_{class_name}")
    filename = f"<numpy_{class_name}_{next(_FUNCTION_IDS)}>.py"
    exec(compile(source, filename, "exec"), namespace)
    function = namespace["forward"]
    function.__qualname__ = f"{class_name}.numpy_forward"
    function.source = source
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    weakref.finalize(function, linecache.cache.pop, filename, None)
    return function


def _refuse_bfloat16(graph, inputs) -> None:
    """Generated code calls kernels on arrays, and a bfloat16 array holds raw bits: such
    graphs run eagerly, where dispatch widens them (NOTE: [bfloat16] in tensor/bfloat16.py)."""
    metas = [n.meta.get("val") for n in graph.nodes] + list(inputs)
    flat = [m for v in metas for m in (v if isinstance(v, (tuple, list)) else (v,))]
    if any(getattr(m, "_dtype", None) is bfloat16 for m in flat):
        raise Unsupported("bfloat16 tensors are computed by the eager kernels (widened to float32)")
