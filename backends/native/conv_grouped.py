"""conv2d with groups (depthwise and grouped convolutions) as a direct C kernel, NCHW planes or channels_last pixels.

NOTE: [grouped conv2d] Eager computes a grouped conv2d as one batched matmul per group over
an im2col copy (NOTE: [conv2d as matmul]); with few input channels per group (a depthwise
conv has one) each product is tiny and the copy and NumPy's per-group loop cost most of
the time. Here each output element is summed directly from the input:

- NCHW output: work items are (image, output channel, band of output rows). A band's input
  rows of one input channel are staged into a zero-padded buffer on the stack (``STAGE``
  elements, so the taps in the padding read 0 and the loops have no bounds checks), then
  every output pixel of the band sums its ``KH*KW`` taps, unrolled, with the output column
  innermost (one vector lane per pixel). With several input channels per group their
  partial sums accumulate in a second buffer, channel by channel.
- channels_last output: work items are (image, output row); for every output pixel and tap
  each output channel's product is added in a loop over channels (one lane per channel,
  unit stride in the input when it is channels_last too), the weights packed once per call
  as ``(Cg, KH, KW, O)`` in the scratch array.

Every output element sums its products in eager's im2col order (NCHW: input channel of
the group, tap row, tap column; channels_last: tap row, tap column, input channel; a tap
in the padding adds its weight times 0) and adds the bias last, as eager's ``matmul`` then
``+= bias`` do; BLAS may block that sum differently, so the bits can differ (tests compare
with a tolerance). The input may have any strides. Groups of more than ``MAX_GROUP_INPUTS``
input channels keep the registry kernel (their per-group products are real matrix
products that BLAS does better).
"""
from __future__ import annotations

from dataclasses import dataclass

from dynamo_lite.graph.node import Node

from .c_ops import C_TYPES
from .kernel import PARALLEL_MIN_ELEMENTS

STAGE = 8192  # elements of one band's staged input rows (and of its partial sums): 32 KiB of float
MAX_GROUP_INPUTS = 16  # input channels per group the direct kernel takes
MAX_CHANNELS_LAST_OUTPUTS = 8192  # a channels_last pixel's output channels, summed in a stack array
UNROLLED_TAPS = 49  # kernels up to 7x7 get their taps unrolled; larger ones loop over them


@dataclass
class GroupedConv:
    """One grouped conv2d kernel (NOTE: [grouped conv2d]).

    Attributes:
        operands: ``[x, weight, (bias,) result]``.
        constants: kernel, stride, padding, dilation (pairs).
        groups: the groups; ``channels`` is the weight's ``(O, Cg)``.
        words: N, C, H, W, the input's strides, OH, OW, the result's strides, the weight's
            strides, the bias's stride (elements).
        channels_last: the result is channels_last (pixel kernel), else NCHW (plane kernel).
    """

    node: object
    operands: list
    constants: tuple
    groups: int
    channels: tuple
    words: list
    ctype: str
    channels_last: bool = False
    gemm: None = None  # no BLAS product (the lowering's conv2d field)

    @property
    def bias(self) -> bool:
        return len(self.operands) == 4

    @property
    def cols_shape(self) -> tuple | None:
        """The scratch of a channels_last kernel: the packed weights and the bias, ``(Cg*KH*KW + 1) * O``."""
        (kh, kw), _, _, _ = self.constants
        outs, cg = self.channels
        return ((cg * kh * kw + 1) * outs,) if self.channels_last else None

    @property
    def product_in_python(self) -> bool:
        """Whether NumPy computes the product after the kernel (never: the kernel writes the result)."""
        return False


