"""Row kernels: reductions (with a fused pointwise prologue) over the reduced dims of a shape.

A *row* is the set of elements that reduce into one output element: the reduced dims
of the input shape at one position of the kept dims. Work item ``o`` is a row, step
``r`` an element of it. ``RowSpace`` generates the index code and the loads shared by
reductions, softmax and layer_norm; the value reduced may be a whole fused pointwise
group evaluated at each element (the *prologue*), so the group's result is never stored.
"""
from __future__ import annotations

import numpy as np

from dynamo_lite.tensor.dtype import bool_

from .c_types import cast, ctype, literal
from .indexing import offset_code, split_space
from .kernel import ELEMENTWISE, ROWS, Param, make_kernel
from .pointwise import load_statement, member_statements, operand_strides


class RowSpace:
    """Index code for a row kernel over ``shape`` reducing ``reduced`` dims.

    Args:
        shape: the full (input) shape.
        reduced: the dims each row spans.
        sources: input nodes read per element (a prologue's inputs, or the input itself).
        members: the prologue's nodes in order (empty if none); ``target`` is computed from them.
        target: the node whose value is the row element.
        extras: further inputs read per element (layer_norm's weight and bias).
        outputs: ``(node, strides over shape)`` for each output.
    """

    def __init__(self, shape, reduced, sources, members, target, extras=(), outputs=()):
        self.shape, self.reduced = tuple(shape), tuple(reduced)
        self.sources, self.members, self.target = list(sources), list(members), target
        self.extras, self.outputs = list(extras), list(outputs)
        # Every tensor read, once: an extra may also feed the prologue (one pointer each).
        self.reads = reads = self.sources + [n for n in dict.fromkeys(self.extras) if n not in self.sources]
        self.params = [Param(f"in{i}", n.meta["val"]._dtype, False) for i, n in enumerate(reads)]
        self.params += [Param(f"out{i}", n.meta["val"]._dtype, True) for i, (n, _) in enumerate(self.outputs)]
        strides = [s for _, s in self.outputs] + [operand_strides(self.shape, n) for n in reads]
        self.outer, self.inner = split_space(self.shape, self.reduced, strides, 0, len(self.outputs))
        wide = "long long" in (self.outer.index_type(), self.inner.index_type())
        self.itype = "long long" if wide else "int"
        names = [p.name for p in self.params[len(reads):]] + [p.name for p in self.params[:len(reads)]]
        self.outer_lines, outer = offset_code(self.outer, "o", names, self.itype, "o_")
        self.out_base = outer[:len(self.outputs)]
        self.in_base = outer[len(self.outputs):]
        self.names = names

    @property
    def rows(self) -> int:
        return self.outer.numel

    @property
    def row_size(self) -> int:
        return self.inner.numel

    def element(self, index: str, prefix: str) -> tuple:
        """Lines computing the row element at step ``index``; returns ``(lines, target, extras, out_offsets)``.

        ``target`` is the Value of the element, ``extras`` the Values of the extra
        inputs there, ``out_offsets`` each output's element offset.
        """
        lines, inner = offset_code(self.inner, index, self.names, self.itype, prefix)
        inner_out, inner_in = inner[:len(self.outputs)], inner[len(self.outputs):]
        values = {}
        for node, param, base, step in zip(self.reads, self.params, self.in_base, inner_in):
            line, values[node] = load_statement(node, param.name, _add(base, step), prefix)
            lines.append(line)
        lines += member_statements(self.members, values, prefix)
        extras = [values[n] for n in self.extras]
        offsets = [_add(b, s) for b, s in zip(self.out_base, inner_out)]
        return lines, values[self.target], extras, offsets


def _add(a: str, b: str) -> str:
    if a == "0":
        return b
    return a if b == "0" else f"{a} + {b}"


def loop_header(space: RowSpace, launch: str) -> tuple:
    """The row loop and the element loop for ``launch`` (``ROWS``: a block per row)."""
    it = space.itype
    if launch == ROWS:
        rows = f"for ({it} o = ({it})blockIdx.x; o < {space.rows}; o += ({it})gridDim.x) {{"
        elements = f"for ({it} r = ({it})threadIdx.x; r < {space.row_size}; r += ({it})blockDim.x) {{"
    else:
        rows = (f"for ({it} o = ({it})(blockIdx.x * blockDim.x + threadIdx.x); o < {space.rows}; "
                f"o += ({it})(blockDim.x * gridDim.x)) {{")
        elements = f"for ({it} r = 0; r < {space.row_size}; ++r) {{"
    return rows, elements


