"""The numpy backend's pipeline: simplify, fuse, plan memory, generate and compile the functions of one graph.

NOTE: [signatures] A static graph's function is specialized to its inputs' exact
geometry (sizes, strides, storage offset, dtype): buffer sizes, block lists and views
are constants. A graph with symbolic sizes (the frame compiler's dynamic shapes) gets
one function for all sizes (NOTE: [one function for all sizes] in codegen.py): it is
simplified on its symbolic metas (rewrites that hold for every size), its metas are
re-derived for the first inputs, and its geometry is read from a per-shape pool set
keyed by the symbolic inputs' geometry. A new shape costs a ``ShapePlan`` (metas,
geometry, buffer and block plans for it, a few milliseconds) and no code generation,
unless the plans change the code's structure (a fused group blocked at one size and
not at another, members of a group that differ in shape): then another function is
generated for that structure (``MAX_VARIANTS``), and the shapes it fits reuse it.
Every function opens with a check of its geometry; the compiler's guards make it pass
on the calls they let through, and any other call (a caller of the backend with new
shapes) goes to ``Specializations.call``. A static graph's new signature gets its own
function (metas re-derived by ShapeProp), up to ``MAX_SIGNATURES``, after which the
graph runs eagerly. A lowering (the native backend's C kernels) reads geometry per shape
too, and adds what its code depends on to the structure (``ShapePlan.lowered``).
"""
from __future__ import annotations

import itertools
import linecache
import logging
import threading
import weakref
from dataclasses import dataclass, field

import numpy as np

from dynamo_lite.graph import GraphModule, ShapeProp
from dynamo_lite.graph.passes.fusion import FusionGroup, fusion_schedule, partition_pointwise
from dynamo_lite.graph.passes.sizes import is_symbolic, propagate, signature_of, specialize
from dynamo_lite.tensor.dtype import bfloat16
from dynamo_lite.tensor.symint import SymInt, has_symbols
from dynamo_lite.tensor.tensor import Tensor

from . import runtime
from .blocking import DEFAULT_BLOCK_BYTES
from .codegen import FunctionBuilder
from .fused import emit_group
from .shapes import ShapePlan, ShapeState, add_shape, serves, serves_geometry
from .simplify import simplify
from .values import Unsupported

log = logging.getLogger("dynamo_lite")
graph_log = logging.getLogger("dynamo_lite.graph")

MAX_SIGNATURES = 8  # functions of a static graph (one per input signature)
MAX_VARIANTS = 4  # functions of a symbolic graph (one per code structure)
_FUNCTION_IDS = itertools.count()


@dataclass
class Program:
    """A generated function, with what went into it."""

    source: str
    function: object
    groups: list = field(default_factory=list)
    simplifications: dict = field(default_factory=dict)
    pool_bytes: int = 0
    buffers_reused: int = 0
    layout: "Layout | None" = None

    def summary(self) -> str:
        blocked = sum(1 for g in self.groups if g.blocking is not None)
        fused = sum(len(g.group.nodes) for g in self.groups)
        made = ", ".join(f"{k} {v}" for k, v in self.simplifications.items() if v) or "none"
        return (f"{len(self.groups)} pointwise groups ({fused} ops, {blocked} blocked), pool "
                f"{self.pool_bytes / 1024:.0f} KiB ({self.buffers_reused} buffers reused), "
                f"simplifications: {made}")


@dataclass
class Layout:
    """What the code of a (simplified) graph copy is made of, whatever the sizes: fusion
    groups, their schedule, and which members live in block scratch."""

    graph: object
    groups: list
    schedule: list
    steps: dict
    scratch: set
    simplifications: dict

    @classmethod
    def of(cls, graph, simplifications: dict) -> "Layout":
        groups = partition_pointwise(graph)
        schedule = fusion_schedule(graph, groups)
        scratch = {m for g in groups for m in g.nodes if m not in g.outputs}
        steps = {}
        for i, item in enumerate(schedule):
            for node in (item.nodes if isinstance(item, FusionGroup) else [item]):
                steps[node] = i
        return cls(graph, groups, schedule, steps, scratch, simplifications)


