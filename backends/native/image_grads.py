"""C kernels of the window gradients (max-pool, col2im, im2col), and the one lookup the lowering uses for every image op.

NOTE: [native window grads] ``max_pool2d_backward`` (max_pool2d's derivative: the
gradient of each window goes to its max pixel) runs as one pass per (image, channel)
plane: zero the plane, then per window in raster order find the pixel torch picks (the
first maximum, or the last NaN: ``v > best || v != v``, padding never read) and add the
window's gradient there. ``max_pool2d_with_indices_backward`` adds at the saved indices
instead. Adding to a zeroed plane in raster order is what eager's scatter does (one
``0 + g`` per pixel when windows cannot overlap, the same sequential sums when they can),
so the bits are eager's. The geometry (sizes and strides of input, gradient and result)
is read at run time like the forward image ops' (NOTE: [native image ops]); kernel size,
stride, padding and dilation are baked into the source.

``col2im`` (conv2d's input gradient is col2im of a matmul, see
autograd/derivatives/windows.py) adds each kernel tap's block of columns into the zeroed
image, taps in eager's order, so every pixel sums its contributions in eager's order.
``im2col`` (the columns of conv2d's weight gradient) copies each tap's pixels, 0 in the
padding: a copy, so its bits are eager's.
"""
from __future__ import annotations

from dataclasses import dataclass

from dynamo_lite.graph.node import Node

from . import image_ops
from .c_ops import C_TYPES
from .kernel import PARALLEL_MIN_ELEMENTS


@dataclass
class GradCall:
    """One max-pool gradient kernel: operands (gradient, input or indices, result), constants, geometry words.

    Attributes:
        words: N, C, H, W, the input's 4 strides, OH, OW, the gradient's 4 strides, the
            result's 4 strides (elements).
    """

    node: object
    operands: list
    constants: tuple
    words: list
    ctype: str
    cols_shape: None = None  # no scratch memory (the conv2d gather's field)
    product_in_python: bool = False  # the kernel writes the result


def _pairs(values) -> bool:
    return all(isinstance(v, tuple) and len(v) == 2 and all(type(i) is int for i in v) for v in values)


def _geometry(node):
    """(grad, input, indices or None, (kernel, stride, padding, dilation)) of a max-pool gradient node."""
    if node.kwargs:
        return None
    if node.target.name == "max_pool2d_backward" and len(node.args) == 7:
        grad, x, kernel, stride, padding, dilation, _ = node.args
        indices = None
    elif node.target.name == "max_pool2d_with_indices_backward" and len(node.args) == 8:
        grad, x, kernel, stride, padding, dilation, _, indices = node.args
        if not isinstance(indices, Node):
            return None
    else:
        return None
    pairs = (kernel, stride, padding, dilation)
    return (grad, x, indices, pairs) if _pairs(pairs) else None


def _col2im_call(node, values: dict) -> GradCall | None:
    """col2im(cols (N, C*KH*KW, L), output_size, kernel, dilation, padding, stride) into an (N, C, H, W) image."""
    if node.kwargs or len(node.args) != 6 or not isinstance(node.args[0], Node):
        return None
    cols, size, kernel, dilation, padding, stride = node.args
    return _columns_call(node, values, cols, node, size, (kernel, dilation, padding, stride))


def _im2col_call(node, values: dict) -> GradCall | None:
    """im2col(x (N, C, H, W), kernel, dilation, padding, stride) into columns (N, C*KH*KW, L)."""
    if node.kwargs or len(node.args) != 5 or not isinstance(node.args[0], Node) or not values[node.args[0]].is_tensor:
        return None
    x, kernel, dilation, padding, stride = node.args
    return _columns_call(node, values, x, x, tuple(values[x].sizes[2:]), (kernel, dilation, padding, stride))


