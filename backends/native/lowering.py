"""NativeLowering: the NumPy backend's code generator with fused groups and row ops as C kernel calls.

The NumPy backend's ``generate`` asks its lowering, in schedule order, to emit each
fused group (``emit_group``) and each other node (``emit_node``); what the lowering
declines keeps the NumPy code. Before memory is planned, ``relocated`` names the fused
groups computed inside a row kernel (NOTE: [native rows]): their members count as run
at the row op's step, so the memory of their inputs stays untouched until then. One
shared object holds every kernel of a generated function (``finish``).

NOTE: [native calls] A kernel is called through a small C entry point taking one
argument block (an ``int64`` array) and the thread count: the block holds every
operand's address, then the iteration geometry (rank, sizes, strides; a row op's row
length). Blocks belong to a pool set (``FunctionBuilder.pool_entry``), built for its
shape: addresses of pool memory and the geometry are written once per set, and only the
addresses of inputs, parameters and fresh outputs are stored on each call. A ctypes call
with two arguments and no conversion table costs a fraction of one with ten converted
arguments. Since geometry comes from the pool set, a graph with symbolic sizes gets one
function and one library for every size of the same ``structure`` (the C source of each
kernel at that shape: which operands are broadcast or unit-stride).
"""
from __future__ import annotations

import ctypes

import numpy as np

from .c_ops import HELPERS, lowerable, math_declarations
from .gemm import gemm_call, gemm_source
from .image_grads import IMAGE_OPS, image_call, image_source
from .image_ops import conv2d_product
from .kernel import group_geometry, group_source
from .row_ops import parse_row_call
from .rows import row_call, row_source

PREAMBLE = "#include <stdint.h>\n#include <math.h>\n" + math_declarations() + "\n" + HELPERS
# The C parameters of each kind of kernel before its operand pointers, read from the
# argument block's geometry ``g`` (see NOTE: [native calls]).
LEADING = {"group": "g[0], g + 1, g + 1 + g[0], threads", "row": "g[0], g + 2, g[1], g + 2 + g[0], threads",
           "image": "g, threads", "gemm": "g, threads"}
# Ops computed by one C kernel each, by target name: (the call at some values or None, its C source).
NODE_KERNELS = {"linear": (gemm_call, gemm_source)}


