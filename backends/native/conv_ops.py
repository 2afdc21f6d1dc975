"""conv2d's C kernels: the im2col gathers in eager's orders, and whole convolutions calling eager's gemm from C.

The gathers write the matrix eager's kernel copies the windows into (NOTE: [conv2d as
matmul] in ops/nn/conv.py), a tap in the padding reading 0; ``conv2d_product`` is eager's
product and bias add after a gather. ``conv_source`` is the kernel of a conv2d whose
product NumPy hands to gemm (NOTE: [gemm from C]): NCHW image by image, channels_last in
one gemm over every pixel. ``call`` is an ``image_ops.ImageCall``.
"""
from __future__ import annotations

import numpy as np

from .blas import NO_TRANS, ROW_MAJOR, TRANS, gemm_typedef
from .kernel import PARALLEL_MIN_ELEMENTS


def tap(call, fill: str, load=lambda e: e) -> list:
    """``v``: the input element of tap (i, j) of output (oh, ow) in plane ``x``, ``fill`` in the padding
    (the padding of the op's input: ``load``, the prologue, applies to elements inside)."""
    (_, _), (sh, sw), (ph, pw), (dh, dw) = call.constants
    return [f"const int64_t h = oh * {sh} - {ph} + i * {dh}, w = ow * {sw} - {pw} + j * {dw};",
            f"const {call.ctype} v = (h >= 0 && h < H && w >= 0 && w < W) ? {load('x[h * xh + w * xw]')} : "
            f"({call.ctype}){fill};"]


def gather_planes(call) -> list:
    """cols[n][c][i][j][oh][ow]: eager's NCHW im2col order."""
    (kh, kw), _, _, _ = call.constants
    t = call.ctype
    return ["  for (int64_t nc = 0; nc < N * C; nc++) {",
            "    const int64_t n = nc / C, c = nc % C;",
            f"    const {t}* x = x0 + n * xn + c * xc;",
            f"    {t}* cols = ({t}*)p2 + nc * {kh * kw} * OH * OW;",
            f"    for (int64_t i = 0; i < {kh}; i++) {{",
            f"      for (int64_t j = 0; j < {kw}; j++) {{",
            f"        {t}* row = cols + (i * {kw} + j) * OH * OW;",
            "        for (int64_t oh = 0; oh < OH; oh++) {",
            "          for (int64_t ow = 0; ow < OW; ow++) {",
            *["            " + line for line in tap(call, "0")],
            "            row[oh * OW + ow] = v;",
            "          }", "        }", "      }", "    }", "  }"]


