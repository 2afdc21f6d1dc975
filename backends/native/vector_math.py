"""AVX-512 versions of the float32 vmath functions: the same operations on 16 lanes, bit for bit.

NOTE: [vector loops] gcc vectorizes a fused group's scalar loop well, but cannot use the
instructions that make exp-based functions short: ``vscalefps`` multiplies by 2^k with
overflow to infinity and one rounding into the denormals (the scalar code adds k to the
exponent bits, which needs a range check or a denormal path), and a masked operation selects
a denominator without computing both sides. Written with intrinsics, sigmoid and tanh take
about a third fewer instructions, and a chain of them is bound by those instructions, not by
memory (pointwise_chain: docs/performance.md). Each function here is the scalar one of
vmath.py step for step (same constants, same fused multiply-adds, same order), so a kernel
gives the same bits whichever loop runs; tests/backends/test_native_math.py checks that over
its whole sweep. A NaN comes out NaN from both, but its sign and payload may differ.

The vector loops (kernel.py) exist only where the compiler targets AVX-512 (``-march=native``
on such a CPU) and ``DL_NO_VECTOR_LOOPS`` is not defined; elsewhere the scalar loop runs.
"""
from __future__ import annotations

from .vmath import EXP_NORMAL_LOW, EXP_Q, EXPM1_Q, LN2, TANH_CLAMP, horner


def _horner(var: str, coefficients: tuple) -> str:
    """vmath's Horner steps (same order) as _mm512_fmadd_ps calls."""
    return horner(var, coefficients, "_mm512_fmadd_ps", lambda c: f"_mm512_set1_ps({float(c)!r}f)")


VECTOR_MATH_SOURCE = f"""
#if defined(__AVX512F__) && !defined(DL_NO_VECTOR_LOOPS)
#define DL_VECTOR_LOOPS 1
#include <immintrin.h>
#define DL_V(c) _mm512_set1_ps(c)

static inline __m512 dl_v_neg(__m512 x) {{
  return _mm512_castsi512_ps(_mm512_xor_epi32(_mm512_castps_si512(x), _mm512_set1_epi32((int32_t)0x80000000)));
}}

/* the magnitude of m with the sign of s (copysignf): bits of m where the mask is set, else of s */
static inline __m512 dl_v_copysign(__m512 m, __m512 s) {{
  return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(_mm512_castps_si512(m), _mm512_castps_si512(s),
                                                       _mm512_set1_epi32(0x7FFFFFFF), 0xE4));
}}

/* np.maximum / np.minimum (dl_max_float, dl_min_float): a where a is strictly larger (smaller) or NaN, else b */
static inline __m512 dl_v_max(__m512 a, __m512 b) {{
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_GT_OQ) | _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q), b, a);
}}

static inline __m512 dl_v_min(__m512 a, __m512 b) {{
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_LT_OQ) | _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q), b, a);
}}

static inline __m512 dl_v_exp_reduced(__m512 r) {{
  return _mm512_fmadd_ps(r, _mm512_fmadd_ps(r, {_horner("r", EXP_Q)}, DL_V(1.0f)), DL_V(1.0f));
}}

/* dl_expf: the clamp keeps NaN (x is max's second operand); vscalefps rounds a denormal result once,
   as dl_scale2 does, and x beyond the threshold (or NaN) becomes x * inf. */
static inline __m512 dl_v_expf(__m512 x) {{
  const __m512 c = _mm512_max_ps(DL_V(-104.0f), x);
  const __m512 shifted = _mm512_fmadd_ps(c, DL_V(1.44269502f), DL_V(12582912.0f));
  const __m512 k = _mm512_sub_ps(shifted, DL_V(12582912.0f));
  const __m512 r = _mm512_fnmadd_ps(k, DL_V(1.428606765330187e-06f),
                                    _mm512_fnmadd_ps(k, DL_V(0.693145751953125f), c));
  const __m512 y = _mm512_scalef_ps(dl_v_exp_reduced(r), k);
  return _mm512_mask_mul_ps(y, _mm512_cmp_ps_mask(x, DL_V(0x1.62e42ep+6f), _CMP_NLE_UQ), x, DL_V(INFINITY));
}}

/* dl_sigmoidf: 1 / (1 + e), the denominator +inf where exp(-x) overflows (a NaN x stays NaN through
   vscalefps, so it needs no path of its own as in the scalar code) */
static inline __m512 dl_v_sigmoidf(__m512 x) {{
  const __m512 c = _mm512_min_ps(DL_V({-EXP_NORMAL_LOW!r}f), x);
  const __m512 shifted = _mm512_fmadd_ps(c, DL_V(-1.44269502f), DL_V(12582912.0f));
  const __m512 k = _mm512_sub_ps(shifted, DL_V(12582912.0f));
  const __m512 r = _mm512_fnmsub_ps(k, DL_V(1.428606765330187e-06f),
                                    _mm512_fmadd_ps(k, DL_V(0.693145751953125f), c));
  const __m512 e = _mm512_scalef_ps(dl_v_exp_reduced(r), k);
  const __m512 d = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, DL_V(-0x1.62e42ep+6f), _CMP_LT_OQ),
                                        _mm512_add_ps(DL_V(1.0f), e), DL_V(INFINITY));
  return _mm512_div_ps(DL_V(1.0f), d);
}}

/* dl_tanhf: e / (2 + e) for e = expm1(2a); 2^k by vscalefps (exactly the scalar's exponent bits) */
static inline __m512 dl_v_tanhf(__m512 x) {{
  const __m512 a = _mm512_min_ps(DL_V({TANH_CLAMP!r}f), _mm512_abs_ps(x));
  const __m512 shifted = _mm512_fmadd_ps(a, DL_V(2.88539004f), DL_V(12582912.0f));
  const __m512 k = _mm512_sub_ps(shifted, DL_V(12582912.0f));
  const __m512 r = _mm512_fnmadd_ps(k, DL_V({LN2!r}f), _mm512_add_ps(a, a));
  const __m512 two_k = _mm512_scalef_ps(DL_V(1.0f), k);
  const __m512 e = _mm512_fmadd_ps(two_k, _mm512_fmadd_ps(_mm512_mul_ps(r, r), {_horner("r", EXPM1_Q)}, r),
                                   _mm512_sub_ps(two_k, DL_V(1.0f)));
  return dl_v_copysign(_mm512_div_ps(e, _mm512_add_ps(DL_V(2.0f), e)), x);
}}
#endif
"""

# op name -> the vector function computing it (vmath.VMATH_FUNCTIONS' float32 functions but erfc)
VECTOR_FUNCTIONS = {"exp": "dl_v_expf", "tanh": "dl_v_tanhf", "sigmoid": "dl_v_sigmoidf"}