class Specializations:
    """The generated functions of one graph (see NOTE: [signatures]).

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
        self.variants: list = []  # Programs of a symbolic graph, one per code structure
        self.eager_reason: str | None = None  # why the first signature runs eagerly, if it does
        self.symbolic = is_symbolic(gm.graph)
        self.all_sizes = self.symbolic  # NOTE: [signatures]
        self.symbolic_inputs = tuple(i for i, n in enumerate(n for n in gm.graph.nodes if n.op == "placeholder")
                                     if _has_symbolic_geometry(n.meta.get("val")))
        self._lock = threading.Lock()

    def build(self, inputs, *, propagate: bool):
        """The function for ``inputs``' signature (``gm.forward`` if the graph is not compilable)."""
        try:
            _refuse_non_tensors(inputs, self.symbolic_inputs if self.all_sizes else ())
            program = self._variant(inputs) if self.all_sizes else self._specialized(inputs, propagate)
        except Unsupported as exc:
            log.debug("numpy backend runs %s eagerly: %s", getattr(self.gm, "class_name", "graph"), exc)
            self.eager_reason = self.eager_reason or str(exc)
            return self.gm.forward
        if not (self.symbolic and self.programs):  # a dynamic graph meets unboundedly many shapes
            self.programs.append(program)
        return program.function

    def _specialized(self, inputs, propagate_metas: bool) -> Program:
        graph = self.gm.graph.copy()
        if self.symbolic:
            specialize(graph, self.attributes, inputs)
        elif propagate_metas:
            ShapeProp(GraphModule(self.attributes, graph)).propagate(*inputs)
        _refuse_bfloat16(graph, inputs)
        layout = Layout.of(graph, simplify(graph))
        return self._generate(layout, inputs, ())

    def _variant(self, inputs) -> Program:
        """A new function for all sizes, generated for ``inputs``' shape."""
        if len(self.variants) >= MAX_VARIANTS:
            raise Unsupported(f"the graph needed more than {MAX_VARIANTS} code structures for its sizes")
        graph = self.gm.graph.copy()
        simplifications = simplify(graph)  # on symbolic metas: holds for every size
        propagate(graph, self.attributes, inputs)
        _refuse_bfloat16(graph, inputs)
        program = self._generate(Layout.of(graph, simplifications), inputs, self.symbolic_inputs)
        self.variants.append(program)
        return program

    def _generate(self, layout: Layout, inputs, symbolic_inputs: tuple) -> Program:
        shape = ShapePlan.of(layout, self.attributes, list(inputs), self.block_bytes, self.workers.threads,
                             self.lowering)
        program = generate(layout, shape, self.attributes, self.workers, self.call,
                           getattr(self.gm, "class_name", "graph"), self.lowering, symbolic_inputs)
        if symbolic_inputs:
            add_shape(program.function, inputs, shape)
        shape.forget_inputs()
        return program

    def _planned(self, args):
        """An existing function for all sizes, now planned for ``args``' shape, or None."""
        for program in self.variants:
            layout = program.layout
            propagate(layout.graph, self.attributes, args)
            try:
                shape = ShapePlan.of(layout, self.attributes, list(args), self.block_bytes, self.workers.threads,
                                     self.lowering)
            except Unsupported:
                continue
            shape.forget_inputs()
            if shape.structure == program.function.structure and serves_geometry(program.function, args):
                add_shape(program.function, args, shape)
                return program.function
        return None

    def call(self, *args):
        """Run a call the generated function was not built or planned for."""
        key = signature_of(args)
        function = self.functions.get(key)
        if function is None or not serves(function, args):
            with self._lock:
                function = self._function_for(args, key)
        return function(*args)

    def _function_for(self, args, key):
        if not _inputs_compilable(args, self.symbolic_inputs if self.all_sizes else ()):
            return self.gm.forward
        if len(self.functions) >= MAX_SIGNATURES:
            if not self.symbolic:
                return self.gm.forward
            del self.functions[next(iter(self.functions))]  # a dynamic graph keeps the latest
        try:
            function = self._planned(args) if self.all_sizes else None
            if function is None:
                function = self.build(args, propagate=True)
        except Exception:  # a meta rule rejected the new inputs: eager raises the real error
            return self.gm.forward
        self.functions[key] = function
        return function


