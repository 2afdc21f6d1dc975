"""conv_transpose2d as one C kernel: eager's gemm per image and group (called from C), then col2im and the bias.

NOTE: [native conv_transpose2d] Eager (NOTE: [conv_transpose2d as col2im]) makes every
input pixel's (Og, KH, KW) patch with one matmul per image and group, ``W_g^T (Og*KH*KW,
Cg) @ x_g (Cg, H*W)``, adds the patches tap by tap into a zeroed padded output, crops the
padding and adds the bias. The kernel makes the same gemm call through NumPy's BLAS
(NOTE: [gemm from C]) into a scratch array, then per output plane zeroes it, adds each
tap's columns in eager's tap order at their strided positions (those in the cropped
border are skipped: they never reach the result) and adds the bias: every output element
is eager's sum in eager's order, so the bits are eager's. An input whose image is not one
dense ``(C, H*W)`` matrix per image is first copied into one (as NumPy's reshape copies
it). Other cases keep the registry kernel: integer or mixed dtypes, weights that are not
dense, a product with a dimension below 2 (NumPy does not hand those to gemm), no BLAS
entry point.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynamo_lite.graph.node import Node

from .blas import NO_TRANS, ROW_MAJOR, TRANS, gemm_entry, gemm_typedef
from .c_ops import C_TYPES
from .kernel import PARALLEL_MIN_ELEMENTS


@dataclass
class TransposedConv:
    """One conv_transpose2d kernel: operands ``[x, weight, (bias,) out]``, its constants and geometry words.

    Attributes:
        constants: kernel, stride, padding, dilation (pairs), groups.
        channels: the weight's ``(C, Og)``.
        words: the gemm's address, N, C, H, W, the input's strides, OH, OW, the output's strides,
            the bias's stride.
    """

    node: object
    operands: list
    constants: tuple
    channels: tuple
    words: list
    ctype: str
    int_type: str
    dtype: object

    @property
    def bias(self) -> bool:
        return len(self.operands) == 4

    def scratch(self):
        """One group's columns ``(Og*KH*KW, H*W)``, then room for a dense copy of one image."""
        (kh, kw), _, _, _, _ = self.constants
        c, og = self.channels
        h, w = self.words[3:5]
        return np.empty(og * kh * kw * h * w + c * h * w, self.dtype)


def _pair(value) -> bool:
    return isinstance(value, tuple) and len(value) == 2 and all(type(i) is int for i in value)


