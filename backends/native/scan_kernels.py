"""C kernels for the nodes a scan body's backward holds besides fused groups and products: zeros, copies, column sums.

NOTE: [scan body kernels] The gradient of ``chunk`` is a zero tensor per chunk with the chunk's
gradient copied into its slice, summed; a bias's gradient is a sum over the batch dim. The
numpy backend runs those nodes as NumPy calls, which would keep a scan's body out of its C
loop (NOTE: [native scan loops]), so a scan body lowers them too: ``zeros`` as a memset of
its contiguous memory, ``copy_`` of equal sizes and dtypes as a strided copy (rank up to
``MAX_RANK``), ``sum`` over dim 0 of a matrix with unit-stride rows as rows added in order
(NumPy's order for that reduction: each row added to the running row, element by element).
Geometry words are read per shape, so one source serves every size.
"""
from __future__ import annotations

from dynamo_lite.graph.node import Node

from .c_ops import C_TYPES

MAX_RANK = 4


def _contiguous(value) -> bool:
    expected = 1
    for size, stride in zip(reversed(value.sizes), reversed(value.strides)):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def _zeros_words(node, values):
    value = values[node]
    if not value.is_tensor or not _contiguous(value):
        return None
    return [value.numel * value.dtype.itemsize]


def _zeros_source(name: str, node, values) -> str:
    return (f"void {name}(const int64_t* g, int threads, char* p0) {{\n"
            "  (void)threads;\n  memset(p0, 0, (size_t)g[0]);\n}")


def _copy_words(node, values):
    if len(node.args) != 2 or node.kwargs or not all(isinstance(a, Node) for a in node.args):
        return None
    dst, src, out = values[node.args[0]], values[node.args[1]], values[node]
    if (not src.is_tensor or src.dtype is not dst.dtype or tuple(src.sizes) != tuple(dst.sizes)
            or len(dst.sizes) > MAX_RANK or dst.root.kind not in ("buffer", "fresh")
            or out.root is not dst.root or out.offset != dst.offset):
        return None
    sizes = list(dst.sizes) or [1]
    return [len(sizes), *sizes, *(dst.strides or [0]), *(src.strides or [0])]


def _copy_source(name: str, node, values) -> str:
    t = C_TYPES.get(values[node].dtype.numpy)
    return "\n".join([
        f"void {name}(const int64_t* g, int threads, char* p0, char* p1) {{",
        "  (void)threads;",
        "  const int64_t rank = g[0], *sizes = g + 1, *dst = g + 1 + rank, *src = g + 1 + 2 * rank;",
        "  const int64_t inner = sizes[rank - 1];",
        "  int64_t outer = 1;",
        "  for (int64_t d = 0; d < rank - 1; d++) outer *= sizes[d];",
        "  for (int64_t o = 0; o < outer; o++) {",
        "    int64_t rest = o, a = 0, b = 0;",
        "    for (int64_t d = rank - 2; d >= 0; d--) {",
        "      const int64_t at = rest % sizes[d];",
        "      rest /= sizes[d];",
        "      a += at * dst[d], b += at * src[d];",
        "    }",
        f"    {t}* to = ({t}*)p1 + a;",
        f"    const {t}* from = (const {t}*)p0 + b;",
        "    const int64_t ts = dst[rank - 1], fs = src[rank - 1];",
        "    for (int64_t i = 0; i < inner; i++) to[i * ts] = from[i * fs];",
        "  }",
        "}"])


def _sum_words(node, values):
    if len(node.args) != 1 or not isinstance(node.args[0], Node):
        return None
    dims, keepdim = node.kwargs.get("dim"), node.kwargs.get("keepdim", False)
    if set(node.kwargs) - {"dim", "keepdim"} or dims not in ((0,), 0, (-2,), -2):
        return None
    x, out = values[node.args[0]], values[node]
    if len(x.sizes) != 2 or x.dtype is not out.dtype or not _contiguous(out) or x.strides[1] != 1 or x.sizes[0] < 1:
        return None
    del keepdim  # the output is contiguous either way: (1, cols) or (cols,)
    return [x.sizes[0], x.sizes[1], x.strides[0]]


def _sum_source(name: str, node, values) -> str:
    t = C_TYPES.get(values[node].dtype.numpy)
    return "\n".join([
        f"void {name}(const int64_t* g, int threads, char* p0, char* p1) {{",
        "  (void)threads;",
        "  const int64_t rows = g[0], cols = g[1], ld = g[2];",
        f"  const {t}* x = (const {t}*)p0;",
        f"  {t}* out = ({t}*)p1;",
        "  for (int64_t j = 0; j < cols; j++) out[j] = x[j];",
        "  for (int64_t r = 1; r < rows; r++) {",
        f"    const {t}* row = x + r * ld;",
        "    for (int64_t j = 0; j < cols; j++) out[j] = out[j] + row[j];",
        "  }",
        "}"])


# op name -> (geometry words at some values or None, C source, operand nodes of the node)
KERNELS = {
    "zeros": (_zeros_words, _zeros_source, lambda node: [node]),
    "copy_": (_copy_words, _copy_source, lambda node: [node.args[1], node]),
    "sum": (_sum_words, _sum_source, lambda node: [node.args[0], node]),
}


def scan_node_source(node, values):
    """What ``node``'s kernel depends on at these values (its source), or None where it keeps NumPy code."""
    name = getattr(node.target, "name", None) if node.op == "call_function" else None
    entry = KERNELS.get(name)
    if entry is None or entry[0](node, values) is None or values[node].dtype.numpy not in C_TYPES:
        return None
    return entry[1]("k", node, values)


def emit_scan_node(calls, builder, node) -> bool:
    """Emit ``node`` as a C kernel call of ``calls`` (NOTE: [scan body kernels]); False to keep the NumPy code."""
    name = getattr(node.target, "name", None) if node.op == "call_function" else None
    entry = KERNELS.get(name)
    values = builder.values
    if entry is None or entry[0](node, values) is None:
        return False
    words, source, operands = entry
    if values[node].dtype.numpy not in C_TYPES:
        return False
    value = values[node]
    if value.root.kind == "fresh" and value.root is value:
        builder.allocate_fresh(value)
    text = f"/* {node.name} */\n"
    calls.add(builder, "image", lambda c_name: "#include <string.h>\n" + text + source(c_name, node, values),
              [node], operands(node), lambda shape: words(node, shape.values))
    if name == "copy_" and value.root.kind == "fresh":
        builder.emit(f"{builder.tensor_of(value.root)}._bump_version()")
    return True

