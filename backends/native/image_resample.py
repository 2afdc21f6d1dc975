"""upsample_nearest and upsample_bilinear2d as C kernels reading eager's own source-index tables.

NOTE: [native upsampling] Which input pixels an output pixel reads (and, for bilinear, with
which weights) depends only on the sizes and scales, so the tables are computed once per
shape in Python by eager's own functions (``nearest_indices``, ``_linear_weights`` in
ops/nn/resample.py) and passed to the kernel as its scratch array: the indices are eager's
by construction. Nearest copies; bilinear computes eager's formula in eager's order in the
input's float type, ``top = x[h0, w0] * (1 - dw) + x[h0, w1] * dw`` (``bottom`` alike on row
``h1``), then ``top * (1 - dh) + bottom * dh`` (no fused multiply-add: the bits are
eager's). The tables travel as float64 (indices and float32/float64 weights are exact in
it). Work items are output rows (image, channel, row); input and output strides are read
at run time. Other dtypes (integers, half precision) and 3-D upsampling keep the registry
kernel.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynamo_lite.graph.node import Node
from dynamo_lite.ops.nn.resample import _coordinate_dtype, _linear_weights, nearest_indices

from .c_ops import C_TYPES
from .kernel import PARALLEL_MIN_ELEMENTS


@dataclass
class ResampleCall:
    """One upsampling kernel: operands ``[x, out]``, the geometry words (N, C, H, W, the input's strides,
    OH, OW, the output's strides) and what the index tables need (sizes, scales, align_corners)."""

    node: object
    operands: list
    words: list
    ctype: str
    bilinear: bool
    scales: tuple
    align_corners: bool = False

    def scratch(self):
        """The source tables, float64: nearest ``[rows (OH), columns (OW)]``; bilinear ``[h0, h1, dh] (OH each),
        then [w0, w1, dw] (OW each)``."""
        _, _, h, w = self.words[:4]
        oh, ow = self.words[8:10]
        if not self.bilinear:
            return np.concatenate([nearest_indices(np, h, oh, self.scales[0]), nearest_indices(np, w, ow, self.scales[1])]
                                  ).astype(np.float64)
        ftype = _coordinate_dtype(np.dtype(np.float64 if self.ctype == "double" else np.float32))
        tables = [_linear_weights(np, size, out, scale, self.align_corners, ftype)
                  for size, out, scale in ((h, oh, self.scales[0]), (w, ow, self.scales[1]))]
        return np.concatenate([np.asarray(part, dtype=np.float64) for table in tables for part in table])


def resample_call(node, values: dict) -> ResampleCall | None:
    """The kernel of an upsample_nearest (1-D or 2-D) or upsample_bilinear2d node, or None to keep the registry kernel."""
    bilinear = node.target.name == "upsample_bilinear2d"
    args = list(node.args) + [None] * ((4 if bilinear else 3) - len(node.args))
    if node.kwargs or len(args) != (4 if bilinear else 3) or not isinstance(args[0], Node):
        return None
    x = args[0]
    scales = args[3] if bilinear else args[2]
    xv, out = values[x], values[node]
    if not xv.is_tensor or xv.dtype is not out.dtype or out.dtype.numpy not in C_TYPES:
        return None
    if len(xv.sizes) not in (3, 4) or len(xv.sizes) != len(out.sizes):
        return None
    if not all(type(s) is int for s in (*xv.sizes, *out.sizes, *xv.strides, *out.strides)):
        return None
    scales = tuple(scales) if scales else (None,) * (len(xv.sizes) - 2)
    if len(xv.sizes) == 3:  # a 1-D resize: one row of height 1
        xs, xst, os_, ost = (*xv.sizes[:2], 1, xv.sizes[2]), (*xv.strides[:2], 0, xv.strides[2]), \
            (1, out.sizes[2]), (*out.strides[:2], 0, out.strides[2])
        scales = (None, *scales)
    else:
        xs, xst, os_, ost = xv.sizes, xv.strides, out.sizes[2:], out.strides
    words = [*xs, *xst, *os_, *ost]
    return ResampleCall(node, [x, node], words, C_TYPES[out.dtype.numpy], bilinear, scales,
                        bool(args[2]) if bilinear else False)


def resample_source(name: str, call: ResampleCall) -> str:
    """The C function ``name(const int64_t* g, int threads, char* p0, char* p1, char* p2)`` of ``call``."""
    t = call.ctype
    if call.bilinear:
        body = ["      const int64_t h0 = (int64_t)s[oh], h1 = (int64_t)s[OH + oh];",
                f"      const {t} dh = ({t})s[2 * OH + oh];",
                f"      const {t}* restrict r0 = x + h0 * xh;",
                f"      const {t}* restrict r1 = x + h1 * xh;",
                "      const double* restrict sw = s + 3 * OH;",
                "      for (int64_t ow = 0; ow < OW; ow++) {",
                "        const int64_t w0 = (int64_t)sw[ow] * xw, w1 = (int64_t)sw[OW + ow] * xw;",
                f"        const {t} dw = ({t})sw[2 * OW + ow];",
                f"        const {t} top = r0[w0] * (({t})1 - dw) + r0[w1] * dw;",
                f"        const {t} bottom = r1[w0] * (({t})1 - dw) + r1[w1] * dw;",
                f"        row[ow * ows] = top * (({t})1 - dh) + bottom * dh;",
                "      }"]
    else:
        body = [f"      const {t}* restrict src = x + (int64_t)s[oh] * xh;",
                "      for (int64_t ow = 0; ow < OW; ow++) row[ow * ows] = src[(int64_t)s[OH + ow] * xw];"]
    return "\n".join([
        f"void {name}(const int64_t* g, int threads, char* p0, char* p1, char* p2) {{",
        "  const int64_t N = g[0], C = g[1], xn = g[4], xc = g[5], xh = g[6], xw = g[7];",
        "  const int64_t OH = g[8], OW = g[9], on = g[10], oc = g[11], ohs = g[12], ows = g[13];",
        "  const double* restrict s = (const double*)p2;",
        f"  #pragma omp parallel for schedule(static) num_threads(threads) if(N * C * OH * OW >= {PARALLEL_MIN_ELEMENTS})",
        "  for (int64_t r = 0; r < N * C * OH; r++) {",
        "    const int64_t n = r / (C * OH), c = r / OH % C, oh = r % OH;",
        f"    const {t}* x = (const {t}*)p0 + n * xn + c * xc;",
        f"    {t}* restrict row = ({t}*)p1 + n * on + c * oc + oh * ohs;",
        "    {",
        *body,
        "    }",
        "  }",
        "}"])
