"""linear as a C kernel: eager's BLAS gemm called from C, then its bias add, in one kernel call.

NOTE: [native linear] Eager computes ``linear(x, W, b)`` as ``np.matmul`` of ``x``
folded to ``(M, K)`` rows with ``W.T``, then ``out += b``. For a product NumPy hands to
gemm (M, N and K above 1, ``x``'s rows unit-stride and evenly spaced, ``W`` with
unit-stride rows, an output with unit-stride rows: NumPy's ``matrix_matrix`` case with
every operand "blasable", ``x`` not ``W``'s own memory, which NumPy would give to
syrk), NumPy calls ``gemm(RowMajor, NoTrans, Trans, M, N, K, 1, x, lda, W, ldb, 0, out,
ldc)``; the kernel makes the same call through NumPy's own BLAS (NOTE: [gemm from C]) and
adds the bias in the same element order, so the result has eager's bits. Other cases
keep the registry kernel. The geometry (sizes, leading dimensions, the bias's stride,
the gemm's address) is read at run time, so one source serves every size.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from dynamo_lite.graph.node import Node

from .blas import NO_TRANS, ROW_MAJOR, TRANS, gemm_entry, gemm_typedef
from .c_ops import C_TYPES

BLAS_MAX = 2 ** 31 - 1  # sizes and leading dimensions NumPy hands to BLAS


@dataclass
class GemmCall:
    """One linear's kernel: operands ``[x, W, (b), out]`` and the geometry words of a shape."""

    node: object
    operands: list
    words: list
    ctype: str
    int_type: str

    @property
    def bias(self) -> bool:
        return len(self.operands) == 4


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


def gemm_call(node, values: dict) -> GemmCall | None:
    """The kernel of a ``linear`` node at these values, or None to keep the registry kernel."""
    if node.kwargs or not 2 <= len(node.args) <= 3:
        return None
    x, w = node.args[:2]
    b = node.args[2] if len(node.args) == 3 else None
    out = values[node]
    tensors = [x, w] + ([b] if b is not None else [])
    if not all(isinstance(t, Node) and values[t].is_tensor and values[t].dtype is out.dtype for t in tensors):
        return None
    entry = gemm_entry(out.dtype.numpy)
    if entry is None or out.dtype.numpy not in C_TYPES or b is not None and len(values[b].sizes) != 1:
        return None
    xv, wv = values[x], values[w]
    if len(wv.sizes) != 2 or wv.strides[1] != 1 or xv.root is wv.root:
        return None
    (n, k), ldb = wv.sizes, wv.strides[0]
    folded, result = _rows(tuple(xv.sizes), tuple(xv.strides)), _rows(tuple(out.sizes), tuple(out.strides))
    if folded is None or result is None or xv.sizes[-1] != k:
        return None
    (m, lda), (_, ldc) = folded, result
    if min(m, n, k) < 2 or max(m, n, k, lda, ldb, ldc) > BLAS_MAX or lda < k or ldb < k or ldc < n:
        return None
    words = [entry[0], m, n, k, lda, ldb, ldc, values[b].strides[0] if b is not None else 0]
    return GemmCall(node, tensors + [node], words, C_TYPES[out.dtype.numpy], entry[1])


def gemm_source(name: str, call: GemmCall) -> str:
    """The C function ``name(const int64_t* g, int threads, char* p...)`` of ``call`` (NOTE: [native linear])."""
    t = call.ctype
    pointers = len(call.operands)
    lines = [gemm_typedef(f"{name}_gemm_t", t, call.int_type),
             f"void {name}(const int64_t* g, int threads, {', '.join(f'char* p{k}' for k in range(pointers))}) {{",
             f"  {name}_gemm_t gemm = ({name}_gemm_t)(intptr_t)g[0];",
             "  const int64_t M = g[1], N = g[2], K = g[3], ldc = g[6];",
             f"  {t}* out = ({t}*)p{pointers - 1};",
             "  (void)threads;",
             f"  gemm({ROW_MAJOR}, {NO_TRANS}, {TRANS}, M, N, K, ({t})1, (const {t}*)p0, g[4], (const {t}*)p1, g[5], "
             f"({t})0, out, ldc);"]
    if call.bias:
        lines += [f"  const {t}* bias = (const {t}*)p2;",
                  "  for (int64_t m = 0; m < M; m++) {",
                  f"    {t}* row = out + m * ldc;",
                  "    for (int64_t n = 0; n < N; n++) row[n] = row[n] + bias[n * g[7]];",
                  "  }"]
    return "\n".join(lines + ["}"])
