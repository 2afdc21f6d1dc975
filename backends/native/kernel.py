"""C kernels of fused pointwise groups: one loop nest per group, sizes and strides at run time.

NOTE: [native loops] A group's iteration space is the NumPy backend's (see NOTE: [blocked
evaluation]): dims in the primary output's memory order, size-1 dims dropped, dims that
every operand steps through as one merged. The kernel receives that space's sizes and
every operand's element strides as arguments, so its source depends only on the ops,
the dtypes, the rank and which inputs are broadcast along the innermost dim (read once
per chunk) or unit-stride there (``p[i]``, which gcc vectorizes); one shared object
serves every size. The work is the outer index times chunks of the innermost dim,
shared by OpenMP threads when it is large enough to pay, handed out one chunk at a time
(``schedule(dynamic)``): on a machine busier than its cores a thread may be descheduled
for milliseconds, and the others then take its share instead of waiting for it.
"""
from __future__ import annotations

import math

from ..numpy.blocking import broadcast_strides, iteration_dims
from .c_ops import OPERAND_TYPES, member_lines
from .vector_loop import GUARD, vector_loop

CHUNK = 16384  # innermost elements per task: a few hundred KiB of operands, cache-resident
# Below this many elements a kernel runs on the calling thread alone: waking OpenMP threads
# costs tens of microseconds, and far more when the machine is busier than its cores (a
# spinning thread waits for a partner that is not scheduled). Like the numpy backend's
# PARALLEL_MIN_BYTES, each thread should get about a MiB of float32 to pay.
PARALLEL_MIN_ELEMENTS = 1 << 18


def group_geometry(plan, values) -> tuple:
    """``(operand nodes, iteration sizes, per-operand iteration strides)`` of a group (``plan.shape``:
    its shape for these values; ``group.shape`` is the one it was partitioned at)."""
    group = plan.group
    operands = [n for n in group.inputs if values[n].is_tensor] + list(group.outputs)
    shape = tuple(plan.shape)
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
    vector = vector_loop(name, members, operands[:n_inputs], operands[n_inputs:], inner_strides)
    lines = vector[0] if vector is not None else []
    lines += [f"void {name}(int64_t ndim, const int64_t* sizes, const int64_t* strides, int threads, "
             + ", ".join(f"char* p{k}" for k in range(len(operands))) + ") {",
             "  const int64_t inner = sizes[ndim - 1];",
             "  int64_t outer = 1;",
             "  for (int64_t d = 0; d < ndim - 1; d++) outer *= sizes[d];",
             f"  const int64_t chunk = inner < {CHUNK} ? inner : {CHUNK};",
             "  const int64_t chunks = (inner + chunk - 1) / chunk;",
             *([GUARD, "  const int isa = dl_isa_level();", "#endif"] if vector is not None else []),
             f"  #pragma omp parallel for schedule(dynamic) num_threads(threads) if(outer * inner >= {PARALLEL_MIN_ELEMENTS})",
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
        ctype = OPERAND_TYPES[node.meta["val"]._dtype.numpy]
        ctype_of[node] = ctype
        lines.append(f"    {ctype}* a{k} = ({ctype}*)p{k} + off{k};")
        if k < n_inputs and inner_strides[k] == 0:
            lines.append(f"    const {ctype} b{k} = a{k}[0];")
        if inner_strides[k] not in (0, 1):
            lines.append(f"    const int64_t s{k} = strides[{k} * ndim + ndim - 1];")
    if vector is not None:  # NOTE: [vector loops], NOTE: [vector ISA dispatch]
        lines += [line if line.startswith("#") else "    " + line for line in vector[1]]
    lines += ["    #pragma omp simd", "    for (int64_t i = 0; i < stop - start; i++) {"]
    for k, node in enumerate(operands[:n_inputs]):
        if inner_strides[k] == 0:
            index[node] = f"b{k}"
        else:
            lines.append(f"      const {ctype_of[node]} v{k} = a{k}[{_at(k, inner_strides[k])}];")
            index[node] = f"v{k}"
    lines += ["      " + line for line in member_lines(members, index)]
    for k, node in enumerate(operands[n_inputs:], start=n_inputs):
        lines.append(f"      a{k}[{_at(k, inner_strides[k])}] = {index[node]};")
    lines.append("    }")
    lines += ["  }", "}"]
    return "\n".join(lines)


def _at(k: int, stride: int) -> str:
    return "i" if stride == 1 else ("0" if stride == 0 else f"i * s{k}")
