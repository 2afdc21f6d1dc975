"""C kernels of image ops: max_pool2d in one pass over its windows, conv2d's im2col gather before its BLAS product.

NOTE: [native image ops] Both take the image geometry at run time (batch, channels,
height, width and the input's strides; the output's size and strides) and bake in the
node's constants (kernel size, stride, padding, dilation), so one source serves every
size. ``max_pool2d`` repeats eager's order per window: the first tap, then ``maximum``
with each next one (NaN wins, as ``np.maximum``), a tap in the padding reading -inf.
``conv2d`` (groups 1) gathers the windows into the same matrix eager copies them into
(NOTE: [conv2d as matmul] in ops/conv.py: ``(N, C*KH*KW, OH*OW)``, or for a channels_last
output ``(N*OH*OW, KH*KW*C)``), a tap in the padding reading 0; the product and the bias
are the same NumPy calls as eager's, so the result has eager's bits. Other cases
(groups, other dtypes, an output in neither layout) keep the registry kernel.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynamo_lite.graph.node import Node

from .blas import NO_TRANS, ROW_MAJOR, TRANS, gemm_entry, gemm_typedef
from .c_ops import C_TYPES, member_lines
from .kernel import PARALLEL_MIN_ELEMENTS

STAGED_ROW = 4096  # widest input row a pooling prologue stages on the stack


@dataclass
class ImageCall:
    """One image op's kernel: its operands, constants and the geometry words of a shape.

    Attributes:
        node: the conv2d or max_pool2d node.
        operands: nodes whose memory the kernel reads or writes (the cols scratch of a
            conv2d is the kernel's last pointer, added by the lowering).
        constants: kernel, stride, padding, dilation (pairs), baked into the source.
        words: N, C, H, W, the input's 4 strides, OH, OW, the output's 4 strides (elements).
    """

    node: object
    operands: list
    constants: tuple
    words: list
    ctype: str
    channels_last: bool = False
    gemm: str | None = None  # conv2d NCHW: the C int type of the BLAS gemm it calls (NOTE: [gemm from C])
    prologue: object = None  # max_pool2d: the FusionGroup computing its input per tap

    @property
    def bias(self) -> bool:
        return len(self.operands) == 4

    @property
    def cols_shape(self) -> tuple | None:
        """conv2d's gathered windows: ``(N, 1, C*KH*KW, OH*OW)``, channels_last ``(1, N*OH*OW, KH*KW*C)``
        (None for pooling)."""
        if self.node.target.name != "conv2d":
            return None
        n, c, _, _, _, _, _, _, oh, ow = self.words[:10]
        kh, kw = self.constants[0]
        if self.gemm is not None and not self.channels_last:  # one image's windows, cache-resident for its product
            return (c * kh * kw, oh * ow)
        return (1, n * oh * ow, kh * kw * c) if self.channels_last else (n, 1, c * kh * kw, oh * ow)


def _pairs(values) -> bool:
    return all(isinstance(v, tuple) and len(v) == 2 and all(type(i) is int for i in v) for v in values)


def image_call(node, values: dict, prologue=None) -> ImageCall | None:
    """The kernel of a conv2d or max_pool2d node at these values, or None to keep the registry kernel;
    a max_pool2d's ``prologue`` is the fused group computing its input per element from one tensor
    of the input's geometry (each tap reads that tensor and computes the group: ``max_pool2d(relu(y))``
    reads ``y`` once)."""
    name = node.target.name
    parse = PARSERS.get(name)
    parsed = parse(node) if parse is not None else None
    if parsed is None:
        return None
    operands, constants = parsed
    if prologue is not None:
        sources = [n for n in prologue.inputs if values[n].is_tensor]
        source, result = values[sources[0]] if len(sources) == 1 else None, values[node.args[0]]
        if (name != "max_pool2d" or len(sources) != len(prologue.inputs) or source is None
                or (tuple(source.sizes), tuple(source.strides)) != (tuple(result.sizes), tuple(result.strides))):
            return None
        operands = sources
    x, out = values[operands[0]], values[node]
    if len(x.sizes) != 4 or out.dtype.numpy not in C_TYPES or x.dtype is not out.dtype:
        return None
    read = operands + [a for a in node.args[1:3] if isinstance(a, Node)]  # conv2d's weight and bias
    if not all(values[n].is_tensor and values[n].dtype is out.dtype for n in read):
        return None
    channels_last = False
    if name == "conv2d":  # eager's choice of formula (ops/conv.py is_nhwc), on the output's flags
        flags = np.lib.stride_tricks.as_strided(np.empty(1, out.dtype.numpy), out.sizes, out.byte_strides)
        channels_last = not flags.flags.c_contiguous and flags.transpose(0, 2, 3, 1).flags.c_contiguous
        if not (channels_last or flags.flags.c_contiguous):
            return None
    words = [*x.sizes, *x.strides, *out.sizes[2:], *out.strides]
    call = ImageCall(node, operands + [node], constants, words, C_TYPES[out.dtype.numpy], channels_last,
                     prologue=prologue)
    if name == "conv2d":
        _gemm_in_c(call, values)
    return call


def _gemm_in_c(call: ImageCall, values: dict) -> None:
    """Make a conv2d call eager's gemm from C (NOTE: [gemm from C]) where NumPy's ``matmul`` calls
    gemm: every product dim above 1, and the weight dense in the layout whose matrix eager's
    reshape views without a copy: NCHW ``(O, C*KH*KW)`` per image; channels_last ``(O, KH*KW*C)``,
    which NumPy passes transposed, once for all images."""
    node = call.node
    weight, bias = node.args[1], (node.args[2] if len(node.args) > 2 else None)
    entry = gemm_entry(values[node].dtype.numpy)
    w = values[weight]
    o, c, kh, kw = w.sizes
    n, oh, ow = call.words[0], call.words[8], call.words[9]
    if call.channels_last:
        dense, rows = tuple(w.strides) == (kh * kw * c, 1, kw * c, c), n * oh * ow
    else:
        dense, rows = tuple(w.strides) == (c * kh * kw, kh * kw, kw, 1), oh * ow
    if entry is None or not dense or min(o, c * kh * kw, rows) < 2:
        return
    if bias is not None and len(values[bias].strides) != 1:
        return
    call.operands = [call.operands[0], weight] + ([bias] if bias is not None else []) + [node]
    call.words = call.words + [entry[0], values[bias].strides[0] if bias is not None else 0, o]
    call.gemm = entry[1]


def _conv2d(node):
    args = list(node.args) + [None, (1, 1), (0, 0), (1, 1), 1][len(node.args) - 2:]
    x, weight, bias, stride, padding, dilation, groups = args[:7]
    if node.kwargs or len(node.args) > 7 or groups != 1 or not _pairs((stride, padding, dilation)):
        return None
    kernel = tuple(weight.meta["val"]._sizes[2:])
    return [x], (kernel, stride, padding, dilation)


def _max_pool2d(node):
    args = list(node.args) + [(0, 0), (1, 1), False][len(node.args) - 3:]
    x, kernel, stride, padding, dilation, ceil_mode = args[:6]
    if node.kwargs or len(node.args) > 6 or not _pairs((kernel, stride, padding, dilation)):
        return None
    return [x], (kernel, stride, padding, dilation)


PARSERS = {"conv2d": _conv2d, "max_pool2d": _max_pool2d}


def image_source(name: str, call: ImageCall) -> str:
    """The C function ``name(const int64_t* g, int threads, char* p...)`` of ``call``'s op: loops over
    (image, channel) planes, or over (image, output row) with the channels innermost when the
    memory is channels_last (NOTE: [native image ops])."""
    t = call.ctype
    if call.gemm is not None:
        return _conv_source(name, call)
    pooling = call.node.target.name == "max_pool2d"
    lines = [f"void {name}(const int64_t* g, int threads, char* p0, char* p1{'' if pooling else ', char* p2'}) {{",
             "  const int64_t N = g[0], C = g[1], H = g[2], W = g[3], xn = g[4], xc = g[5], xh = g[6], xw = g[7];",
             "  const int64_t OH = g[8], OW = g[9], on = g[10], oc = g[11], oh_ = g[12], ow_ = g[13];",
             f"  const {t}* x0 = (const {t}*)p0;"]
    parallel = f"  #pragma omp parallel for schedule(static) num_threads(threads) if(N * C * OH * OW >= {PARALLEL_MIN_ELEMENTS})"
    if pooling:
        load = (lambda e: e) if call.prologue is None else (lambda e: f"{name}_in({e})")  # noqa: E731
        lines += ["  if (xc == 1 && oc == 1 && C > 1) {", "  " + parallel,
                  *["  " + line for line in _pool_channels_last(call, load)], "    return;", "  }",
                  parallel, *_pool_planes(call, load)]
        if call.prologue is not None:
            lines = _prologue_function(f"{name}_in", call) + lines
    elif call.channels_last:
        lines += [parallel, *_gather_channels_last(call)]
    else:
        lines += [parallel, *_gather_planes(call)]
    return "\n".join(lines + ["}"])


def _prologue_function(name: str, call: ImageCall) -> list:
    """``T name(T v)``: the prologue group's members on one element of its input."""
    t, group = call.ctype, call.prologue
    index = {call.operands[0]: "v"}
    body = member_lines(group.nodes, index)
    return [f"static inline {t} {name}({t} v) {{", *["  " + line for line in body],
            f"  return {index[group.outputs[0]]};", "}", ""]


