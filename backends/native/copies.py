"""clone as a C kernel: a strided copy into the output's layout, sizes and strides read at run time.

Eager's ``clone`` assigns ``out[...] = x`` in one dtype: a copy of every element's bits,
which the kernel does with an unsigned integer of the element's width (NaN payloads and
signed zeros kept, any dtype). Its iteration space is a fused group's (NOTE: [native
loops]: dims in the output's memory order, mergeable dims merged), so the inner loop is
unit-stride in the output; in a chain of kernels (NOTE: [native calls]) it spares the
Python call of the registry kernel between two C calls (attention's
``transpose(1, 2).contiguous()`` between its product and the projection).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..numpy.blocking import iteration_dims
from .kernel import PARALLEL_MIN_ELEMENTS

BITS = {1: "uint8_t", 2: "uint16_t", 4: "uint32_t", 8: "uint64_t"}


@dataclass
class CopyCall:
    """One clone's kernel: operands ``[x, out]``, its element type and the geometry words of a shape."""

    node: object
    operands: list
    words: list
    ctype: str


def copy_call(node, values: dict) -> CopyCall | None:
    """The kernel of a ``clone`` node at these values, or None to keep the registry kernel."""
    source = node.args[0] if len(node.args) == 1 else None
    out = values[node]
    if source is None or set(node.kwargs) - {"memory_format"} or not values[source].is_tensor:
        return None
    x = values[source]
    if x.dtype is not out.dtype or out.dtype.itemsize not in BITS or tuple(x.sizes) != tuple(out.sizes):
        return None
    shape, strides = tuple(out.sizes), [tuple(x.strides), tuple(out.strides)]
    dims = iteration_dims(shape, strides[1], [tuple(0 if shape[d] == 1 else s[d] for d in range(len(shape)))
                                             for s in strides])
    if not dims:
        words = [1, 1, 0, 0]
    else:
        sizes = [math.prod(shape[d] for d in merged) for merged in dims]
        words = [len(dims), *sizes, *(s[merged[-1]] for s in strides for merged in dims)]
    return CopyCall(node, [source, node], words, BITS[out.dtype.itemsize])


def copy_source(name: str, call: CopyCall) -> str:
    """The C function ``name(ndim, sizes, strides, threads, p0, p1)`` copying ``p0`` into ``p1``."""
    t = call.ctype
    return "\n".join([
        f"void {name}(int64_t ndim, const int64_t* sizes, const int64_t* strides, int threads, char* p0, char* p1) {{",
        "  const int64_t inner = sizes[ndim - 1], s0 = strides[ndim - 1], s1 = strides[2 * ndim - 1];",
        "  int64_t outer = 1;",
        "  for (int64_t d = 0; d < ndim - 1; d++) outer *= sizes[d];",
        f"  #pragma omp parallel for schedule(static) num_threads(threads) if(outer * inner >= {PARALLEL_MIN_ELEMENTS})",
        "  for (int64_t task = 0; task < outer; task++) {",
        "    int64_t rest = task, off0 = 0, off1 = 0;",
        "    for (int64_t d = ndim - 2; d >= 0; d--) {",
        "      const int64_t at = rest % sizes[d];",
        "      rest /= sizes[d];",
        "      off0 += at * strides[d], off1 += at * strides[ndim + d];",
        "    }",
        f"    const {t}* restrict a = (const {t}*)p0 + off0;",
        f"    {t}* restrict b = ({t}*)p1 + off1;",
        "    if (s0 == 1 && s1 == 1) {",
        "      for (int64_t i = 0; i < inner; i++) b[i] = a[i];",
        "    } else {",
        "      for (int64_t i = 0; i < inner; i++) b[i * s1] = a[i * s0];",
        "    }",
        "  }",
        "}"])
