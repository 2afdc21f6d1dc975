"""The x86 vector instruction sets native loops are written for (AVX-512: 16 lanes, AVX2+FMA: 8) and the run-time choice.

NOTE: [vector ISA dispatch] A library holds each vector loop twice, once per instruction set,
as functions compiled for that set by a ``target`` attribute (whatever ``-march`` the library
was built with), next to the scalar loop. ``dl_isa_level()`` asks the CPU once per library
(``__builtin_cpu_supports``): 2 runs the AVX-512 functions, 1 the AVX2+FMA ones, 0 the scalar
loop. ``DYNAMO_LITE_NATIVE_ISA=avx2`` caps it at 1 (an AVX-512 machine runs what an AVX2-only
CPU runs). Everything x86 sits behind ``DL_VECTOR_LOOPS``, defined only for
x86 under gcc or clang and not when ``DL_NO_VECTOR_LOOPS`` is, so the same source builds (scalar)
on ARM or with another compiler; ``DL_NO_AVX512`` leaves the AVX-512 functions out.
"""
from __future__ import annotations

from dataclasses import dataclass

ISA_ENV = "DYNAMO_LITE_NATIVE_ISA"


@dataclass(frozen=True)
class VectorISA:
    """One instruction set's vocabulary for generated vector code.

    Attributes:
        name: the suffix of its functions (``v16``, ``v8``).
        level: what ``dl_isa_level()`` returns when it runs.
        lanes: float32 lanes per vector.
        vtype: the C vector type.
        prefix: the intrinsics' prefix.
        target: the ``target`` attribute of its functions.
        guard: the preprocessor condition under which its functions exist.
    """

    name: str
    level: int
    lanes: int
    vtype: str
    prefix: str
    target: str
    guard: str

    def op(self, operation: str) -> str:
        """The intrinsic ``prefix_operation`` (``op("add_ps")`` -> ``_mm512_add_ps``)."""
        return f"{self.prefix}_{operation}"

    def splat(self, value: str) -> str:
        return f"{self.prefix}_set1_ps({value})"

    def function(self, name: str) -> str:
        """A vector math function's name for this set (``function("expf")`` -> ``dl_v16_expf``)."""
        return f"dl_{self.name}_{name}"

    @property
    def attribute(self) -> str:
        return f'__attribute__((target("{self.target}")))'


AVX512 = VectorISA("v16", 2, 16, "__m512", "_mm512", "avx512f", "defined(DL_VECTOR_LOOPS) && !defined(DL_NO_AVX512)")
AVX2 = VectorISA("v8", 1, 8, "__m256", "_mm256", "avx2,fma", "defined(DL_VECTOR_LOOPS)")
VECTOR_ISAS = (AVX512, AVX2)  # the order a kernel tries them in

DISPATCH_SOURCE = f"""
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__)) \\
    && !defined(DL_NO_VECTOR_LOOPS)
#define DL_VECTOR_LOOPS 1
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>
/* NOTE: [vector ISA dispatch]: 2 AVX-512, 1 AVX2 with FMA, 0 neither (or capped by {ISA_ENV}) */
static int dl_isa_level(void) {{
  static volatile int level = -1;
  if (level < 0) {{
    int found = 0;
    const char* cap = getenv("{ISA_ENV}");
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) found = 1;
#ifndef DL_NO_AVX512
    if (found == 1 && __builtin_cpu_supports("avx512f")) found = 2;
#endif
    if (cap != NULL && strcmp(cap, "avx2") == 0 && found > 1) found = 1;
    level = found;
  }}
  return level;
}}
#endif
"""
