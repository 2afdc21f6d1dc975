"""C kernels of image ops: max_pool2d in one pass over its windows, conv2d's im2col gather before its BLAS product.

NOTE: [native image ops] Both take the image geometry at run time (batch, channels,
height, width and the input's strides; the output's size and strides) and bake in the
node's constants (kernel size, stride, padding, dilation), so one source serves every
size. ``max_pool2d`` repeats eager's order per window: the first tap, then ``maximum``
with each next one (NaN wins, as ``np.maximum``), a tap in the padding reading -inf.
``conv2d`` (groups 1, an output in NCHW order) gathers the windows into the same
``(N, C*KH*KW, OH*OW)`` matrix eager copies them into (NOTE: [conv2d as matmul] in
ops/conv.py), a tap in the padding reading 0; the product and the bias are the same
NumPy calls as eager's, so the result has eager's bits. Other cases (groups, a
channels_last output, other dtypes) keep the registry kernel.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynamo_lite.graph.node import Node

from .c_ops import C_TYPES
from .kernel import PARALLEL_MIN_ELEMENTS


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

    @property
    def cols_shape(self) -> tuple | None:
        """conv2d's gathered windows ``(N, 1, C*KH*KW, OH*OW)`` (None for pooling)."""
        if self.node.target.name != "conv2d":
            return None
        n, c, _, _, _, _, _, _, oh, ow = self.words[:10]
        kh, kw = self.constants[0]
        return (n, 1, c * kh * kw, oh * ow)


def _pairs(values) -> bool:
    return all(isinstance(v, tuple) and len(v) == 2 and all(type(i) is int for i in v) for v in values)


def image_call(node, values: dict) -> ImageCall | None:
    """The kernel of a conv2d or max_pool2d node at these values, or None to keep the registry kernel."""
    name = node.target.name
    parse = PARSERS.get(name)
    parsed = parse(node) if parse is not None else None
    if parsed is None:
        return None
    operands, constants = parsed
    x, out = values[node.args[0]], values[node]
    if len(x.sizes) != 4 or out.dtype.numpy not in C_TYPES or x.dtype is not out.dtype:
        return None
    read = operands + [a for a in node.args[1:3] if isinstance(a, Node)]  # conv2d's weight and bias
    if not all(values[n].is_tensor and values[n].dtype is out.dtype for n in read):
        return None
    if name == "conv2d" and tuple(out.strides) != _contiguous(out.sizes):
        return None  # the product writes (N, O, OH*OW) straight into the output
    words = [*x.sizes, *x.strides, *out.sizes[2:], *out.strides]
    return ImageCall(node, operands + [node], constants, words, C_TYPES[out.dtype.numpy])


def _contiguous(sizes) -> tuple:
    strides, step = [], 1
    for size in reversed(sizes):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


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
    """The C function ``name(const int64_t* g, int threads, char* p...)`` of ``call``'s op."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = call.constants
    t = call.ctype
    pooling = call.node.target.name == "max_pool2d"
    fill = "-INFINITY" if pooling else "0"
    head = [f"void {name}(const int64_t* g, int threads, char* p0, char* p1{', char* p2' if not pooling else ''}) {{",
            "  const int64_t N = g[0], C = g[1], H = g[2], W = g[3], xn = g[4], xc = g[5], xh = g[6], xw = g[7];",
            "  const int64_t OH = g[8], OW = g[9], on = g[10], oc = g[11], oh_ = g[12], ow_ = g[13];",
            f"  #pragma omp parallel for schedule(static) num_threads(threads) if(N * C * OH * OW >= {PARALLEL_MIN_ELEMENTS})",
            "  for (int64_t nc = 0; nc < N * C; nc++) {",
            "    const int64_t n = nc / C, c = nc % C;",
            f"    const {t}* x = (const {t}*)p0 + n * xn + c * xc;"]
    tap = (f"const int64_t h = oh * {sh} - {ph} + i * {dh}, w = ow * {sw} - {pw} + j * {dw};",
           f"const {t} v = (h >= 0 && h < H && w >= 0 && w < W) ? x[h * xh + w * xw] : ({t}){fill};")
    if pooling:
        taps = [(i, j) for i in range(kh) for j in range(kw)]  # eager's order: the first tap, then maximum
        def window(step: str) -> list:
            loads = [f"r{i}[(w0 + {j * dw}){step}]" for i, j in taps]
            return [f"{t} m = {loads[0]};"] + [f"m = dl_max_{t}(m, {load});" for load in loads[1:]]
        fast = ([f"const {t}* r{i} = x + (h0 + {i * dh}) * xh;" for i in range(kh)]
                + ["if (xw == 1) {",
                   "  for (int64_t ow = lo; ow < hi; ow++) {", f"    const int64_t w0 = ow * {sw} - {pw};",
                   *["    " + line for line in window("")], "    out[oh * oh_ + ow * ow_] = m;", "  }",
                   "} else {",
                   "  for (int64_t ow = lo; ow < hi; ow++) {", f"    const int64_t w0 = ow * {sw} - {pw};",
                   *["    " + line for line in window(" * xw")], "    out[oh * oh_ + ow * ow_] = m;", "  }",
                   "}"])
        generic = ["m = (i == 0 && j == 0) ? v : dl_max_" + t + "(m, v);"]
        body = [f"    {t}* out = ({t}*)p1 + n * on + c * oc;",
                # Windows inside the image in width: ow in [lo, hi) (no bounds checks there).
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
                f"            {tap[0]}", f"            {tap[1]}",
                *[f"            {line}" for line in generic],
                "          }", "        }",
                "        out[oh * oh_ + ow * ow_] = m;",
                "      }", "    }"]
    else:  # cols[n][c][i][j][oh][ow], eager's im2col order
        body = [f"    {t}* cols = ({t}*)p2 + nc * {kh * kw} * OH * OW;",
                f"    for (int64_t i = 0; i < {kh}; i++) {{",
                f"      for (int64_t j = 0; j < {kw}; j++) {{",
                f"        {t}* row = cols + (i * {kw} + j) * OH * OW;",
                "        for (int64_t oh = 0; oh < OH; oh++) {",
                "          for (int64_t ow = 0; ow < OW; ow++) {",
                f"            {tap[0]}", f"            {tap[1]}",
                "            row[oh * OW + ow] = v;",
                "          }", "        }", "      }", "    }"]
    return "\n".join(head + body + ["  }", "}"])


def conv2d_product(cols, weight, bias, out) -> None:
    """conv2d after the gather into ``cols`` (N, 1, C*KH*KW, OH*OW): eager's product and bias add."""
    n, _, k, _ = cols.shape
    o = weight.shape[0]
    np.matmul(weight.reshape(1, o, k), cols, out=out.reshape(n, 1, o, -1))
    if bias is not None:
        out += bias.reshape(-1, 1, 1)