class NativeLowering:
    """Emits lowerable fused groups and row ops as C kernel calls; builds one library per function.

    Args:
        build: ``build(source) -> ctypes.CDLL`` (the toolchain's cached build).
        threads: a ``ThreadSetting`` whose ``value`` each call passes to the kernel.
    """

    def __init__(self, build, threads):
        self._build, self.threads = build, threads
        self.functions: list = []  # (C entry point, global name) of the function being generated
        self.sources: list = []
        self.prologues: dict = {}  # id(FusionGroup) -> the row op computing it per element
        self._prologue_plans: dict = {}  # row op -> the GroupPlan of its prologue
        self._addresses: dict = {}  # root Value -> the name of its AddressCache
        self.built_source = ""  # the C source of the last function built (shown by debug mode)

    # -- hooks called by the NumPy backend's generate ------------------------------------------
    def relocated(self, groups: list, values: dict) -> dict:
        """``{member: row op}`` for every fused group a row kernel computes as its prologue."""
        self.prologues, self._prologue_plans = {}, {}
        graph_mutates = any("inplace" in getattr(n.target, "tags", ()) for n in values if n.op == "call_function")
        if graph_mutates:  # the group would run later than scheduled: a mutation in between would show
            return {}
        moved = {}
        for group in groups:
            reader = _prologue_reader(group, values)
            if reader is not None:
                self.prologues[id(group)] = reader
                moved.update({member: reader for member in group.nodes})
        return moved

    def structure(self, groups: list, values: dict) -> dict:
        """What the C code depends on at this shape (after ``relocated``): per fused group and
        row op the lowering emits, its kernel's source (see NOTE: [native calls])."""
        kernels = {}
        for group in groups:
            reader = self.prologues.get(id(group))
            if reader is not None:
                kernels[group] = ("prologue of", reader.name)
            elif self._lowers(group, values):
                plan = _GroupOnly(group, values)
                operands, _, strides = group_geometry(plan, values)
                kernels[group] = group_source("k", plan, operands, [s[-1] for s in strides])
        relocated = {reader: group for group in groups for reader in [self.prologues.get(id(group))] if reader}
        for node in values:
            kernel = NODE_KERNELS.get(getattr(node.target, "name", None)) if node.op == "call_function" else None
            if kernel is not None:
                call = kernel[0](node, values)
                kernels[node] = None if call is None else kernel[1]("k", call)
                continue
            if node.op == "call_function" and getattr(node.target, "name", None) in IMAGE_OPS:
                call = image_call(node, values)
                kernels[node] = None if call is None else image_source("k", call)
                continue
            spec = parse_row_call(node) if node.op == "call_function" else None
            if spec is not None:
                group = relocated.get(node)
                call = row_call(node, spec, values, _GroupOnly(group, values) if group is not None else None)
                kernels[node] = None if call is None else row_source("k", call)
        return kernels

    def fused_nodes(self, group) -> list:
        """The nodes one kernel computes for ``group``: its members, and the row op it feeds if it is a prologue."""
        reader = self.prologues.get(id(group))
        return list(group.nodes) + ([reader] if reader is not None else [])

    def emit_group(self, builder, plan) -> bool:
        """Emit ``plan``'s group as a C kernel call; False if some member has no exact lowering."""
        group, values = plan.group, builder.values
        reader = self.prologues.get(id(group))
        if reader is not None:
            self._prologue_plans[reader] = plan
            builder.emit(f"# {', '.join(m.name for m in group.nodes)}: computed inside {reader.name}'s row kernel")
            return True
        if not self._lowers(group, values):
            return False
        for node in group.outputs:
            if values[node].root.kind == "fresh":
                builder.allocate_fresh(values[node])
        operands, _, strides = group_geometry(plan, values)

        def geometry(shape):
            _, sizes, strides = group_geometry(shape.group_plans[group], shape.values)
            return [len(sizes), *sizes, *(s for per_operand in strides for s in per_operand)]

        source = lambda name: group_source(name, plan, operands, [s[-1] for s in strides])  # noqa: E731
        self._emit_call(builder, "group", source, group.nodes, operands, geometry)
        return True

    def emit_node(self, builder, node) -> bool:
        """Emit a reduction, normalization or image op as a C kernel; False to keep the NumPy code."""
        name = getattr(node.target, "name", None)  # size arithmetic nodes call plain functions
        if name in NODE_KERNELS:
            return self._emit_node_kernel(builder, node, *NODE_KERNELS[name])
        if name in IMAGE_OPS:
            return self._emit_image(builder, node)
        spec = parse_row_call(node)
        if spec is None:
            return False
        prologue = self._prologue_plans.pop(node, None)
        call = row_call(node, spec, builder.values, prologue)
        if call is None:
            if prologue is not None:
                raise AssertionError(f"{node.name}: its prologue was planned but its kernel was refused")
            return False
        value = builder.values[node]
        if value.root.kind == "fresh":
            builder.allocate_fresh(value)
        group = prologue.group if prologue is not None else None

        def geometry(shape):
            call = row_call(node, spec, shape.values, shape.group_plans[group] if group is not None else None)
            return [len(call.sizes), call.row, *call.sizes, *(s for per_operand in call.strides for s in per_operand)]

        members = (list(group.nodes) if group is not None else []) + [node]
        self._emit_call(builder, "row", lambda name: row_source(name, call), members, call.operands, geometry)
        return True

    def _emit_node_kernel(self, builder, node, parse, make_source) -> bool:
        """One node as one C kernel (``NODE_KERNELS``); False to keep the NumPy code."""
        call = parse(node, builder.values)
        if call is None:
            return False
        value = builder.values[node]
        if value.root.kind == "fresh":
            builder.allocate_fresh(value)
        self._emit_call(builder, "gemm", lambda name: make_source(name, call), [node], call.operands,
                        lambda shape: parse(node, shape.values).words)
        return True

    def _emit_image(self, builder, node) -> bool:
        """max_pool2d as one kernel; conv2d as one kernel calling eager's gemm (NOTE: [gemm from C]), or
        else as the gather kernel, then eager's product (NOTE: [native image ops])."""
        call = image_call(node, builder.values)
        if call is None:
            return False
        value = builder.values[node]
        if value.root.kind == "fresh":
            builder.allocate_fresh(value)
        cols = None
        if call.cols_shape is not None:
            dtype = value.dtype.numpy
            cols = lambda shape: np.empty(image_call(node, shape.values).cols_shape, dtype)  # noqa: E731
        block = self._emit_call(builder, "image", lambda name: image_source(name, call), [node], call.operands,
                                lambda shape: image_call(node, shape.values).words, cols)
        if cols is not None and call.gemm is None:
            weight, bias = node.args[1], (node.args[2] if len(node.args) > 2 else None)
            arrays = [builder.argument(a) for a in (weight, bias)]
            out = builder.array_of(value)
            builder.emit(f"{builder.bind(conv2d_product, 'conv2d_product')}({block}[2], {', '.join(arrays)}, {out})")
        return True

    def finish(self, builder) -> None:
        """Build the library of the emitted kernels and bind them (raises BuildError); the
        next generated function (another signature) starts a new library."""
        functions, source = self.functions, self.source
        self.functions, self.sources, self._addresses = [], [], {}
        if not functions:
            return
        library = self._build(source)
        self.built_source = source
        for entry, global_name in functions:
            function = getattr(library, entry)
            function.restype = None  # no argtypes: the block passes by reference, the thread count as an int
            builder.globals[global_name] = function

    @property
    def source(self) -> str:
        """The C source of every kernel emitted so far."""
        return PREAMBLE + "\n\n" + "\n\n".join(self.sources) + "\n"

    # -- helpers ------------------------------------------------------------------------------
    @staticmethod
    def _lowers(group, values: dict) -> bool:
        return all(lowerable(m) for m in group.nodes) and all(values[n].is_tensor for n in group.inputs)

    def _emit_call(self, builder, kind: str, make_source, members: list, operands: list, geometry,
                   scratch=None) -> str:
        """Add a kernel and its entry point to the library, and emit its call (NOTE: [native calls]);
        ``scratch(shape)`` makes an array per pool set passed after the operands. Returns the pool
        entry: ``(block, arrays, scratch array)``."""
        c_name = f"dl_{kind}{len(self.functions)}"
        function = builder.fresh_name(f"_native_{members[0].name}")
        count = len(operands) + (scratch is not None)
        pointers = ", ".join(f"(char*)(intptr_t)a[{k}]" for k in range(count))
        self.sources.append(f"{make_source(c_name)}\n\nvoid {c_name}_call(const int64_t* a, int threads) {{\n"
                            f"  const int64_t* g = a + {count};\n"
                            f"  {c_name}({LEADING[kind]}, {pointers});\n}}")
        self.functions.append((f"{c_name}_call", function))
        values = [builder.values[n] for n in operands]
        pooled = [v.key if v.root.kind == "buffer" else None for v in values]

        def argument_block(mem):
            shape = mem.shape
            arrays = [mem.array(shape.by_key[key]) if key is not None else None for key in pooled]
            extra = scratch(shape) if scratch is not None else None
            words = [a.ctypes.data if a is not None else 0 for a in arrays]
            words += ([extra.ctypes.data] if extra is not None else []) + geometry(shape)
            return (ctypes.c_int64 * len(words))(*words), arrays, extra  # the arrays keep the pool memory alive

        block = builder.pool_entry(f"{function}_args", argument_block)
        builder.emit(f"# native kernel {c_name}: {', '.join(m.name for m in members)}")
        stores = [(k, self._address(builder, v)) for k, v in enumerate(values) if v.root.kind != "buffer"]
        target = f"{block}[0]"
        if stores:
            target = builder.fresh_name(f"{function}_a")
            builder.emit(f"{target} = {block}[0]")
        for k, address in stores:
            builder.emit(f"{target}[{k}] = {address}")
        builder.emit(f"{function}({target}, {builder.bind(self.threads, 'threads')}.value)")
        return block

    def _address(self, builder, value) -> str:
        """An expression of the address of ``value``'s first element, for memory outside the pool:
        a parameter's storage address is looked up once per storage (``AddressCache``)."""
        root = value.root
        offset = builder.geometry(f"{value.name}_offset", value, lambda v: v.offset * v.dtype.itemsize)
        if root.kind == "param":
            if root not in self._addresses:
                self._addresses[root] = builder.bind(AddressCache(), f"{root.name}_address")
            start = f"{self._addresses[root]}.of({builder.tensor_of(root)})"
        else:  # an input or a fresh output: new memory on (almost) every call
            start = f"{builder.root_memory(root)}.ctypes.data"
        return start if offset == "0" else f"{start} + {offset}"