def _has_symbolic_geometry(meta) -> bool:
    if type(meta) is SymInt:  # a symbolic int input (NOTE: [symbolic int inputs])
        return True
    return has_symbols(getattr(meta, "_sizes", ())) or has_symbols(getattr(meta, "_strides", ()))


def generate(layout: Layout, shape: ShapePlan, attributes: dict, workers, respecialize, class_name: str,
             lowering=None, symbolic_inputs: tuple = ()) -> Program:
    """Compile ``layout`` for ``shape``; with ``symbolic_inputs`` (positions of inputs with
    symbolic geometry) the function serves every shape of the same structure.

    Raises:
        Unsupported: the graph holds something only eager mode runs.
    """
    graph = layout.graph
    builder = FunctionBuilder(shape, bool(symbolic_inputs))
    for node in graph.nodes:
        builder.fresh_name(node.name)  # node names are taken: parameters and readable locals
    for item in layout.schedule:
        if isinstance(item, FusionGroup):
            plan = shape.group_plans[item]
            if lowering is None or not lowering.emit_group(builder, plan):
                emit_group(builder, plan)
        elif item.op == "call_function" and (lowering is None or not lowering.emit_node(builder, item)):
            emit_node(builder, item)
    result = builder.output(graph.output_node.args[0]) if graph.output_node is not None else "None"
    if lowering is not None:
        lowering.finish(builder)
    source = _assemble(builder, graph, result, symbolic_inputs)
    function = _compile(source, builder, shape, respecialize, workers, class_name)
    function.symbolic_inputs = symbolic_inputs
    function.static_geometry = _static_geometry(builder, graph, symbolic_inputs)
    function.structure = shape.structure
    if symbolic_inputs:
        function.shapes = function.__globals__["_shapes"]
    plans = list(shape.group_plans.values())
    program = Program(source, function, plans, layout.simplifications, shape.memory.total_bytes,
                      shape.memory.reused, layout)
    function.program = program
    return program


def emit_node(builder, node) -> None:
    """One op outside any fused group: its kernel writing into preallocated memory."""
    value = builder.values[node]
    op = node.target
    if value.kind == "size":
        builder.emit(f"{node.name} = {_size_expression(builder, node)}")
        return
    if value.kind in ("view", "alias") and "inplace" not in getattr(op, "tags", ()):
        return  # views and getitem make no memory; their arrays are defined where first read
    builder.comment(node)
    kernel = builder.bind(op.kernel, f"k_{op.name}")
    args = [builder.bind(np, "np")] + [builder.argument(a) for a in node.args]
    kwargs = [f"{k}={builder.argument(v)}" for k, v in node.kwargs.items()]
    if "inplace" in op.tags:
        target = builder.array_of(value)
        if not _copies_onto_itself(builder.values, node):  # NOTE: [copy into the updated tensor]
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


def _copies_onto_itself(values: dict, node) -> bool:
    """A ``copy_`` whose source already is its destination's memory, element for element."""
    if node.target.name != "copy_" or len(node.args) != 2 or node.kwargs:
        return False
    dst, src = (values.get(a) for a in node.args)
    return (dst is not None and src is not None and src.root is dst.root and src.offset == dst.offset
            and tuple(src.sizes) == tuple(dst.sizes) and tuple(src.strides) == tuple(dst.strides))


# Size nodes of symbolic graphs: the int arithmetic they do, as Python source.
_SIZE_OPERATORS = {"add": "+", "mul": "*", "floordiv": "//", "mod": "%"}


def _size_expression(builder, node) -> str:
    if node.target.__name__ == "sym_size":
        tensor = builder.values[node.args[0]]
        if tensor.kind != "input":
            raise Unsupported(f"{node.name}: the size of a tensor that is not a graph input")
        return f"{builder.object_of(tensor)}._sizes[{builder.literal(node.args[1])}]"
    args = [builder.argument(a) for a in node.args]
    return f"({args[0]} {_SIZE_OPERATORS[node.target.__name__]} {args[1]})"