def grouped_call(node, values: dict, layout) -> GroupedConv | None:
    """The grouped kernel of conv2d ``node`` at these values, or None (groups 1, or a case it does not
    take); ``layout(value)`` is ``"nchw"``, ``"nhwc"`` or None for an output in neither layout."""
    args = list(node.args) + [None, (1, 1), (0, 0), (1, 1), 1][len(node.args) - 2:]
    x, weight, bias, stride, padding, dilation, groups = args[:7]
    if node.kwargs or len(node.args) > 7 or type(groups) is not int or groups <= 1:
        return None
    if not all(isinstance(v, tuple) and len(v) == 2 and all(type(i) is int for i in v) for v in (stride, padding, dilation)):
        return None
    read = [x, weight] + ([bias] if bias is not None else [])
    if not all(isinstance(n, Node) and values[n].is_tensor for n in read):
        return None
    out, xv, wv = values[node], values[x], values[weight]
    ctype = C_TYPES.get(out.dtype.numpy)
    if ctype not in ("float", "double") or not all(values[n].dtype is out.dtype for n in read):
        return None
    if len(xv.sizes) != 4 or len(wv.sizes) != 4 or not all(type(s) is int for s in wv.sizes):
        return None
    if bias is not None and len(values[bias].sizes) != 1:
        return None
    outs, cg, kh, kw = wv.sizes
    kind = layout(out)
    if kind is None or cg > MAX_GROUP_INPUTS or outs % groups or type(xv.sizes[1]) is not int \
            or xv.sizes[1] != cg * groups:
        return None
    if kind == "nhwc" and outs > MAX_CHANNELS_LAST_OUTPUTS:
        return None
    constants = ((kh, kw), stride, padding, dilation)
    call = GroupedConv(node, read + [node], constants, groups, (outs, cg), [], ctype, kind == "nhwc")
    call.words = grouped_words(call, values)
    if kind == "nchw":
        span = ((kh - 1) * dilation[0] + 1) * _staged_width(call.words[9], kw, stride[1], dilation[1])
        if type(span) is not int or span > STAGE:
            return None
    return call


def _staged_width(ow, kw: int, sw: int, dw: int):
    """The input columns the output columns read: ``(OW-1)*SW + (KW-1)*DW + 1``."""
    return (ow - 1) * sw + (kw - 1) * dw + 1


def grouped_words(call: GroupedConv, values: dict) -> list:
    """The geometry words of ``call`` at these values (see ``GroupedConv.words``)."""
    node = call.node
    x, weight, out = values[node.args[0]], values[node.args[1]], values[node]
    bias = values[node.args[2]].strides[0] if call.bias else 0
    return [*x.sizes, *x.strides, *out.sizes[2:], *out.strides, *weight.strides, bias]


def grouped_source(name: str, call: GroupedConv) -> str:
    """The C function ``name(const int64_t* g, int threads, char* p...)`` of ``call`` (NOTE: [grouped conv2d])."""
    body = _pixels_body(call) if call.channels_last else _planes_body(call)
    pointers = len(call.operands) + (1 if call.channels_last else 0)
    return "\n".join([
        f"void {name}(const int64_t* g, int threads, {', '.join(f'char* p{k}' for k in range(pointers))}) {{",
        "  const int64_t N = g[0], H = g[2], W = g[3], xn = g[4], xc = g[5], xh = g[6], xw = g[7];",
        "  const int64_t OH = g[8], OW = g[9], on = g[10], oc = g[11], ohs = g[12], ows = g[13];",
        "  const int64_t ws0 = g[14], ws1 = g[15], ws2 = g[16], ws3 = g[17], bs = g[18];",
        f"  const {call.ctype}* x0 = (const {call.ctype}*)p0;",
        f"  const {call.ctype}* w0 = (const {call.ctype}*)p1;",
        f"  const {call.ctype}* b0 = {f'(const {call.ctype}*)p2' if call.bias else '0'};",
        f"  {call.ctype}* o0 = ({call.ctype}*)p{len(call.operands) - 1};",
        "  (void)bs; (void)b0; (void)xc;",
        *body,
        "}"])


def _taps(call: GroupedConv, term) -> list:
    """Lines adding ``term(i, j)`` (a product's C expression) to ``s`` for every tap, unrolled when few."""
    (kh, kw), _, _, _ = call.constants
    if kh * kw <= UNROLLED_TAPS:
        return [f"s = s + {term(i, j)};" for i in range(kh) for j in range(kw)]
    return [f"for (int64_t i = 0; i < {kh}; i++) for (int64_t j = 0; j < {kw}; j++) s = s + {term('i', 'j')};"]


