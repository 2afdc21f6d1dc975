"""Row kernels: reductions (with a fused pointwise prologue) over the reduced dims of a shape.

A *row* is the set of elements that reduce into one output element: the reduced dims
of the input shape at one position of the kept dims. Work item ``o`` is a row, step
``r`` an element of it. ``RowSpace`` generates the index code, the loops and the loads
shared by reductions, softmax and layer_norm; the value reduced may be a whole fused
pointwise group evaluated at each element (the *prologue*), so the group's result is
never stored.

NOTE: [summation order] Sums of floats (sum, mean, and the statistics of softmax and
layer_norm) follow eager's (NumPy's) order where eager's rounding error is large, and
are near exact elsewhere, so compiled results stay within 1e-6 of eager's in float32
(tests/training/test_joint_graphs.py: the gradients of biases are such sums):
- the input's innermost memory axis is kept (a bias gradient ``g.sum((0, 1))``, a
  column sum): NumPy adds the reduced elements one after another in memory order, in
  the dtype, an error growing with the row length. The kernel runs *in order*: one
  thread per row (``lanes`` 1, ``Kernel.in_order``) adding in memory order in the
  dtype: the additions of NumPy's in-memory-order loop (NumPy's SIMD reduction loops may
  group them otherwise on some CPUs, so tests hold both to float32 rounding, not to bits).
  Neighbouring threads read neighbouring elements: the access pattern a GPU wants anyway.
- the innermost axis is reduced (a row sum, softmax and layer_norm over the last dim):
  NumPy sums pairwise, within a few roundings of the exact sum. The kernel's lanes sum
  in a tree, in double (``sum_accumulator``), rounded once: it differs from eager's
  by eager's own small error.
"""
from __future__ import annotations

import numpy as np

from dynamo_lite.tensor.dtype import bool_, float64

from .c_types import cast, ctype, literal
from .indexing import offset_code, split_space
from .kernel import ROWS, Param, SizeArguments, SizeParam, make_kernel
from .pointwise import load_statement, member_statements, operand_strides


class RowSpace:
    """Index code for a row kernel over ``shape`` reducing ``reduced`` dims.

    Every size and stride, the row count and the row length are kernel arguments
    (NOTE: [sizes as kernel arguments] in pointwise.py), collected in ``sizes``.

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
        self.in_order = _innermost_kept(target.meta["val"], self.reduced)
        self.sizes = SizeArguments(self.itype)
        self.rows_arg = self.sizes("rows", self.outer.numel)
        self.row_size_arg = self.sizes("row_size", self.inner.numel)
        self.names = [p.name for p in self.params[len(reads):]] + [p.name for p in self.params[:len(reads)]]
        self.outer_lines, outer = offset_code(self.outer, "o", self.names, self.itype, "o_", self.sizes)
        self.out_base = outer[:len(self.outputs)]
        self.in_base = outer[len(self.outputs):]

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
        lines, inner = offset_code(self.inner, index, self.names, self.itype, prefix, self.sizes, "r_")
        inner_out, inner_in = inner[:len(self.outputs)], inner[len(self.outputs):]
        values = {}
        for node, param, base, step in zip(self.reads, self.params, self.in_base, inner_in):
            line, values[node] = load_statement(node, param.name, _add(base, step), prefix)
            lines.append(line)
        lines += member_statements(self.members, values, prefix)
        extras = [values[n] for n in self.extras]
        offsets = [_add(b, s) for b, s in zip(self.out_base, inner_out)]
        return lines, values[self.target], extras, offsets

    def row_loop(self) -> list:
        """The opening of the loop over rows (the caller closes it), defining ``o``, ``active`` and ``lane``.

        NOTE: [rows per block] ``lanes`` threads share a row (a power of two chosen at
        launch by ``launch_config``): a block holds ``blockDim.x / lanes`` rows, so one
        source serves a thread per row (lanes 1: many short rows) and a block per row
        (lanes = blockDim.x: long rows). Every thread of a block runs the same number
        of row iterations (``first`` depends on the block only), so all of them meet
        at ``dl_row_reduce``'s barriers; a thread past the last row is inactive.
        """
        it = self.itype
        return [
            f"const {it} lane = ({it})threadIdx.x & (({it})lanes - 1);",
            f"const {it} rows_per_block = ({it})blockDim.x / ({it})lanes;",
            f"for ({it} first = ({it})blockIdx.x * rows_per_block; first < {self.rows_arg}; "
            f"first += ({it})gridDim.x * rows_per_block) {{",
            f"  const {it} o = first + ({it})threadIdx.x / ({it})lanes;",
            f"  const bool active = o < {self.rows_arg};",
            *indent(self.outer_lines),
        ]

    def element_loop(self, prefix: str, inner) -> list:
        """This lane's steps over the current row, each running ``inner(value, extras, out_offsets)``."""
        it = self.itype
        lines, value, extras, offsets = self.element("r", prefix)
        head = f"for ({it} r = lane; active && r < {self.row_size_arg}; r += ({it})lanes) {{"
        return ["  " + head, *indent(lines, 2), *indent(inner(value, extras, offsets), 2), "  }"]

    def sum_dtype(self, dtype):
        """The dtype a row's sum of ``dtype`` values accumulates in (NOTE: [summation order])."""
        return dtype if self.in_order else sum_accumulator(dtype)

    def kernel(self, kind: str, body: list, node, shared_dtypes: tuple, sums: bool = True):
        """The row kernel of ``node`` running ``body``; shared memory fits the widest of ``shared_dtypes``.

        ``sums``: the body sums floats with ``sum_dtype`` (which then decides the launch).
        """
        params = self.params + self.sizes.params() + [SizeParam("lanes")]
        return make_kernel(kind, params, ["DL_SHARED(unsigned char, dl_shared);", *body], launch=ROWS,
                           in_order=self.in_order and sums, work=self.rows, row_size=self.row_size,
                           size_args=self.sizes.values(),
                           shared_itemsize=max(ctype(d).compute_itemsize for d in shared_dtypes),
                           inputs=tuple(self.reads), outputs=tuple(n for n, _ in self.outputs),
                           nodes=tuple(self.members) + (node,))