def _tap(call: ImageCall, fill: str, load=lambda e: e) -> list:
    """``v``: the input element of tap (i, j) of output (oh, ow) in plane ``x``, ``fill`` in the padding
    (the padding of the op's input: ``load``, the prologue, applies to elements inside)."""
    (_, _), (sh, sw), (ph, pw), (dh, dw) = call.constants
    return [f"const int64_t h = oh * {sh} - {ph} + i * {dh}, w = ow * {sw} - {pw} + j * {dw};",
            f"const {call.ctype} v = (h >= 0 && h < H && w >= 0 && w < W) ? {load('x[h * xh + w * xw]')} : "
            f"({call.ctype}){fill};"]


def _pool_planes(call: ImageCall, load) -> list:
    """Per (image, channel) plane; windows inside the image in width (ow in [lo, hi)) skip the bounds checks."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = call.constants
    t = call.ctype
    taps = [(i, j) for i in range(kh) for j in range(kw)]  # eager's order: the first tap, then maximum

    def window(step: str, load=load, row="r") -> list:
        """Windows [lo, hi) of output row ``oh``; a unit-stride output row gets its own loop, which gcc
        vectorizes across windows (``restrict`` rows)."""
        loads = [load(f"{row}{i}[(w0 + {j * dw}){step}]") for i, j in taps]

        def loop(store: str) -> list:
            return (["  " + f"for (int64_t ow = lo; ow < hi; ow++) {{", f"    const int64_t w0 = ow * {sw} - {pw};",
                     f"    {t} m = {loads[0]};"] + [f"    m = dl_max_{t}(m, {load});" for load in loads[1:]]
                    + [f"    {store} = m;", "  }"])

        return ["if (ow_ == 1) {", *loop("orow[ow]"), "} else {", *loop("orow[ow * ow_]"), "}"]

    # A prologue runs first over the window rows, in loops gcc vectorizes (inside the window loop
    # its selects became branches: relu before the maximum took 2.6 ms instead of 0.14 on (32, 16, 32, 32)).
    staged = [] if call.prologue is None else (
        [f"if (xw == 1 && W <= {STAGED_ROW}) {{"]
        + [line for i in range(kh) for line in (f"  {t} b{i}[W];", "  #pragma omp simd",
                                                f"  for (int64_t w = 0; w < W; w++) b{i}[w] = {load(f'r{i}[w]')};")]
        + ["  " + line for line in window("", lambda e: e, "b")] + ["} else "])
    fast = ([f"const {t}* restrict r{i} = x + (h0 + {i * dh}) * xh;" for i in range(kh)]
            + [f"{t}* restrict orow = out + oh * oh_;"]
            + staged + ["if (xw == 1) {", *["  " + line for line in window("")], "} else {",
                        *["  " + line for line in window(" * xw")], "}"])
    return ["  for (int64_t nc = 0; nc < N * C; nc++) {",
            "    const int64_t n = nc / C, c = nc % C;",
            f"    const {t}* x = x0 + n * xn + c * xc;",
            f"    {t}* out = ({t}*)p1 + n * on + c * oc;",
            f"    const int64_t lim = W - 1 - {(kw - 1) * dw} + {pw};",
            f"    int64_t hi = lim < 0 ? 0 : lim / {sw} + 1, lo = ({pw} + {sw} - 1) / {sw};",
            "    if (hi > OW) hi = OW;",
            "    if (lo > hi) lo = hi;",
            "    for (int64_t oh = 0; oh < OH; oh++) {",
            f"      const int64_t h0 = oh * {sh} - {ph};",
            f"      const int inside = h0 >= 0 && h0 + {(kh - 1) * dh} < H;",
            "      for (int64_t ow = 0; ow < OW; ow++) {",
            "        if (inside && ow == lo && lo < hi) {",
            *["          " + line for line in fast],
            "          ow = hi - 1;",
            "          continue;",
            "        }",
            f"        {t} m = 0;",
            f"        for (int64_t i = 0; i < {kh}; i++) {{",
            f"          for (int64_t j = 0; j < {kw}; j++) {{",
            *["            " + line for line in _tap(call, "-INFINITY", load)],
            f"            m = (i == 0 && j == 0) ? v : dl_max_{t}(m, v);",
            "          }", "        }",
            "        out[oh * oh_ + ow * ow_] = m;",
            "      }", "    }", "  }"]


def _pool_channels_last(call: ImageCall, load) -> list:
    """Per (image, output row); each tap updates a pixel's channels in one unit-stride loop."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = call.constants
    t = call.ctype
    return ["  for (int64_t no = 0; no < N * OH; no++) {",
            "    const int64_t n = no / OH, oh = no % OH;",
            "    for (int64_t ow = 0; ow < OW; ow++) {",
            f"      {t}* restrict o = ({t}*)p1 + n * on + oh * oh_ + ow * ow_;",
            f"      for (int64_t i = 0; i < {kh}; i++) {{",
            f"        for (int64_t j = 0; j < {kw}; j++) {{",
            f"          const int64_t h = oh * {sh} - {ph} + i * {dh}, w = ow * {sw} - {pw} + j * {dw};",
            "          const int first = i == 0 && j == 0;",
            "          if (h >= 0 && h < H && w >= 0 && w < W) {",
            f"            const {t}* restrict r = x0 + n * xn + h * xh + w * xw;",
            f"            for (int64_t c = 0; c < C; c++) o[c] = first ? {load('r[c]')} : dl_max_{t}(o[c], {load('r[c]')});",
            "          } else {",
            f"            for (int64_t c = 0; c < C; c++) o[c] = first ? ({t})-INFINITY : dl_max_{t}(o[c], ({t})-INFINITY);",
            "          }", "        }", "      }", "    }", "  }"]