def _planes_body(call: GroupedConv) -> list:
    """NCHW: (image, output channel, band of rows) items; each input channel's band staged, zero-padded."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = call.constants
    (outs, cg), t = call.channels, call.ctype
    og = outs // call.groups
    span = (kh - 1) * dh + 1
    staged = "buf[(r * {sh} + {i} * {dh}) * WP + ow * {sw} + {j} * {dw}]"

    def term(i, j) -> str:
        return f"wk[{i} * {kw} + {j}] * " + staged.format(sh=sh, i=i, dh=dh, sw=sw, j=j, dw=dw)

    bias = "b0[o * bs]" if call.bias else f"({t})0"
    first, rest = [f"{t} s = ({t})0;"], [f"{t} s = acc[r * OW + ow];"]
    store_sum = ["acc[r * OW + ow] = s;"]
    # The last input channel's sums go to the output with the bias: straight from the taps when Cg is 1.
    last = (first if cg == 1 else rest)
    finish = ["orow[ow * ows] = s + b;"]
    pixel_loops = lambda init, body: ["      for (int64_t r = 0; r < nr; r++) {",  # noqa: E731
                                      f"        {t}* restrict orow = o0 + n * on + o * oc + (oh0 + r) * ohs;",
                                      "        (void)orow;",
                                      "        for (int64_t ow = 0; ow < OW; ow++) {",
                                      *["          " + line for line in init + _taps(call, term) + body],
                                      "        }", "      }"]
    channel_loop = []
    if cg > 1:  # the first Cg - 1 input channels leave partial sums in acc
        channel_loop = [f"    for (int64_t cc = 0; cc < {cg - 1}; cc++) {{",
                        *["  " + line for line in _stage_lines(call, "cc")],
                        "      if (cc == 0) {", *["  " + line for line in pixel_loops(first, store_sum)],
                        "      } else {", *["  " + line for line in pixel_loops(rest, store_sum)], "      }",
                        "    }"]
    work = f"N * {outs} * OH * OW * {cg * kh * kw}"
    return [
        f"  const int64_t WP = (OW - 1) * {sw} + {(kw - 1) * dw + 1};",
        f"  int64_t rows = ({STAGE} / WP - {span}) / {sh} + 1;",
        "  if (rows > OH) rows = OH;",
        "  if (rows < 1) rows = 1;",
        "  const int64_t bands = (OH + rows - 1) / rows;",
        f"  #pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if({work} >= {PARALLEL_MIN_ELEMENTS * 8})",
        f"  for (int64_t task = 0; task < N * {outs} * bands; task++) {{",
        f"    const int64_t n = task / ({outs} * bands), o = task / bands % {outs}, oh0 = task % bands * rows;",
        "    const int64_t nr = OH - oh0 < rows ? OH - oh0 : rows;",
        f"    const int64_t cbase = o / {og} * {cg};",
        f"    {t} buf[{STAGE}], wk[{kh * kw}];",
        *([f"    {t} acc[{STAGE}];"] if cg > 1 else []),
        f"    const {t} b = {bias};",
        *channel_loop,
        *_stage_lines(call, str(cg - 1)),
        "    if (ows == 1) {",
        *[line.replace("orow[ow * ows]", "orow[ow]") for line in pixel_loops(last, finish)],
        "    } else {",
        *pixel_loops(last, finish),
        "    }",
        "  }"]


def _stage_lines(call: GroupedConv, cc: str) -> list:
    """Stage input channel ``cbase + cc``'s rows of the band into ``buf`` (zero outside the image) and its
    weights into ``wk``."""
    (kh, kw), (sh, _), (ph, pw), (dh, _) = call.constants
    t = call.ctype
    span = (kh - 1) * dh + 1
    return [
        "    {",
        f"      const {t}* restrict x = x0 + n * xn + (cbase + {cc}) * xc;",
        f"      for (int64_t k = 0; k < {kh * kw}; k++) wk[k] = w0[o * ws0 + ({cc}) * ws1 + k / {kw} * ws2 + k % {kw} * ws3];",
        f"      const int64_t h0 = oh0 * {sh} - {ph}, hs = (nr - 1) * {sh} + {span};",
        f"      int64_t left = {pw}, right = W + {pw};",  # staged columns [left, right) are inside the image
        "      if (left > WP) left = WP;",
        "      if (right > WP) right = WP;",
        "      if (right < left) right = left;",
        "      for (int64_t r = 0; r < hs; r++) {",
        f"        {t}* restrict row = buf + r * WP;",
        "        const int64_t h = h0 + r;",
        f"        if (h < 0 || h >= H) {{ for (int64_t q = 0; q < WP; q++) row[q] = ({t})0; continue; }}",
        f"        const {t}* restrict src = x + h * xh - {pw} * xw;",
        f"        for (int64_t q = 0; q < left; q++) row[q] = ({t})0;",
        "        if (xw == 1) { for (int64_t q = left; q < right; q++) row[q] = src[q]; }",
        "        else { for (int64_t q = left; q < right; q++) row[q] = src[q * xw]; }",
        f"        for (int64_t q = right; q < WP; q++) row[q] = ({t})0;",
        "      }",
        "    }"]


def _pixels_body(call: GroupedConv) -> list:
    """channels_last: (image, output row) items; per pixel and tap, one loop over the output channels."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = call.constants
    (outs, cg), t = call.channels, call.ctype
    og = outs // call.groups
    scratch = f"p{len(call.operands)}"
    # Output channel o reads input channel o / Og * Cg + cc: o itself for a depthwise conv (Cg = Og = 1).
    channel = "o" if (cg, og) == (1, 1) else f"(o / {og} * {cg} + cc)"
    # eager's channels_last im2col order: tap row, tap column, then the group's input channel.
    taps = [f"        for (int64_t i = 0; i < {kh}; i++) {{",
            f"          const int64_t h = oh * {sh} - {ph} + i * {dh};",
            f"          for (int64_t j = 0; j < {kw}; j++) {{",
            f"            const int64_t w = ow * {sw} - {pw} + j * {dw};",
            f"            for (int64_t cc = 0; cc < {cg}; cc++) {{",
            f"              const {t}* restrict wt = wp + ((cc * {kh} + i) * {kw} + j) * {outs};",
            "              if (h < 0 || h >= H || w < 0 || w >= W) {",
            f"                for (int64_t o = 0; o < {outs}; o++) acc[o] = acc[o] + wt[o] * ({t})0;",
            "                continue;",
            "              }",
            f"              const {t}* restrict px = x0 + n * xn + h * xh + w * xw;",
            "              if (xc == 1) {",
            f"                for (int64_t o = 0; o < {outs}; o++) acc[o] = acc[o] + wt[o] * px[{channel}];",
            "              } else {",
            f"                for (int64_t o = 0; o < {outs}; o++) acc[o] = acc[o] + wt[o] * px[{channel} * xc];",
            "              }",
            "            }", "          }", "        }"]
    bias = "b0[o * bs]" if call.bias else f"({t})0"
    work = f"N * {outs} * OH * OW * {cg * kh * kw}"
    # A tap in the padding adds its weight times 0, as eager's zero-padded copy does (inf * 0 is NaN).
    return [
        f"  {t}* restrict wp = ({t}*){scratch};",
        f"  {t}* restrict bp = wp + {cg * kh * kw * outs};",
        f"  for (int64_t k = 0; k < {cg * kh * kw}; k++) {{",
        f"    const int64_t cc = k / {kh * kw}, i = k / {kw} % {kh}, j = k % {kw};",
        f"    for (int64_t o = 0; o < {outs}; o++) wp[k * {outs} + o] = w0[o * ws0 + cc * ws1 + i * ws2 + j * ws3];",
        "  }",
        f"  for (int64_t o = 0; o < {outs}; o++) bp[o] = {bias};",
        f"  #pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if({work} >= {PARALLEL_MIN_ELEMENTS * 8})",
        "  for (int64_t no = 0; no < N * OH; no++) {",
        "    const int64_t n = no / OH, oh = no % OH;",
        f"    {t} acc[{outs}];",
        "    for (int64_t ow = 0; ow < OW; ow++) {",
        f"      for (int64_t o = 0; o < {outs}; o++) acc[o] = ({t})0;",
        "      {",
        *taps,
        "      }",
        f"      {t}* restrict out = o0 + n * on + oh * ohs + ow * ows;",
        "      if (oc == 1) {",
        f"        for (int64_t o = 0; o < {outs}; o++) out[o] = acc[o] + bp[o];",
        "      } else {",
        f"        for (int64_t o = 0; o < {outs}; o++) out[o * oc] = acc[o] + bp[o];",
        "      }",
        "    }",
        "  }"]
