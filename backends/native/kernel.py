"""C kernels of fused pointwise groups: one loop nest per group, sizes and strides at run time.

NOTE: [native loops] A group's iteration space is the NumPy backend's (see NOTE: [blocked
evaluation]): dims in the primary output's memory order, size-1 dims dropped, dims that
every operand steps through as one merged. The kernel receives that space's sizes and
every operand's element strides as arguments, so its source depends only on the ops,
the dtypes, the rank and which inputs are broadcast along the innermost dim (read once
per chunk) or unit-stride there (``p[i]``, which gcc vectorizes); one shared object
serves every size. The work is the outer index times chunks of the innermost dim,
shared by OpenMP threads (``schedule(static)``) when it is large enough to pay.
"""
from __future__ import annotations

import ctypes
import math

from dynamo_lite.graph.node import Node

from ..numpy.blocking import broadcast_strides, iteration_dims
from .c_ops import C_OPS, C_TYPES, HELPERS, lowerable, literal, math_declarations

CHUNK = 16384  # innermost elements per task: a few hundred KiB of operands, cache-resident
PARALLEL_MIN_ELEMENTS = 1 << 15  # below this, waking threads costs more than it saves

_INT64_P = ctypes.POINTER(ctypes.c_int64)
PREAMBLE = "#include <stdint.h>\n#include <math.h>\n" + math_declarations() + "\n" + HELPERS


def group_geometry(plan, values) -> tuple:
    """``(operand nodes, iteration sizes, per-operand iteration strides)`` of a group."""
    group = plan.group
    operands = [n for n in group.inputs if values[n].is_tensor] + list(group.outputs)
    shape = tuple(group.shape)
    strides = [broadcast_strides(shape, values[n].sizes, values[n].strides) for n in operands]
    primary = strides[len(operands) - len(group.outputs)]
    dims = iteration_dims(shape, primary, strides)
    if not dims:  # every dim has size 1: one element
        return operands, (1,), [(0,) for _ in operands]
    sizes = tuple(math.prod(shape[d] for d in merged) for merged in dims)
    return operands, sizes, [tuple(s[merged[-1]] for merged in dims) for s in strides]


def group_source(name: str, plan, operands: list, inner_strides: list) -> str:
    """The C function ``name`` computing ``plan``'s group (see NOTE: [native loops])."""
    group, members = plan.group, plan.group.nodes
    n_inputs = len(operands) - len(group.outputs)
    index, ctype_of = {}, {}
    lines = [f"void {name}(int64_t ndim, const int64_t* sizes, const int64_t* strides, int threads, "
             + ", ".join(f"char* p{k}" for k in range(len(operands))) + ") {",
             "  const int64_t inner = sizes[ndim - 1];",
             "  int64_t outer = 1;",
             "  for (int64_t d = 0; d < ndim - 1; d++) outer *= sizes[d];",
             f"  const int64_t chunk = inner < {CHUNK} ? inner : {CHUNK};",
             "  const int64_t chunks = (inner + chunk - 1) / chunk;",
             f"  #pragma omp parallel for schedule(static) num_threads(threads) if(outer * inner >= {PARALLEL_MIN_ELEMENTS})",
             "  for (int64_t task = 0; task < outer * chunks; task++) {",
             "    const int64_t start = (task % chunks) * chunk;",
             "    const int64_t stop = start + chunk < inner ? start + chunk : inner;",
             "    int64_t rest = task / chunks;"]
    for k in range(len(operands)):
        lines.append(f"    int64_t off{k} = start * strides[{k} * ndim + ndim - 1];")
    lines += ["    for (int64_t d = ndim - 2; d >= 0; d--) {",
              "      const int64_t at = rest % sizes[d];",
              "      rest /= sizes[d];"]
    lines += [f"      off{k} += at * strides[{k} * ndim + d];" for k in range(len(operands))]
    lines.append("    }")
    for k, node in enumerate(operands):
        ctype = C_TYPES[node.meta["val"]._dtype.numpy]
        ctype_of[node] = ctype
        lines.append(f"    {ctype}* a{k} = ({ctype}*)p{k} + off{k};")
        if k < n_inputs and inner_strides[k] == 0:
            lines.append(f"    const {ctype} b{k} = a{k}[0];")
        if inner_strides[k] not in (0, 1):
            lines.append(f"    const int64_t s{k} = strides[{k} * ndim + ndim - 1];")
    lines += ["    #pragma omp simd", "    for (int64_t i = 0; i < stop - start; i++) {"]
    for k, node in enumerate(operands[:n_inputs]):
        if inner_strides[k] == 0:
            index[node] = f"b{k}"
        else:
            lines.append(f"      const {ctype_of[node]} v{k} = a{k}[{_at(k, inner_strides[k])}];")
            index[node] = f"v{k}"
    for j, member in enumerate(members):
        ctype = C_TYPES[member.meta["val"]._dtype.numpy]
        args = [index[a] if isinstance(a, Node) else literal(a, ctype) for a in member.args]
        lines.append(f"      const {ctype} m{j} = {C_OPS[member.target.name](ctype, args)};  /* {member.name} */")
        index[member] = f"m{j}"
    for k, node in enumerate(operands[n_inputs:], start=n_inputs):
        lines.append(f"      a{k}[{_at(k, inner_strides[k])}] = {index[node]};")
    lines += ["    }", "  }", "}"]
    return "\n".join(lines)