def transpose_call(node, values: dict) -> TransposedConv | None:
    """The kernel of a conv_transpose2d node at these values, or None to keep the registry kernel."""
    if node.kwargs or len(node.args) != 8:
        return None
    x, weight, bias, stride, padding, output_padding, groups, dilation = node.args
    read = [x, weight] + ([bias] if bias is not None else [])
    if not all(isinstance(n, Node) and values[n].is_tensor for n in read) or type(groups) is not int:
        return None
    if not all(_pair(v) for v in (stride, padding, output_padding, dilation)):
        return None
    out, xv, wv = values[node], values[x], values[weight]
    dtype = out.dtype.numpy
    entry = gemm_entry(dtype) if dtype in C_TYPES else None
    if entry is None or not all(values[n].dtype is out.dtype for n in read):
        return None
    if len(xv.sizes) != 4 or len(wv.sizes) != 4 or not all(type(s) is int for s in (*wv.sizes, *xv.sizes, *out.sizes)):
        return None
    c, og, kh, kw = wv.sizes
    n, _, h, w = xv.sizes
    if tuple(wv.strides) != (og * kh * kw, kh * kw, kw, 1) or c % groups:
        return None
    if min(og * kh * kw, h * w, c // groups) < 2 or (bias is not None and len(values[bias].sizes) != 1):
        return None
    words = [entry[0], *xv.sizes, *xv.strides, *out.sizes[2:], *out.strides,
             values[bias].strides[0] if bias is not None else 0]
    return TransposedConv(node, read + [node], ((kh, kw), stride, padding, dilation, groups), (c, og), words,
                          C_TYPES[dtype], entry[1], dtype)


def transpose_source(name: str, call: TransposedConv) -> str:
    """The C function ``name(const int64_t* g, int threads, char* p...)`` of ``call`` (NOTE: [native conv_transpose2d])."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw), groups = call.constants
    c, og = call.channels
    cg, t, pointers = c // groups, call.ctype, len(call.operands) + 1
    taps = og * kh * kw
    bias = f"(({t}*)p2)[o * bs]" if call.bias else f"({t})0"
    add_bias = [f"      const {t} b = {bias};",
                "      for (int64_t oh = 0; oh < OH; oh++) for (int64_t ow = 0; ow < OW; ow++) "
                "plane[oh * ohs + ow * ows] = plane[oh * ohs + ow * ows] + b;"] if call.bias else []
    return "\n".join([
        gemm_typedef(f"{name}_gemm_t", t, call.int_type),
        f"void {name}(const int64_t* g, int threads, {', '.join(f'char* p{k}' for k in range(pointers))}) {{",
        f"  {name}_gemm_t gemm = ({name}_gemm_t)(intptr_t)g[0];",
        "  const int64_t N = g[1], H = g[3], W = g[4], xn = g[5], xc = g[6], xh = g[7], xw = g[8];",
        "  const int64_t OH = g[9], OW = g[10], on = g[11], oc = g[12], ohs = g[13], ows = g[14], bs = g[15];",
        "  const int64_t HW = H * W;",
        "  (void)bs;",
        f"  const {t}* w0 = (const {t}*)p1;",
        f"  {t}* cols = ({t}*)p{pointers - 1};",
        f"  {t}* staged = cols + {taps} * HW;",
        "  const int dense = xw == 1 && xh == W && xc >= HW;",
        "  for (int64_t n = 0; n < N; n++) {",
        f"    const {t}* x = (const {t}*)p0 + n * xn;",
        "    int64_t ldx = xc;",
        "    if (!dense) {  /* one dense (C, H*W) copy of the image, as NumPy's reshape makes */",
        f"      for (int64_t ch = 0; ch < {c}; ch++) for (int64_t h = 0; h < H; h++) for (int64_t w = 0; w < W; w++)",
        "        staged[ch * HW + h * W + w] = x[ch * xc + h * xh + w * xw];",
        "      x = staged;",
        "      ldx = HW;",
        "    }",
        f"    for (int64_t grp = 0; grp < {groups}; grp++) {{",
        f"      gemm({ROW_MAJOR}, {TRANS}, {NO_TRANS}, {taps}, HW, {cg}, ({t})1, w0 + grp * {cg * taps}, {taps}, "
        f"x + grp * {cg} * ldx, ldx, ({t})0, cols, HW);",
        f"      #pragma omp parallel for schedule(static) num_threads(threads) if({taps} * HW >= {PARALLEL_MIN_ELEMENTS})",
        f"      for (int64_t q = 0; q < {og}; q++) {{",
        f"        const int64_t o = grp * {og} + q;",
        f"        {t}* plane = ({t}*)p{pointers - 2} + n * on + o * oc;",
        f"        for (int64_t oh = 0; oh < OH; oh++) for (int64_t ow = 0; ow < OW; ow++) plane[oh * ohs + ow * ows] = ({t})0;",
        f"        for (int64_t i = 0; i < {kh}; i++) {{",
        f"          for (int64_t j = 0; j < {kw}; j++) {{",
        f"            const {t}* restrict tap = cols + ((q * {kh} + i) * {kw} + j) * HW;",
        "            for (int64_t h = 0; h < H; h++) {",
        f"              const int64_t oh = h * {sh} - {ph} + i * {dh};",
        "              if (oh < 0 || oh >= OH) continue;",
        f"              {t}* restrict row = plane + oh * ohs;",
        "              for (int64_t w = 0; w < W; w++) {",
        f"                const int64_t ow = w * {sw} - {pw} + j * {dw};",
        "                if (ow >= 0 && ow < OW) row[ow * ows] = row[ow * ows] + tap[h * W + w];",
        "              }",
        "            }",
        "          }",
        "        }",
        *["  " + line for line in add_bias],
        "      }",
        "    }",
        "  }",
        "}"])
