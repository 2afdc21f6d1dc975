"""linear, matmul, mm, bmm and addmm as C kernels: eager's BLAS gemm calls made from C, in the faster orientation.

NOTE: [native linear] Eager computes ``linear(x, W, b)`` as ``np.matmul`` of ``x``
folded to ``(M, K)`` rows with ``W.T``, then ``out += b``, and ``matmul`` as ``np.matmul``
(an N-D ``a`` times a matrix folded to rows first). Where NumPy hands each product to
gemm (its ``matrix_matrix`` case: M, N and K above 1, every operand "blasable": unit
stride along rows, NoTrans, or along columns, Trans, with the leading dimension the other
stride; an output with unit-stride rows), it calls ``gemm(RowMajor, transA, transB, M,
N, K, 1, a, lda, b, ldb, 0, out, ldc)`` once per batch; the kernel makes the same calls
through NumPy's own BLAS (NOTE: [gemm from C]) and adds linear's bias in the same element
order, so the result has eager's bits. NumPy gives a matrix times its own transpose (one
address) to syrk: when two operands share memory, the kernel is used only where their
addresses provably differ. Other cases (vectors, broadcast batches, operands NumPy copies
first) keep the registry kernel. ``mm`` and ``bmm`` are NumPy's ``matmul`` of two
matrices or equal batches; ``addmm`` (beta and alpha 1) is that product, then ``out +=
input`` broadcast, as linear's bias. The geometry (sizes, leading dimensions, transposes,
batch strides, the bias's strides, the gemm's address, the orientation) is read at run
time, so one source serves every size. A short, wide product runs swapped, ``out^T = B^T
A^T`` into a scratch array, then transposed into ``out`` with the bias added on the way,
with eager's values (its bits under SkylakeX BLAS kernels): NOTE: [gemm orientation], NOTE: [transposing epilogue].
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dynamo_lite.graph.node import Node

from ..numpy.blocking import broadcast_strides
from . import gemm_orientation
from .blas import NO_TRANS, ROW_MAJOR, TRANS, gemm_entry, gemm_typedef
from .c_ops import C_TYPES
from .gemm_transpose import transposed_source

BLAS_MAX = 2 ** 31 - 1  # sizes and leading dimensions NumPy hands to BLAS


@dataclass
class GemmCall:
    """One product's kernel: operands ``[a, b, (addend), out]`` and the geometry words of a shape."""

    node: object
    operands: list
    words: list
    ctype: str
    int_type: str
    dtype: object  # the NumPy dtype of the scratch product

    @property
    def bias(self) -> bool:
        return len(self.operands) == 4

    def scratch(self):
        """The array the swapped product lands in (NOTE: [gemm orientation]); one element when never swapped."""
        m, n = self.words[4:6]
        return np.empty(m * n if self.words[1] else 1, self.dtype)


def _call(node, entry, operands: list, addend_strides: tuple, words: list, values: dict) -> GemmCall:
    """The call of ``node`` with its orientation chosen for its geometry ``words`` (of ``_product_words``)."""
    m, n, k, _, _, _, trans_a, trans_b = words[:8]
    out = values[node].dtype.numpy
    swap = gemm_orientation.swap_threads(m, n, k, trans_a, trans_b, out)
    return GemmCall(node, operands, [entry[0], swap, *addend_strides] + words, C_TYPES[out], entry[1], out)


def _rows(sizes: tuple, strides: tuple):
    """``(rows, row stride)`` of an array folded to 2-D over its last dim, or None when the fold is
    not one evenly strided run of unit-stride rows (NumPy's reshape would copy)."""
    if not sizes or strides[-1] != 1:
        return None
    leading = [(n, s) for n, s in zip(sizes[:-1], strides[:-1]) if n != 1]
    for (_, outer), (inner_n, inner) in zip(leading, leading[1:]):
        if outer != inner * inner_n:
            return None
    rows = math.prod(n for n, _ in leading)
    return rows, (leading[-1][1] if leading else sizes[-1])


def _operands(node, values: dict, count: int):
    """The node's tensor arguments and its gemm entry, when all share the output's float dtype, else None."""
    out = values[node]
    if node.kwargs or not all(isinstance(a, Node) and values[a].is_tensor and values[a].dtype is out.dtype
                              for a in node.args[:count]):
        return None
    entry = gemm_entry(out.dtype.numpy) if out.dtype.numpy in C_TYPES else None
    return None if entry is None else entry