def gather_channels_last(call, cols: str = "p2") -> list:
    """cols[n][oh][ow][i][j][c]: eager's channels_last im2col order."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = call.constants
    t = call.ctype
    channels = call.node.args[1].meta["val"]._sizes[1]  # the weight's: a constant trip count unrolls small rows
    row = f"{kw * channels}" if type(channels) is int else f"{kw} * C"
    # A window row inside the image of a dense NHWC input is KW*C consecutive elements in both.
    dense = (f"      if ({dw} == 1 && xc == 1 && xw == C && ow * {sw} - {pw} >= 0 && ow * {sw} - {pw} + {kw - 1} < W) {{",
             f"        for (int64_t i = 0; i < {kh}; i++) {{",
             f"          const int64_t h = oh * {sh} - {ph} + i * {dh};",
             f"          {t}* restrict dst = cols + (ow * {kh * kw} + i * {kw}) * C;",
             f"          if (h < 0 || h >= H) {{ for (int64_t k = 0; k < {row}; k++) dst[k] = ({t})0; continue; }}",
             f"          const {t}* restrict r = x0 + n * xn + h * xh + (ow * {sw} - {pw}) * xw;",
             f"          for (int64_t k = 0; k < {row}; k++) dst[k] = r[k];",
             "        }",
             "        continue;",
             "      }")
    return ["  for (int64_t no = 0; no < N * OH; no++) {",
            "    const int64_t n = no / OH, oh = no % OH;",
            f"    {t}* cols = ({t}*){cols} + no * OW * {kh * kw} * C;",
            "    for (int64_t ow = 0; ow < OW; ow++) {",
            *dense,
            f"      for (int64_t i = 0; i < {kh}; i++) {{",
            f"        for (int64_t j = 0; j < {kw}; j++) {{",
            f"          const int64_t h = oh * {sh} - {ph} + i * {dh}, w = ow * {sw} - {pw} + j * {dw};",
            f"          {t}* restrict dst = cols + (ow * {kh * kw} + i * {kw} + j) * C;",
            "          if (h >= 0 && h < H && w >= 0 && w < W) {",
            f"            const {t}* restrict r = x0 + n * xn + h * xh + w * xw;",
            "            for (int64_t c = 0; c < C; c++) dst[c] = r[c * xc];",
            "          } else {",
            f"            for (int64_t c = 0; c < C; c++) dst[c] = ({t})0;",
            "          }", "        }", "      }", "    }", "  }"]


def conv_source(name: str, call) -> str:
    """NCHW conv2d, image by image: gather its windows into ``cols`` (eager's im2col order, the
    padding's taps 0), eager's gemm ``weight (O, K) @ cols (K, P)`` into the image's output, then
    the bias add (NOTE: [gemm from C]). ``lo[j]``/``hi[j]`` bound the output columns whose tap
    column ``j`` lies inside the image, so the copy loop has no bounds checks."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = call.constants
    t, pointers = call.ctype, len(call.operands) + 1
    if call.channels_last:
        return _conv_channels_last_source(name, call)
    bias_add = ["    for (int64_t o = 0; o < O; o++) {", f"      const {t} b = bias[o * bs];",
                "      for (int64_t q = 0; q < P; q++) out[o * P + q] = out[o * P + q] + b;", "    }"]
    return "\n".join([
        *_conv_prelude(name, call),
        "  const int64_t on = g[10];",
        f"  const int64_t K = C * {kh * kw}, P = OH * OW;",
        f"  const {t}* w = (const {t}*)p1;",
        f"  {t}* cols = ({t}*)p{pointers - 1};",
        f"  int64_t lo[{kw}], hi[{kw}];",
        f"  for (int64_t j = 0; j < {kw}; j++) {{",
        f"    const int64_t first = {pw} - j * {dw}, end = W + {pw} - j * {dw};",
        f"    lo[j] = first <= 0 ? 0 : (first + {sw} - 1) / {sw};",
        f"    hi[j] = end <= 0 ? 0 : (end + {sw} - 1) / {sw};",
        "    if (hi[j] > OW) hi[j] = OW;",
        "    if (lo[j] > hi[j]) lo[j] = hi[j];",
        "  }",
        "  for (int64_t n = 0; n < g[0]; n++) {",
        f"    #pragma omp parallel for schedule(static) num_threads(threads) if(K * P >= {PARALLEL_MIN_ELEMENTS})",
        "    for (int64_t r = 0; r < K; r++) {",
        f"      const int64_t c = r / {kh * kw}, i = r / {kw} % {kh}, j = r % {kw};",
        f"      const {t}* x = x0 + n * xn + c * xc;",
        *_dense_rows(call),
        "      for (int64_t oh = 0; oh < OH; oh++) {",
        f"        {t}* restrict dst = cols + r * P + oh * OW;",
        f"        const int64_t h = oh * {sh} - {ph} + i * {dh};",
        "        if (h < 0 || h >= H) {",
        f"          for (int64_t ow = 0; ow < OW; ow++) dst[ow] = ({t})0;",
        "          continue;",
        "        }",
        f"        const {t}* restrict src = x + h * xh;",
        f"        for (int64_t ow = 0; ow < lo[j]; ow++) dst[ow] = ({t})0;",
        "        if (xw == 1) {",
        f"          for (int64_t ow = lo[j]; ow < hi[j]; ow++) dst[ow] = src[ow * {sw} - {pw} + j * {dw}];",
        "        } else {",
        f"          for (int64_t ow = lo[j]; ow < hi[j]; ow++) dst[ow] = src[(ow * {sw} - {pw} + j * {dw}) * xw];",
        "        }",
        f"        for (int64_t ow = hi[j]; ow < OW; ow++) dst[ow] = ({t})0;",
        "      }",
        "    }",
        f"    {t}* out = ({t}*)p{pointers - 2} + n * on;",
        f"    gemm({ROW_MAJOR}, {NO_TRANS}, {NO_TRANS}, O, P, K, ({t})1, w, K, cols, P, ({t})0, out, P);",
        *(bias_add if call.bias else []),
        "  }",
        "}"])


def _conv_prelude(name: str, call) -> list:
    """The gemm pointer type, the signature and the geometry both conv2d kernels read."""
    t, pointers = call.ctype, len(call.operands) + 1
    return [gemm_typedef(f"{name}_gemm_t", t, call.gemm),
            f"void {name}(const int64_t* g, int threads, {', '.join(f'char* p{k}' for k in range(pointers))}) {{",
            "  const int64_t C = g[1], H = g[2], W = g[3], xn = g[4], xc = g[5], xh = g[6], xw = g[7];",
            "  const int64_t OH = g[8], OW = g[9], bs = g[15], O = g[16];",
            f"  {name}_gemm_t gemm = ({name}_gemm_t)(intptr_t)g[14];",
            f"  const {t}* x0 = (const {t}*)p0;",
            f"  const {t}* bias = (const {t}*)p{2 if call.bias else 1};"]


def _conv_channels_last_source(name: str, call) -> str:
    """channels_last conv2d: gather every window (eager's NHWC im2col order), then eager's one gemm
    ``cols (N*OH*OW, KH*KW*C) @ weight^T`` into the NHWC output, then the bias along each pixel."""
    (kh, kw), _, _, _ = call.constants
    t, pointers = call.ctype, len(call.operands) + 1
    outs = call.node.args[1].meta["val"]._sizes[0]  # O: a constant trip count vectorizes short pixels
    bias_add = [f"  {t} b[{outs}];", f"  for (int64_t o = 0; o < {outs}; o++) b[o] = bias[o * bs];",
                "  for (int64_t m = 0; m < M; m++) {", f"    {t}* restrict row = out + m * {outs};",
                f"    for (int64_t o = 0; o < {outs}; o++) row[o] = row[o] + b[o];", "  }"]
    parallel = f"  #pragma omp parallel for schedule(static) num_threads(threads) if(N * C * OH * OW >= {PARALLEL_MIN_ELEMENTS})"
    return "\n".join([
        *_conv_prelude(name, call),
        "  const int64_t N = g[0];",
        f"  const int64_t K = C * {kh * kw}, M = N * OH * OW;",
        f"  {t}* out = ({t}*)p{pointers - 2};",
        "  (void)xc;",
        parallel,
        *gather_channels_last(call, f"p{pointers - 1}"),
        f"  gemm({ROW_MAJOR}, {NO_TRANS}, {TRANS}, M, O, K, ({t})1, ({t}*)p{pointers - 1}, K, (const {t}*)p1, K, "
        f"({t})0, out, O);",
        *(bias_add if call.bias else []),
        "}"])


def _dense_rows(call) -> list:
    """The gather of one cols row when stride 1 maps output pixels onto a dense input plane of the
    same width: one shifted copy over the rows inside the image, then the padding columns and rows
    zeroed (the copy's range starts and ends on taps inside the image, so it reads no memory
    outside the plane)."""
    (_, _), (sh, sw), (ph, pw), (dh, dw) = call.constants
    t = call.ctype
    if (sh, sw) != (1, 1):
        return []
    return ["      if (xw == 1 && xh == W && OW == W && lo[j] < hi[j]) {",
            f"        int64_t top = {ph} - i * {dh}, bottom = H + {ph} - i * {dh};",
            "        top = top < 0 ? 0 : top > OH ? OH : top;",
            "        bottom = bottom < top ? top : bottom > OH ? OH : bottom;",
            f"        {t}* restrict dst = cols + r * P;",
            f"        const int64_t shift = (i * {dh} - {ph}) * W + j * {dw} - {pw};",
            "        if (top < bottom) {",
            "          for (int64_t q = top * OW + lo[j]; q < (bottom - 1) * OW + hi[j]; q++) dst[q] = x[q + shift];",
            "        }",
            "        for (int64_t oh = top; oh < bottom; oh++) {",
            f"          for (int64_t ow = 0; ow < lo[j]; ow++) dst[oh * OW + ow] = ({t})0;",
            f"          for (int64_t ow = hi[j]; ow < OW; ow++) dst[oh * OW + ow] = ({t})0;",
            "        }",
            f"        for (int64_t q = 0; q < top * OW; q++) dst[q] = ({t})0;",
            f"        for (int64_t q = bottom * OW; q < P; q++) dst[q] = ({t})0;",
            "        continue;",
            "      }"]


def conv2d_product(cols, weight, bias, out) -> None:
    """conv2d after the gather into ``cols``: eager's product and bias add (NOTE: [conv2d as matmul]):
    NCHW ``(N, 1, C*KH*KW, OH*OW)`` times the weight, channels_last ``(1, N*OH*OW, KH*KW*C)``."""
    n, o, oh, ow = out.shape
    if cols.ndim == 3:
        kkc = cols.shape[2]
        c = kkc // (weight.shape[2] * weight.shape[3])
        wmat = weight.reshape(1, o, c, weight.shape[2], weight.shape[3]).transpose(0, 3, 4, 2, 1).reshape(1, kkc, o)
        np.matmul(cols, wmat, out=out.transpose(0, 2, 3, 1).reshape(n * oh * ow, 1, o).transpose(1, 0, 2))
    else:
        np.matmul(weight.reshape(1, o, cols.shape[2]), cols, out=out.reshape(n, 1, o, -1))
    if bias is not None:
        out += bias.reshape(-1, 1, 1)