def _static_geometry(builder, graph, symbolic_inputs: tuple) -> tuple:
    """(position, sizes, strides, offset) of the tensor inputs whose geometry the function
    checks (all but ``symbolic_inputs``): it serves no call where one differs."""
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    values = [builder.values[n] for n in placeholders]
    return tuple((i, tuple(v.sizes), tuple(v.strides), v.offset) for i, v in enumerate(values)
                 if v.is_tensor and i not in symbolic_inputs)


def _assemble(builder, graph, result: str, symbolic_inputs: tuple) -> str:
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    params = [n.name for n in placeholders]
    checks = []
    for i, node in enumerate(placeholders):
        v = builder.values[node]
        if not v.is_tensor:  # an int input of a symbolic graph: its value is in the shape key
            checks.append(f"type({node.name}) is not int")
            continue
        dtype = builder.bind(v.dtype, f"dl_{v.dtype.name}")
        if i not in symbolic_inputs:  # geometry of the others: the shape key
            checks.append(f"{node.name}._sizes != {v.sizes!r} or {node.name}._strides != {v.strides!r} "
                          f"or {node.name}._offset != {v.offset}")
        checks.append(f"{node.name}._dtype is not {dtype}")
    respecialize = f"return _respecialize({', '.join(params)})"
    lines = list(builder.preamble) + [f"def forward({', '.join(params)}):"]
    if checks:
        lines.append(f"    if {' or '.join(checks)}:")
        lines.append(f"        {respecialize}")
    if symbolic_inputs:
        key = ", ".join(f"{params[i]}._sizes, {params[i]}._strides, {params[i]}._offset"
                        if builder.values[placeholders[i]].is_tensor else params[i] for i in symbolic_inputs)
        lines.append(f"    _S = _shapes.get(({key},))")
        lines.append("    if _S is None:")
        lines.append(f"        {respecialize}")
    else:
        lines.append("    _S = _static")
    names = [name for name, _ in builder.pool_entries]
    if names:
        lines.append("    _P = _S.pop() if _S else _S.new_set()")
        lines.append(f"    {', '.join(names)}{',' if len(names) == 1 else ''} = _P")
    lines += ["    " + line for line in builder.lines]
    if names:
        lines.append("    _S.append(_P)")
    lines.append(f"    return {result}")
    return "\n".join(lines) + "\n"


def _compile(source: str, builder, shape: ShapePlan, respecialize, workers, class_name: str):
    builds = [build for _, build in builder.pool_entries]
    namespace = dict(builder.globals)
    namespace.update(_static=ShapeState(shape, builds), _shapes={}, _respecialize=respecialize,
                     _run_blocks=workers.run, __name__=f"dynamo_lite.generated.numpy_{class_name}")
    filename = f"<numpy_{class_name}_{next(_FUNCTION_IDS)}>.py"
    exec(compile(source, filename, "exec"), namespace)
    function = namespace["forward"]
    function.__qualname__ = f"{class_name}.numpy_forward"
    function.source = source
    function.builds = builds
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    weakref.finalize(function, linecache.cache.pop, filename, None)
    return function


def _inputs_compilable(inputs, symbolic_inputs: tuple) -> bool:
    """Tensors, and the ints of a symbolic graph's symbolic int inputs."""
    return all(isinstance(x, Tensor) or (type(x) is int and i in symbolic_inputs) for i, x in enumerate(inputs))


def _refuse_non_tensors(inputs, symbolic_inputs: tuple) -> None:
    if not _inputs_compilable(inputs, symbolic_inputs):
        raise Unsupported("a graph input is not a tensor")


def _refuse_bfloat16(graph, inputs) -> None:
    """Generated code calls kernels on arrays, and a bfloat16 array holds raw bits: such
    graphs run eagerly, where dispatch widens them (NOTE: [bfloat16] in tensor/bfloat16.py)."""
    metas = [n.meta.get("val") for n in graph.nodes] + list(inputs)
    flat = [m for v in metas for m in (v if isinstance(v, (tuple, list)) else (v,))]
    if any(getattr(m, "_dtype", None) is bfloat16 for m in flat):
        raise Unsupported("bfloat16 tensors are computed by the eager kernels (widened to float32)")