def _gather_planes(call: ImageCall) -> list:
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
            *["            " + line for line in _tap(call, "0")],
            "            row[oh * OW + ow] = v;",
            "          }", "        }", "      }", "    }", "  }"]


def _gather_channels_last(call: ImageCall, cols: str = "p2") -> list:
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


def _conv_source(name: str, call: ImageCall) -> str:
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


def _conv_prelude(name: str, call: ImageCall) -> list:
    """The gemm pointer type, the signature and the geometry both conv2d kernels read."""
    t, pointers = call.ctype, len(call.operands) + 1
    return [gemm_typedef(f"{name}_gemm_t", t, call.gemm),
            f"void {name}(const int64_t* g, int threads, {', '.join(f'char* p{k}' for k in range(pointers))}) {{",
            "  const int64_t C = g[1], H = g[2], W = g[3], xn = g[4], xc = g[5], xh = g[6], xw = g[7];",
            "  const int64_t OH = g[8], OW = g[9], bs = g[15], O = g[16];",
            f"  {name}_gemm_t gemm = ({name}_gemm_t)(intptr_t)g[14];",
            f"  const {t}* x0 = (const {t}*)p0;",
            f"  const {t}* bias = (const {t}*)p{2 if call.bias else 1};"]


def _conv_channels_last_source(name: str, call: ImageCall) -> str:
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
        *_gather_channels_last(call, f"p{pointers - 1}"),
        f"  gemm({ROW_MAJOR}, {NO_TRANS}, {TRANS}, M, O, K, ({t})1, ({t}*)p{pointers - 1}, K, (const {t}*)p1, K, "
        f"({t})0, out, O);",
        *(bias_add if call.bias else []),
        "}"])


def _dense_rows(call: ImageCall) -> list:
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
