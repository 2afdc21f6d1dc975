"""avg_pool2d as one C kernel: each window's sum in eager's tap order, divided by eager's divisor in eager's type.

NOTE: [native avg_pool2d] Eager sums a window's taps into a zeroed total, tap row by tap
row, each tap column in turn, a tap in the padding (or past the far edge in ceil mode)
adding 0; it then divides by ``divisor_override``, or by the window's count (the window
clipped to the padded image, and to the image itself without ``count_include_pad``),
an int64 array: NumPy divides float32 by int64 in float64 and rounds the quotient to
float32, while a Python ``divisor_override`` divides in the input's type. The kernel
repeats those operations per output pixel, so the bits are eager's. Work items are
output rows; sizes and strides are read at run time, the window's constants baked in.
Integer and half-precision inputs keep the registry kernel.
"""
from __future__ import annotations

from dataclasses import dataclass

from dynamo_lite.graph.node import Node

from .c_ops import C_TYPES
from .kernel import PARALLEL_MIN_ELEMENTS


@dataclass
class AvgPoolCall:
    """One avg_pool2d kernel: operands ``[x, out]``, the window's constants and the geometry words
    (N, C, H, W, the input's strides, OH, OW, the output's strides)."""

    node: object
    operands: list
    constants: tuple  # kernel, stride, padding (pairs), count_include_pad, divisor_override
    words: list
    ctype: str


def _pair(value) -> bool:
    return isinstance(value, tuple) and len(value) == 2 and all(type(i) is int for i in value)


def avg_pool_call(node, values: dict) -> AvgPoolCall | None:
    """The kernel of an avg_pool2d node of a 4-D float input, or None to keep the registry kernel."""
    args = list(node.args) + [(0, 0), False, True, None][len(node.args) - 3:]
    if node.kwargs or len(node.args) < 3 or len(args) != 7 or not isinstance(args[0], Node):
        return None
    x, kernel, stride, padding, _, include_pad, divisor = args
    if not all(_pair(v) for v in (kernel, stride, padding)) or type(include_pad) is not bool:
        return None
    if divisor is not None and type(divisor) is not int:
        return None
    xv, out = values[x], values[node]
    if not xv.is_tensor or xv.dtype is not out.dtype or out.dtype.numpy not in C_TYPES or len(xv.sizes) != 4:
        return None
    if not all(type(s) is int for s in (*xv.sizes, *xv.strides, *out.sizes, *out.strides)):
        return None
    words = [*xv.sizes, *xv.strides, *out.sizes[2:], *out.strides]
    return AvgPoolCall(node, [x, node], (kernel, stride, padding, include_pad, divisor), words, C_TYPES[out.dtype.numpy])


def avg_pool_source(name: str, call: AvgPoolCall) -> str:
    """The C function ``name(const int64_t* g, int threads, char* p0, char* p1)`` of ``call`` (NOTE: [native avg_pool2d])."""
    (kh, kw), (sh, sw), (ph, pw), include_pad, divisor = call.constants
    t = call.ctype
    if divisor is not None:
        divide = f"total / ({t}){divisor}LL"
    else:
        count = ("(he - hs) * (we - ws)" if include_pad else
                 "((he < H ? he : H) - (hs > 0 ? hs : 0)) * ((we < W ? we : W) - (ws > 0 ? ws : 0))")
        divide = f"({t})((double)total / (double)({count}))"
    return "\n".join([
        f"void {name}(const int64_t* g, int threads, char* p0, char* p1) {{",
        "  const int64_t N = g[0], C = g[1], H = g[2], W = g[3], xn = g[4], xc = g[5], xh = g[6], xw = g[7];",
        "  const int64_t OH = g[8], OW = g[9], on = g[10], oc = g[11], ohs = g[12], ows = g[13];",
        f"  #pragma omp parallel for schedule(static) num_threads(threads) if(N * C * OH * OW * {kh * kw} >= {PARALLEL_MIN_ELEMENTS})",
        "  for (int64_t r = 0; r < N * C * OH; r++) {",
        "    const int64_t n = r / (C * OH), c = r / OH % C, oh = r % OH;",
        f"    const {t}* x = (const {t}*)p0 + n * xn + c * xc;",
        f"    {t}* row = ({t}*)p1 + n * on + c * oc + oh * ohs;",
        f"    const int64_t hs = oh * {sh} - {ph}, he0 = hs + {kh}, he = he0 < H + {ph} ? he0 : H + {ph};",
        "    (void)he;",
        "    for (int64_t ow = 0; ow < OW; ow++) {",
        f"      const int64_t ws = ow * {sw} - {pw}, we0 = ws + {kw}, we = we0 < W + {pw} ? we0 : W + {pw};",
        "      (void)we;",
        f"      {t} total = ({t})0;",
        f"      for (int64_t i = 0; i < {kh}; i++) {{",
        "        const int64_t h = hs + i;",
        "        const int inside = h >= 0 && h < H;",
        f"        for (int64_t j = 0; j < {kw}; j++) {{",
        "          const int64_t w = ws + j;",
        f"          total = total + ((inside && w >= 0 && w < W) ? x[h * xh + w * xw] : ({t})0);",
        "        }",
        "      }",
        f"      row[ow * ows] = {divide};",
        "    }",
        "  }",
        "}"])