def _innermost_kept(meta, reduced: tuple) -> bool:
    """True if the innermost memory axis of the tensor ``meta`` (smallest stride, size > 1) is not reduced."""
    axes = [d for d, (n, s) in enumerate(zip(meta._sizes, meta._strides)) if n > 1 and s != 0]
    return bool(axes) and min(axes, key=lambda d: (abs(meta._strides[d]), -d)) not in reduced


def _add(a: str, b: str) -> str:
    if a == "0":
        return b
    return a if b == "0" else f"{a} + {b}"


def row_reduce(var: str, functor: str) -> str:
    """The statement giving every lane of a row the combination of the row's partial ``var``s."""
    return f"  {var} = dl_row_reduce({var}, dl_shared, lanes, {functor}());"


def sum_accumulator(dtype):
    """The dtype a tree sum of ``dtype`` values accumulates in: double for floats (NOTE: [summation order])."""
    return float64 if dtype.is_floating_point else dtype


def indent(lines: list, depth: int = 1) -> list:
    return ["  " * depth + line for line in lines]


# -- reductions ---------------------------------------------------------------------------
# name -> (combiner functor, identity kind, accumulator: "sum" (RowSpace.sum_dtype of the
# out dtype), "out" dtype, "in" dtype or "bool")
REDUCTIONS = {
    "sum": ("DlSum", "zero", "sum"),
    "mean": ("DlSum", "zero", "sum"),
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
    shape = tuple(node.args[0].meta["val"]._sizes)
    dims = reduced_dims(node)
    space = RowSpace(shape, dims, sources, members, target, outputs=[(node, out_strides_over_input(node, dims))])
    acc = {"sum": space.sum_dtype(out_dtype), "out": out_dtype, "in": in_dtype, "bool": bool_}[acc_kind]
    act = ctype(acc).compute
    total = f"(acc / ({act}){space.row_size_arg})" if name == "mean" else "acc"
    store = ctype(out_dtype).store.format(cast(total, acc, out_dtype))

    def accumulate(value, extras, out_offsets) -> list:
        return [f"acc = {functor}()(acc, {cast(value.expr, value.dtype, acc)});"]

    body = space.row_loop() + [f"  {act} acc = {_identity(identity, acc)};"]
    body += space.element_loop("e_", accumulate)
    body += [row_reduce("acc", functor), f"  if (active && lane == 0) out0[{space.out_base[0]}] = {store};", "}"]
    return space.kernel("reduction", body, node, (acc,), sums=acc_kind == "sum" and acc.is_floating_point)
