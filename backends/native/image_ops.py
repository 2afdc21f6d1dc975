"""C kernels of image ops: max_pool2d in one pass over its windows; conv2d's calls (its C in conv_ops.py).

NOTE: [native image ops] Both take the image geometry at run time (batch, channels,
height, width and the input's strides; the output's size and strides) and bake in the
node's constants (kernel size, stride, padding, dilation), so one source serves every
size. ``max_pool2d`` repeats eager's order per window: the first tap, then ``maximum``
with each next one (NaN wins, as ``np.maximum``), a tap in the padding reading -inf.
``conv2d`` (groups 1) gathers the windows into the same matrix eager copies them into
(NOTE: [conv2d as matmul] in ops/nn/conv.py: ``(N, C*KH*KW, OH*OW)``, or for a channels_last
output ``(N*OH*OW, KH*KW*C)``), a tap in the padding reading 0; the product and the bias
are eager's gemm calls made from C (NOTE: [gemm from C]) or eager's NumPy calls, so the
result has eager's bits. Other cases (groups, other dtypes, an output in neither layout)
keep the registry kernel. A conv2d with enough output channels runs the direct kernel
instead (NOTE: [conv2d epilogues] in conv_fusion.py): ``image_call`` is asked only for the others.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynamo_lite.graph.node import Node

from .blas import gemm_entry
from .c_ops import C_TYPES, member_lines
from .conv_grouped import GroupedConv, grouped_call, grouped_source
from .conv_ops import conv_source, gather_channels_last, gather_planes, tap
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

    @property
    def product_in_python(self) -> bool:
        """Whether the kernel only gathers and NumPy computes conv2d's product after it (``conv2d_product``)."""
        return self.cols_shape is not None and self.gemm is None


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
        return grouped_call(node, values, conv_layout) if name == "conv2d" and prologue is None else None
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
    if name == "conv2d":
        layout = conv_layout(out)
        if layout is None:
            return None
        channels_last = layout == "nhwc"
    words = [*x.sizes, *x.strides, *out.sizes[2:], *out.strides]
    call = ImageCall(node, operands + [node], constants, words, C_TYPES[out.dtype.numpy], channels_last,
                     prologue=prologue)
    if name == "conv2d":
        _gemm_in_c(call, values)
    return call


def conv_layout(out) -> str | None:
    """``"nhwc"`` for a channels_last conv2d output, ``"nchw"`` for a contiguous one, else None: eager's
    choice of formula (ops/nn/conv.py ``is_nhwc``), on the output's flags."""
    if len(out.sizes) != 4 or not all(type(s) is int for s in (*out.sizes, *out.byte_strides)):
        return None
    flags = np.lib.stride_tricks.as_strided(np.empty(1, out.dtype.numpy), out.sizes, out.byte_strides)
    if not flags.flags.c_contiguous and flags.transpose(0, 2, 3, 1).flags.c_contiguous:
        return "nhwc"
    return "nchw" if flags.flags.c_contiguous else None


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
    if isinstance(call, GroupedConv):
        return grouped_source(name, call)
    if call.gemm is not None:
        return conv_source(name, call)
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
        lines += [parallel, *gather_channels_last(call)]
    else:
        lines += [parallel, *gather_planes(call)]
    return "\n".join(lines + ["}"])


def _prologue_function(name: str, call: ImageCall) -> list:
    """``T name(T v)``: the prologue group's members on one element of its input."""
    t, group = call.ctype, call.prologue
    index = {call.operands[0]: "v"}
    body = member_lines(group.nodes, index)
    return [f"static inline {t} {name}({t} v) {{", *["  " + line for line in body],
            f"  return {index[group.outputs[0]]};", "}", ""]


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
            return (["  " + "for (int64_t ow = lo; ow < hi; ow++) {", f"    const int64_t w0 = ow * {sw} - {pw};",
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
            *["            " + line for line in tap(call, "-INFINITY", load)],
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