class AddressCache:
    """The address of a tensor's storage, refreshed when the tensor gets another storage (one
    tuple, swapped whole: a concurrent call never sees a new storage with the old address)."""

    __slots__ = ("entry",)

    def __init__(self):
        self.entry = (None, 0)

    def of(self, tensor) -> int:
        data, entry = tensor._storage.data, self.entry
        if entry[0] is not data:
            entry = self.entry = (data, data.ctypes.data)
        return entry[1]


def _prologue_reader(group, values: dict):
    """The row op computing ``group`` per element, when its one output feeds only that op and
    every input has the op's dtype (a bool mask read in each pass over the row made a masked
    softmax slower than a separate masked_fill kernel: 123 vs 78 us on (4, 4, 32, 32))."""
    if len(group.outputs) != 1 or not all(lowerable(m) for m in group.nodes):
        return None
    output = group.outputs[0]
    if any(values[n].dtype is not values[output].dtype for n in group.inputs if values[n].is_tensor):
        return None
    readers = list(output.users)
    if len(readers) != 1:
        return None
    reader = readers[0]
    spec = parse_row_call(reader)
    if spec is None or reader.args[0] is not output or output in spec.extras:
        return None
    return reader if row_call(reader, spec, values, _GroupOnly(group, values)) is not None else None


class _GroupOnly:
    """A stand-in GroupPlan (the group and its shape for ``values``) for planning before groups are planned."""

    def __init__(self, group, values: dict):
        self.group, self.shape = group, tuple(values[group.outputs[0]].sizes)