def choose_launch(rows: int, row_size: int) -> str:
    """A thread per row for many short rows, a block per row otherwise."""
    return ELEMENTWISE if row_size <= 16 or (rows >= 8192 and row_size <= 512) else ROWS


def indent(lines: list, depth: int = 1) -> list:
    return ["  " * depth + line for line in lines]


# -- reductions ---------------------------------------------------------------------------
# name -> (combiner functor, identity kind, accumulate in: "out" dtype, "in" dtype or bool)
REDUCTIONS = {
    "sum": ("DlSum", "zero", "out"),
    "mean": ("DlSum", "zero", "out"),
    "prod": ("DlProd", "one", "out"),
    "amax": ("DlMax", "lowest", "in"),
    "amin": ("DlMin", "highest", "in"),
    "max": ("DlMax", "lowest", "in"),
    "min": ("DlMin", "highest", "in"),
    "all": ("DlAnd", "true", "bool"),
    "any": ("DlOr", "false", "bool"),
}


def _identity(kind: str, dtype) -> str:
    if kind in ("true", "false"):
        return kind
    if kind in ("zero", "one"):
        return literal(0 if kind == "zero" else 1, dtype)
    if dtype is bool_:
        return "false" if kind == "lowest" else "true"
    if dtype.is_floating_point:
        return literal(-np.inf if kind == "lowest" else np.inf, dtype)
    info = np.iinfo(dtype.numpy)
    return literal(info.min if kind == "lowest" else info.max, dtype)


def reduced_dims(node) -> tuple:
    """The input dims a reduction node reduces (normalized by the public functions)."""
    ndim = len(node.args[0].meta["val"]._sizes)
    dim = node.kwargs.get("dim")
    return tuple(range(ndim)) if dim is None else tuple(dim)


def out_strides_over_input(node, dims: tuple) -> tuple:
    """The reduction output's strides over the input shape (0 along reduced dims)."""
    meta = node.meta["val"]
    ndim = len(node.args[0].meta["val"]._sizes)
    if len(meta._sizes) == ndim:  # keepdim
        return tuple(0 if d in dims else s for d, s in enumerate(meta._strides))
    kept = iter(meta._strides)
    return tuple(0 if d in dims else next(kept) for d in range(ndim))


def build_reduction(node, sources: list, members: list, target):
    """The kernel of reduction ``node`` whose input is ``target`` (a prologue member or an input)."""
    name = node.target.name
    functor, identity, acc_kind = REDUCTIONS[name]
    in_dtype, out_dtype = target.meta["val"]._dtype, node.meta["val"]._dtype
    acc = {"out": out_dtype, "in": in_dtype, "bool": bool_}[acc_kind]
    shape = tuple(node.args[0].meta["val"]._sizes)
    dims = reduced_dims(node)
    space = RowSpace(shape, dims, sources, members, target, outputs=[(node, out_strides_over_input(node, dims))])
    launch = choose_launch(space.rows, space.row_size)
    act = ctype(acc).compute
    rows, elements = loop_header(space, launch)
    element_lines, value, _, _ = space.element("r", "e_")
    total = "acc"
    if name == "mean":
        total = f"(acc / ({act})({space.row_size}))"
    store = ctype(out_dtype).store.format(cast(total, acc, out_dtype))
    body = [f"DL_SHARED({act}, dl_partial);"] if launch == ROWS else []
    body += [rows, *indent(space.outer_lines), f"  {act} acc = {_identity(identity, acc)};", "  " + elements]
    body += indent(element_lines, 2) + [f"    acc = {functor}()(acc, {cast(value.expr, value.dtype, acc)});", "  }"]
    if launch == ROWS:
        body += [f"  acc = dl_block_reduce(acc, dl_partial, {functor}());",
                 f"  if (threadIdx.x == 0) out0[{space.out_base[0]}] = {store};"]
    else:
        body += [f"  out0[{space.out_base[0]}] = {store};"]
    body.append("}")
    return make_kernel("reduction", space.params, body, launch=launch, work=space.rows,
                       shared_itemsize=ctype(acc).compute_itemsize if launch == ROWS else 0, row_size=space.row_size,
                       inputs=tuple(space.reads), outputs=(node,), nodes=tuple(members) + (node,))