def _layout(rows: int, cols: int, sizes_strides) -> tuple | None:
    """``(transpose, leading dimension)`` NumPy gives gemm for a (rows, cols) matrix with element
    strides ``(row stride, col stride)``: rows unit-stride first (NoTrans), else columns (Trans)."""
    row_stride, col_stride = sizes_strides
    if col_stride == 1 and cols <= row_stride <= BLAS_MAX:
        return NO_TRANS, row_stride
    if row_stride == 1 and rows <= col_stride <= BLAS_MAX:
        return TRANS, col_stride
    return None


def _product_words(m, n, k, a, b, out, batch=()) -> list | None:
    """Geometry words of ``a (m, k) @ b (k, n) -> out`` (each ``(row stride, col stride)``) over
    ``batch`` (per batch dim: size and the three operands' strides), or None where NumPy would
    not call gemm (a dim below 2, an operand it copies first, an output whose rows are not unit-stride)."""
    first, second = _layout(m, k, a), _layout(k, n, b)
    if min(m, n, k) < 2 or max(m, n, k) > BLAS_MAX or first is None or second is None:
        return None
    if out[1] != 1 or not n <= out[0] <= BLAS_MAX:
        return None
    return [m, n, k, first[1], second[1], out[0], first[0], second[0], len(batch)] + [w for d in batch for w in d]


def linear_call(node, values: dict) -> GemmCall | None:
    """The kernel of a ``linear`` node at these values, or None to keep the registry kernel."""
    if not 2 <= len(node.args) <= 3:
        return None
    entry = _operands(node, values, len(node.args))
    x, w = node.args[:2]
    b = node.args[2] if len(node.args) == 3 else None
    out, xv, wv = values[node], values[x], values[w]
    if entry is None or len(wv.sizes) != 2 or xv.root is wv.root or b is not None and len(values[b].sizes) != 1:
        return None
    (n, k), folded, result = wv.sizes, _rows(tuple(xv.sizes), tuple(xv.strides)), _rows(tuple(out.sizes), tuple(out.strides))
    if folded is None or result is None or xv.sizes[-1] != k:
        return None
    words = _product_words(folded[0], n, k, (folded[1], 1), (wv.strides[1], wv.strides[0]), (result[1], 1))
    if words is None:
        return None
    addend = (0, 0) if b is None else broadcast_strides((1, n), tuple(values[b].sizes), tuple(values[b].strides))
    return _call(node, entry, [x, w] + ([b] if b is not None else []) + [node], addend, words, values)


def matmul_call(node, values: dict) -> GemmCall | None:
    """The kernel of a ``matmul`` (or ``mm``, ``bmm``) node: eager folds an N-D ``a`` times a matrix into rows,
    and runs equal batch dims one gemm each (NumPy's loop); broadcast batches and vectors keep the registry kernel."""
    if len(node.args) != 2:
        return None
    words = _matmul_words(node, values, *node.args)
    return None if words is None else _call(node, words[0], [*node.args, node], (0, 0), words[1], values)


def addmm_call(node, values: dict) -> GemmCall | None:
    """The kernel of ``addmm(input, mat1, mat2)`` (beta and alpha 1): eager's product, then ``+ input``
    broadcast to it, as linear's bias."""
    if len(node.args) != 3 or not isinstance(node.args[0], Node):
        return None
    addend, mat1, mat2 = node.args
    av, out = values[addend], values[node]
    if not av.is_tensor or av.dtype is not out.dtype or len(av.sizes) > 2:
        return None
    words = _matmul_words(node, values, mat1, mat2)
    if words is None:
        return None
    strides = broadcast_strides(tuple(out.sizes), tuple(av.sizes), tuple(av.strides))
    return _call(node, words[0], [mat1, mat2, addend, node], strides, words[1], values)


