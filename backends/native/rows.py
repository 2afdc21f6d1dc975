"""C kernels of row ops: a parallel loop over rows, run-time strides, an optional fused pointwise prologue.

A row op's kernel takes the kept dims' sizes, the row length ``R`` and every operand's
strides along the kept dims at run time (NOTE: [native rows]); its source depends only
on the op, the dtype, the operands and which of them are broadcast along the row. When
the op's input is the only output of a fused pointwise group that nobody else reads,
the group's members are computed per element inside each pass over the row instead of
being written to memory and read back (``prologue``): ``softmax(x * scale + mask)`` is
one kernel reading ``x`` and ``mask``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..numpy.blocking import broadcast_strides
from .c_ops import C_TYPES, member_lines
from .kernel import CHUNK, PARALLEL_MIN_ELEMENTS
from .row_ops import ROW_BODIES, BodyContext, RowSpec


@dataclass
class RowCall:
    """One row op's kernel: its operands and their geometry.

    Attributes:
        node: the reduction or normalization.
        spec: what it reads and computes.
        prologue: the GroupPlan computed per element (None: the input is read as is).
        inputs: nodes read per element (the group's tensor inputs, or the op's input).
        extras: the spec's extra tensors; ``output`` the op's node (written).
        sizes: the kept dims' sizes (outermost first); ``row`` the row length.
        strides: per operand (inputs, extras, output), its strides along the kept dims.
        broadcast: per input and extra, whether it is constant along the row.
    """

    node: object
    spec: RowSpec
    prologue: object
    inputs: list
    extras: list
    sizes: tuple
    row: int
    strides: list
    broadcast: list

    @property
    def operands(self) -> list:
        return self.inputs + self.extras + [self.node]


def _row_stride(strides: tuple, shape: tuple, dims: tuple):
    """The one stride an operand steps through the merged row dims with, or None if they do not merge."""
    real = [d for d in dims if shape[d] != 1]
    for outer, inner in zip(real, real[1:]):
        if strides[outer] != strides[inner] * shape[inner]:
            return None
    return strides[real[-1]] if real else 1


def row_call(node, spec: RowSpec, values: dict, prologue=None) -> RowCall | None:
    """The geometry of ``node``'s kernel, or None when some operand's rows are not unit-stride or broadcast."""
    source = node.args[0]
    shape = tuple(values[source].sizes)
    if prologue is not None:
        inputs = [n for n in prologue.group.inputs if values[n].is_tensor]
        if len(inputs) != len(prologue.group.inputs) or tuple(prologue.shape) != shape:
            return None
        if _row_stride(values[source].strides, shape, spec.dims) != 1:
            return None  # eager's input is not unit-stride along the row: NumPy would not sum pairwise
    else:
        inputs = [source]
    kept = [d for d in range(len(shape)) if d not in spec.dims]
    strides, broadcast = [], []
    for operand in inputs + spec.extras:
        value = values[operand]
        full = broadcast_strides(shape, value.sizes, value.strides)
        step = _row_stride(full, shape, spec.dims)
        if step not in (0, 1):
            return None
        strides.append(tuple(full[d] for d in kept))
        broadcast.append(step == 0)
    out = values[node]
    if spec.keeps_shape:
        if tuple(out.sizes) != shape or _row_stride(out.strides, shape, spec.dims) != 1:
            return None
        strides.append(tuple(out.strides[d] for d in kept))
    else:
        keepdim = len(out.sizes) == len(shape)
        strides.append(tuple(out.strides[d] for d in kept) if keepdim else tuple(out.strides))
    row = math.prod(shape[d] for d in spec.dims)
    return RowCall(node, spec, prologue, inputs, list(spec.extras), tuple(shape[d] for d in kept), row, strides,
                   broadcast)


def row_source(name: str, call: RowCall) -> str:
    """The C function ``name`` computing every row of ``call``'s op."""
    operands = call.operands
    count = len(operands)
    t = C_TYPES[call.node.meta["val"]._dtype.numpy]
    lines = [f"void {name}(int64_t ndim, const int64_t* sizes, int64_t R, const int64_t* strides, int threads, "
             + ", ".join(f"char* p{k}" for k in range(count)) + ") {",
             "  int64_t rows = 1;",
             "  for (int64_t d = 0; d < ndim; d++) rows *= sizes[d];",
             f"  const int64_t per_task = R >= {CHUNK} || R == 0 ? 1 : {CHUNK} / R;  /* rows per task: a chunk's worth */",
             "  #pragma omp parallel for schedule(dynamic, per_task) num_threads(threads) "
             f"if(rows * R >= {PARALLEL_MIN_ELEMENTS})",
             "  for (int64_t r = 0; r < rows; r++) {",
             "    int64_t rest = r;",
             "    int64_t " + ", ".join(f"off{k} = 0" for k in range(count)) + ";",
             "    for (int64_t d = ndim - 1; d >= 0; d--) {",
             "      const int64_t at = rest % sizes[d];",
             "      rest /= sizes[d];",
             *[f"      off{k} += at * strides[{k} * ndim + d];" for k in range(count)],
             "    }"]
    for k in range(count - 1):
        lines.append(f"    const {t}* restrict a{k} = (const {t}*)p{k} + off{k};")
    lines.append(f"    {t}* restrict out = ({t}*)p{count - 1} + off{count - 1};")
    element = _element_lines(call, t)
    extras = [f"a{len(call.inputs) + j}" for j in range(len(call.extras))]
    pointers = [f"const {t}* restrict a{k}" for k in range(count - 1)] + [f"{t}* restrict out"]
    names = [f"a{k}" for k in range(count - 1)] + ["out"]
    context = BodyContext(t, element, "out", extras, call.spec.params, name, pointers, names)
    body = ROW_BODIES[call.node.target.name](context)
    lines += ["    " + line for line in body]
    lines += ["  }", "}"]
    return "\n\n".join(context.helpers + ["\n".join(lines)])


def _element_lines(call: RowCall, t: str) -> list:
    """Lines defining ``x``, the op's input element at row index ``i``."""
    loads = {node: f"a{k}[{'0' if call.broadcast[k] else 'i'}]" for k, node in enumerate(call.inputs)}
    if call.prologue is None:
        return [f"const {t} x = {loads[call.inputs[0]]};"]
    index = dict(loads)
    lines = member_lines(call.prologue.group.nodes, index)
    return lines + [f"const {t} x = {index[call.node.args[0]]};"]