def _at(k: int, stride: int) -> str:
    return "i" if stride == 1 else ("0" if stride == 0 else f"i * s{k}")


class NativeLowering:
    """Emits each lowerable fused group as a call of a C kernel; builds one library per function.

    Args:
        build: ``build(source) -> ctypes.CDLL`` (the toolchain's cached build).
        threads: a ``ThreadSetting`` whose ``value`` each call passes to the kernel.
    """

    def __init__(self, build, threads):
        self._build, self.threads = build, threads
        self.functions: list = []  # (C name, global name, operand count) of the function being generated
        self.sources: list = []
        self.built_source = ""  # the C source of the last function built (shown by debug mode)

    def emit_group(self, builder, plan) -> bool:
        """Emit ``plan``'s group as a C kernel call; False if some member has no exact lowering."""
        group, values = plan.group, builder.values
        if not all(lowerable(m) for m in group.nodes):
            return False
        if any(not values[n].is_tensor for n in group.inputs):
            return False
        for node in group.outputs:
            if values[node].root.kind == "fresh":
                builder.allocate_fresh(values[node])
        operands, sizes, strides = group_geometry(plan, values)
        c_name = f"dl_group{len(self.functions)}"
        self.sources.append(group_source(c_name, plan, operands, [s[-1] for s in strides]))
        function = builder.fresh_name(f"_native_{group.nodes[0].name}")
        self.functions.append((c_name, function, len(operands)))
        sizes_arg = builder.bind((ctypes.c_int64 * len(sizes))(*sizes), "sizes")
        flat = [s for per_operand in strides for s in per_operand]
        strides_arg = builder.bind((ctypes.c_int64 * len(flat))(*flat), "strides")
        pointers = [f"{builder.array_of(values[n])}.ctypes.data" for n in operands]
        settings = builder.bind(self.threads, "threads")
        builder.emit(f"# native kernel {c_name}: {', '.join(m.name for m in group.nodes)}")
        builder.emit(f"{function}({len(sizes)}, {sizes_arg}, {strides_arg}, {settings}.value, {', '.join(pointers)})")
        return True

    @property
    def source(self) -> str:
        """The C source of every kernel emitted so far."""
        return PREAMBLE + "\n\n" + "\n\n".join(self.sources) + "\n"

    def finish(self, builder) -> None:
        """Build the library of the emitted kernels and bind them (raises BuildError); the
        next generated function (another signature) starts a new library."""
        functions, source = self.functions, self.source
        self.functions, self.sources = [], []
        if not functions:
            return
        library = self._build(source)
        self.built_source = source
        for c_name, global_name, operand_count in functions:
            function = getattr(library, c_name)
            function.restype = None
            function.argtypes = [ctypes.c_int64, _INT64_P, _INT64_P, ctypes.c_int] + [ctypes.c_void_p] * operand_count
            builder.globals[global_name] = function