def _columns_call(node, values: dict, operand, image, size, geometry) -> GradCall | None:
    """The call of im2col / col2im reading ``operand``; ``image`` is its (N, C, H, W) side.
    Words: the image's sizes and strides, the blocks (BH, BW), the columns' strides."""
    read, out, pixels = values[operand], values[node], values[image]
    if not (read.is_tensor and _pairs((size, *geometry))) or len(pixels.sizes) != 4:
        return None
    if out.dtype.numpy not in C_TYPES or read.dtype is not out.dtype:
        return None
    kernel, dilation, padding, stride = geometry
    blocks = [(s + 2 * p - d * (k - 1) - 1) // st + 1 for s, k, d, p, st in zip(size, kernel, dilation, padding, stride)]
    columns = out if image is operand else read
    words = [*pixels.sizes, *pixels.strides, *blocks, *columns.strides]
    return GradCall(node, [operand, node], (kernel, stride, padding, dilation), words, C_TYPES[out.dtype.numpy])


def _col2im_source(name: str, call: GradCall) -> str:
    t = call.ctype
    return _columns_source(name, call, f"{t}* o = ({t}*)p1 + n * xn + c * xc;", [
        "for (int64_t h = 0; h < H; h++)",
        f"  for (int64_t w = 0; w < W; w++) o[h * xh + w * xw] = ({t})0;"],
        f"const {t}* col = (const {t}*)p0", "if (h < 0 || h >= H) continue;",
        "if (w >= 0 && w < W) o[h * xh + w * xw] += col[(bh * BW + bw) * cl];")


def _im2col_source(name: str, call: GradCall) -> str:
    t = call.ctype
    return _columns_source(name, call, f"const {t}* x = (const {t}*)p0 + n * xn + c * xc;", [],
                           f"{t}* col = ({t}*)p1", "const int row_inside = h >= 0 && h < H;",
                           f"col[(bh * BW + bw) * cl] = (row_inside && w >= 0 && w < W) ? x[h * xh + w * xw] : ({t})0;")


def _columns_source(name: str, call: GradCall, plane: str, start: list, column: str, row: str, pixel: str) -> str:
    """Per (image, channel) plane, taps in window order, each tap's (bh, bw) block: ``pixel``
    moves one element between the plane (sizes H, W, strides xh, xw) and ``col``."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = call.constants
    return "\n".join([
        f"void {name}(const int64_t* g, int threads, char* p0, char* p1) {{",
        "  const int64_t N = g[0], C = g[1], H = g[2], W = g[3], xn = g[4], xc = g[5], xh = g[6], xw = g[7];",
        "  const int64_t BH = g[8], BW = g[9], cn = g[10], cr = g[11], cl = g[12];",
        f"  #pragma omp parallel for schedule(static) num_threads(threads) if(N * C * BH * BW * {kh * kw} >= {PARALLEL_MIN_ELEMENTS})",
        "  for (int64_t nc = 0; nc < N * C; nc++) {",
        "    const int64_t n = nc / C, c = nc % C;",
        f"    {plane}",
        *["    " + line for line in start],
        f"    for (int64_t i = 0; i < {kh}; i++) {{",
        f"      for (int64_t j = 0; j < {kw}; j++) {{",
        f"        {column} + n * cn + ((c * {kh} + i) * {kw} + j) * cr;",
        "        for (int64_t bh = 0; bh < BH; bh++) {",
        f"          const int64_t h = bh * {sh} - {ph} + i * {dh};",
        f"          {row}",
        "          for (int64_t bw = 0; bw < BW; bw++) {",
        f"            const int64_t w = bw * {sw} - {pw} + j * {dw};",
        f"            {pixel}",
        "          }", "        }", "      }", "    }", "  }", "}"])


def grad_call(node, values: dict) -> GradCall | None:
    """The kernel of a window gradient node (max-pool, col2im, im2col) at these values, or None to keep the registry kernel."""
    if node.target.name in COLUMN_CALLS:
        return COLUMN_CALLS[node.target.name][0](node, values)
    parsed = _geometry(node)
    if parsed is None:
        return None
    grad, x, indices, constants = parsed
    if not (isinstance(grad, Node) and isinstance(x, Node)):
        return None
    g, xv, out = values[grad], values[x], values[node]
    if not (g.is_tensor and xv.is_tensor) or len(xv.sizes) != 4 or out.dtype.numpy not in C_TYPES:
        return None
    if g.dtype is not out.dtype or (indices is None and xv.dtype is not out.dtype):
        return None
    operands = [grad, x if indices is None else indices, node]
    if indices is not None:
        iv = values[indices]
        if not iv.is_tensor or iv.dtype.numpy.name != "int64" or tuple(iv.sizes) != tuple(g.sizes):
            return None
        strides = list(iv.strides)
        if strides != list(g.strides):  # one stride set serves the gradient and the indices
            return None
    words = [*xv.sizes, *xv.strides, *g.sizes[2:], *g.strides, *out.strides]
    return GradCall(node, operands, constants, words, C_TYPES[out.dtype.numpy])


def grad_source(name: str, call: GradCall) -> str:
    """The C function ``name(const int64_t* g, int threads, char* p...)`` of ``call``."""
    if call.node.target.name in COLUMN_CALLS:
        return COLUMN_CALLS[call.node.target.name][1](name, call)
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = call.constants
    t = call.ctype
    from_input = call.node.target.name == "max_pool2d_backward"
    if from_input:  # find the window's pick: torch's rule, taps in the padding skipped
        pick = ["int64_t at = -1;", f"{t} best = 0;",
                f"for (int64_t i = 0; i < {kh}; i++) {{",
                f"  for (int64_t j = 0; j < {kw}; j++) {{",
                f"    const int64_t h = oh * {sh} - {ph} + i * {dh}, w = ow * {sw} - {pw} + j * {dw};",
                "    if (h < 0 || h >= H || w < 0 || w >= W) continue;",
                f"    const {t} v = x[h * xh + w * xw];",
                "    if (at < 0 || v > best || v != v) { best = v; at = h * oh_ + w * ow_; }",
                "  }", "}", "if (at >= 0) o[at] += gr[oh * gh + ow * gw];"]
        source = f"    const {t}* x = (const {t}*)p1 + n * xn + c * xc;"
    else:  # the saved index is row * W + col of the plane
        pick = ["const int64_t k = ix[oh * gh + ow * gw];", "o[(k / W) * oh_ + (k % W) * ow_] += gr[oh * gh + ow * gw];"]
        source = "    const int64_t* ix = (const int64_t*)p1 + n * gn + c * gc;"
    return "\n".join([
        f"void {name}(const int64_t* g, int threads, char* p0, char* p1, char* p2) {{",
        "  const int64_t N = g[0], C = g[1], H = g[2], W = g[3], xn = g[4], xc = g[5], xh = g[6], xw = g[7];",
        "  const int64_t OH = g[8], OW = g[9], gn = g[10], gc = g[11], gh = g[12], gw = g[13];",
        "  const int64_t on = g[14], oc = g[15], oh_ = g[16], ow_ = g[17];",
        "  (void)xn; (void)xc; (void)xh; (void)xw;",
        f"  #pragma omp parallel for schedule(static) num_threads(threads) if(N * C * H * W >= {PARALLEL_MIN_ELEMENTS})",
        "  for (int64_t nc = 0; nc < N * C; nc++) {",
        "    const int64_t n = nc / C, c = nc % C;",
        f"    const {t}* gr = (const {t}*)p0 + n * gn + c * gc;",
        source,
        f"    {t}* o = ({t}*)p2 + n * on + c * oc;",
        "    for (int64_t h = 0; h < H; h++)",
        f"      for (int64_t w = 0; w < W; w++) o[h * oh_ + w * ow_] = ({t})0;",
        "    for (int64_t oh = 0; oh < OH; oh++) {",
        "      for (int64_t ow = 0; ow < OW; ow++) {",
        *["        " + line for line in pick],
        "      }", "    }", "  }", "}"])


# conv2d's gradients as a gather / scatter of columns around BLAS products (autograd/derivatives/windows.py)
COLUMN_CALLS = {"col2im": (_col2im_call, _col2im_source), "im2col": (_im2col_call, _im2col_source)}
GRAD_OPS = ("max_pool2d_backward", "max_pool2d_with_indices_backward", *COLUMN_CALLS)
# Every image op the lowering emits as one C kernel: the forward ones of image_ops and these.
IMAGE_OPS = {**image_ops.PARSERS, **{name: grad_call for name in GRAD_OPS}}


def image_call(node, values: dict, prologue=None):
    """The kernel call of any image op node (None: keep the registry kernel); ``prologue``: a max_pool2d's
    fused input group (``image_ops.image_call``)."""
    return grad_call(node, values) if node.target.name in GRAD_OPS else image_ops.image_call(node, values, prologue)


def image_source(name: str, call) -> str:
    """The C source of any image op's kernel call."""
    return grad_source(name, call) if isinstance(call, GradCall) else image_ops.image_source(name, call)