def _matmul_words(node, values: dict, a, b) -> tuple | None:
    """``(gemm entry, product words)`` of ``a @ b`` into ``node``'s value, or None (see ``matmul_call``)."""
    entry = _operands(node, values, len(node.args))
    av, bv, out = values[a], values[b], values[node]
    if entry is None or len(av.sizes) < 2 or len(bv.sizes) < 2:
        return None
    m, k, n = av.sizes[-2], av.sizes[-1], bv.sizes[-1]
    if len(av.sizes) == len(bv.sizes) == 2:
        words = _product_words(m, n, k, tuple(av.strides), tuple(bv.strides), tuple(out.strides))
    elif len(bv.sizes) == 2:  # rows of every batch at once (matmul_kernel's fold), as one matrix
        folded, result = _rows(tuple(av.sizes), tuple(av.strides)), _rows(tuple(out.sizes), tuple(out.strides))
        if folded is None or result is None:
            return None
        words = _product_words(folded[0], n, k, (folded[1], 1), tuple(bv.strides), (result[1], 1))
    else:
        if tuple(av.sizes[:-2]) != tuple(bv.sizes[:-2]) or len(out.sizes) != len(av.sizes):
            return None
        batch = [(size, sa, sb, so) for size, sa, sb, so in zip(av.sizes[:-2], av.strides, bv.strides, out.strides)]
        words = _product_words(m, n, k, tuple(av.strides[-2:]), tuple(bv.strides[-2:]), tuple(out.strides[-2:]), batch)
    if words is None:
        return None
    if av.root is bv.root and words[0] == words[1] and words[6] != words[7]:
        # NumPy gives a matrix times its own transpose (same address) to syrk: only provably other addresses.
        batch = words[9:]
        if av.offset == bv.offset or any(batch[i + 1] != batch[i + 2] for i in range(0, len(batch), 4)):
            return None
    return entry, words


def gemm_source(name: str, call: GemmCall) -> str:
    """The C function ``name(const int64_t* g, int threads, char* p...)`` of ``call``: one gemm per batch
    (NOTE: [native linear]), swapped at up to ``g[1]`` threads (NOTE: [gemm orientation]); geometry ``g``:
    gemm address, that thread limit, the addend's two strides, M, N, K, lda, ldb, ldc, the two transposes,
    the batch rank, then per batch dim its size and the three operands' strides."""
    t = call.ctype
    pointers = len(call.operands)
    addend = f"(const {t}*)p2" if call.bias else "0"
    lines = [gemm_typedef(f"{name}_gemm_t", t, call.int_type),
             f"void {name}(const int64_t* g, int threads, {', '.join(f'char* p{k}' for k in range(pointers + 1))}) {{",
             f"  {name}_gemm_t gemm = ({name}_gemm_t)(intptr_t)g[0];",
             "  const int64_t M = g[4], N = g[5], K = g[6], ldc = g[9], rank = g[12];",
             "  const int64_t* batch = g + 13;",
             f"  {t}* scratch = ({t}*)p{pointers};",
             "  int64_t count = 1;",
             "  for (int64_t d = 0; d < rank; d++) count *= batch[4 * d];",
             "  for (int64_t i = 0; i < count; i++) {",
             "    int64_t rest = i, a = 0, b = 0, o = 0;",
             "    for (int64_t d = rank - 1; d >= 0; d--) {",
             "      const int64_t at = rest % batch[4 * d];",
             "      rest /= batch[4 * d];",
             "      a += at * batch[4 * d + 1], b += at * batch[4 * d + 2], o += at * batch[4 * d + 3];",
             "    }",
             f"    const {t}* A = (const {t}*)p0 + a;",
             f"    const {t}* B = (const {t}*)p1 + b;",
             f"    {t}* out = ({t}*)p{pointers - 1} + o;",
             "    if (threads <= g[1]) {  /* out^T = B^T A^T into scratch (N rows of M), then out = its transpose */",
             f"      gemm({ROW_MAJOR}, {NO_TRANS + TRANS} - (int)g[11], {NO_TRANS + TRANS} - (int)g[10], N, M, K, "
             f"({t})1, B, g[8], A, g[7], ({t})0, scratch, M);",
             f"      {name}_transposed(M, N, scratch, out, ldc, {addend}, g[2], g[3]);",
             "    } else {",
             f"      gemm({ROW_MAJOR}, (int)g[10], (int)g[11], M, N, K, ({t})1, A, g[7], B, g[8], ({t})0, out, ldc);"]
    if call.bias:
        lines += [f"      const {t}* addend = {addend};",
                  "      for (int64_t m = 0; m < M; m++) {",
                  f"        {t}* row = out + m * ldc;",
                  f"        const {t}* add = addend + m * g[2];",
                  "        for (int64_t n = 0; n < N; n++) row[n] = row[n] + add[n * g[3]];",
                  "      }"]
    lines += ["    }", "  }", "}"]
    return transposed_source(f"{name}_transposed", t) + "\n\n" + "\n".join(lines)
