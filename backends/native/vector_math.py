"""AVX-512 and AVX2+FMA versions of the float32 vmath functions: the same operations on 16 or 8 lanes, bit for bit.

NOTE: [vector loops] gcc vectorizes a fused group's scalar loop well, but cannot use the
instructions that make exp-based functions short: ``vscalefps`` multiplies by 2^k with
overflow to infinity and one rounding into the denormals (the scalar code adds k to the
exponent bits, which needs a range check or a denormal path), and a masked operation selects
a denominator without computing both sides. Written with intrinsics, sigmoid and tanh take
about a third fewer instructions, and a chain of them is bound by those instructions, not by
memory (pointwise_chain: docs/performance.md). AVX2 has no ``vscalefps``: its functions add k
to the exponent bits with integer vector operations, as the scalar code does. Each function
here is the scalar one of vmath.py step for step (same constants, same fused multiply-adds,
same order), so a kernel gives the same bits whichever loop runs;
tests/backends/test_native_vector_loops.py checks that for both widths over a sweep of
float32. A NaN comes out NaN from all, but its sign and payload may differ.

Where the AVX2 loop's time goes (pointwise_chain, AMD EPYC with AVX-512, capped at AVX2): about
42 vector arithmetic operations per 8 elements (21 of them multiplies or FMAs, two divisions).
This core issues a 256-bit operation in the same slot as a 512-bit one, so the AVX2 loop takes
twice the AVX-512 loop's time per element (0.64 against 0.30 ns with the data in cache, 0.2 for
a plain add from memory): it is bound by those operations, not by memory, and a cheaper tanh or
sigmoid within the bounds of NOTE: [native vmath] was not found (a 4- or 8-entry table of 2^(j/N)
saves multiply-adds but costs as many shuffles and adds).

The vector functions exist only under ``DL_VECTOR_LOOPS`` (x86 with gcc or clang) and each is
compiled for its own instruction set by a ``target`` attribute; which one runs is chosen when
the library runs (NOTE: [vector ISA dispatch] in vector_isa.py).
"""
from __future__ import annotations

from .vector_isa import AVX2, AVX512, DISPATCH_SOURCE, VectorISA
from .vmath import EXP_NORMAL_LOW, EXP_Q, EXPM1_Q, LN2, TANH_CLAMP, horner


def _horner(isa: VectorISA, var: str, coefficients: tuple) -> str:
    """vmath's Horner steps (same order) as fused multiply-add intrinsics."""
    return horner(var, coefficients, isa.op("fmadd_ps"), lambda c: isa.splat(f"{float(c)!r}f"))


def _avx512_source(isa: VectorISA) -> str:
    v, a = isa.function, f"static inline {isa.attribute} __m512"
    return f"""
#if {isa.guard}
{a} {v("neg")}(__m512 x) {{
  return _mm512_castsi512_ps(_mm512_xor_epi32(_mm512_castps_si512(x), _mm512_set1_epi32((int32_t)0x80000000)));
}}

{a} {v("abs")}(__m512 x) {{ return _mm512_abs_ps(x); }}

/* the magnitude of m with the sign of s (copysignf): bits of m where the mask is set, else of s */
{a} {v("copysign")}(__m512 m, __m512 s) {{
  return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(_mm512_castps_si512(m), _mm512_castps_si512(s),
                                                       _mm512_set1_epi32(0x7FFFFFFF), 0xE4));
}}

/* np.maximum / np.minimum (dl_max_float, dl_min_float): a where a is strictly larger (smaller) or NaN, else b */
{a} {v("max")}(__m512 a, __m512 b) {{
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_GT_OQ) | _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q), b, a);
}}

{a} {v("min")}(__m512 a, __m512 b) {{
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_LT_OQ) | _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q), b, a);
}}

{a} {v("exp_reduced")}(__m512 r) {{
  return _mm512_fmadd_ps(r, _mm512_fmadd_ps(r, {_horner(isa, "r", EXP_Q)}, _mm512_set1_ps(1.0f)), _mm512_set1_ps(1.0f));
}}

/* dl_expf: the clamp keeps NaN (x is max's second operand); vscalefps rounds a denormal result once,
   as dl_scale2 does, and x beyond the threshold (or NaN) becomes x * inf. */
{a} {v("expf")}(__m512 x) {{
  const __m512 c = _mm512_max_ps(_mm512_set1_ps(-104.0f), x);
  const __m512 shifted = _mm512_fmadd_ps(c, _mm512_set1_ps(1.44269502f), _mm512_set1_ps(12582912.0f));
  const __m512 k = _mm512_sub_ps(shifted, _mm512_set1_ps(12582912.0f));
  const __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(1.428606765330187e-06f),
                                    _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693145751953125f), c));
  const __m512 y = _mm512_scalef_ps({v("exp_reduced")}(r), k);
  return _mm512_mask_mul_ps(y, _mm512_cmp_ps_mask(x, _mm512_set1_ps(0x1.62e42ep+6f), _CMP_NLE_UQ), x,
                            _mm512_set1_ps(INFINITY));
}}

/* dl_sigmoidf: 1 / (1 + e), the denominator +inf where exp(-x) overflows (a NaN x stays NaN through
   vscalefps, so it needs no path of its own as in the scalar code) */
{a} {v("sigmoidf")}(__m512 x) {{
  const __m512 c = _mm512_min_ps(_mm512_set1_ps({-EXP_NORMAL_LOW!r}f), x);
  const __m512 shifted = _mm512_fmadd_ps(c, _mm512_set1_ps(-1.44269502f), _mm512_set1_ps(12582912.0f));
  const __m512 k = _mm512_sub_ps(shifted, _mm512_set1_ps(12582912.0f));
  const __m512 r = _mm512_fnmsub_ps(k, _mm512_set1_ps(1.428606765330187e-06f),
                                    _mm512_fmadd_ps(k, _mm512_set1_ps(0.693145751953125f), c));
  const __m512 e = _mm512_scalef_ps({v("exp_reduced")}(r), k);
  const __m512 d = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(-0x1.62e42ep+6f), _CMP_LT_OQ),
                                        _mm512_add_ps(_mm512_set1_ps(1.0f), e), _mm512_set1_ps(INFINITY));
  return _mm512_div_ps(_mm512_set1_ps(1.0f), d);
}}

/* dl_tanhf: e / (2 + e) for e = expm1(2a); 2^k by vscalefps (exactly the scalar's exponent bits) */
{a} {v("tanhf")}(__m512 x) {{
  const __m512 a = _mm512_min_ps(_mm512_set1_ps({TANH_CLAMP!r}f), _mm512_abs_ps(x));
  const __m512 shifted = _mm512_fmadd_ps(a, _mm512_set1_ps(2.88539004f), _mm512_set1_ps(12582912.0f));
  const __m512 k = _mm512_sub_ps(shifted, _mm512_set1_ps(12582912.0f));
  const __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps({LN2!r}f), _mm512_add_ps(a, a));
  const __m512 two_k = _mm512_scalef_ps(_mm512_set1_ps(1.0f), k);
  const __m512 e = _mm512_fmadd_ps(two_k, _mm512_fmadd_ps(_mm512_mul_ps(r, r), {_horner(isa, "r", EXPM1_Q)}, r),
                                   _mm512_sub_ps(two_k, _mm512_set1_ps(1.0f)));
  return {v("copysign")}(_mm512_div_ps(e, _mm512_add_ps(_mm512_set1_ps(2.0f), e)), x);
}}
#endif
"""


def _avx2_source(isa: VectorISA) -> str:
    v, a = isa.function, f"static inline {isa.attribute} __m256"
    return f"""
#if {isa.guard}
{a} {v("neg")}(__m256 x) {{ return _mm256_xor_ps(x, _mm256_set1_ps(-0.0f)); }}

{a} {v("abs")}(__m256 x) {{ return _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF))); }}

/* np.maximum / np.minimum (dl_max_float, dl_min_float): a where a is strictly larger (smaller) or NaN, else b */
{a} {v("max")}(__m256 a, __m256 b) {{
  return _mm256_blendv_ps(b, a, _mm256_or_ps(_mm256_cmp_ps(a, b, _CMP_GT_OQ), _mm256_cmp_ps(a, a, _CMP_UNORD_Q)));
}}

{a} {v("min")}(__m256 a, __m256 b) {{
  return _mm256_blendv_ps(b, a, _mm256_or_ps(_mm256_cmp_ps(a, b, _CMP_LT_OQ), _mm256_cmp_ps(a, a, _CMP_UNORD_Q)));
}}

{a} {v("exp_reduced")}(__m256 r) {{
  return _mm256_fmadd_ps(r, _mm256_fmadd_ps(r, {_horner(isa, "r", EXP_Q)}, _mm256_set1_ps(1.0f)), _mm256_set1_ps(1.0f));
}}

/* p + (n << 23) in p's bits: p 2^n when the result is normal (dl_exp_scale_normal) */
{a} {v("add_exponent")}(__m256 p, __m256i n) {{
  return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(p), _mm256_slli_epi32(n, 23)));
}}

/* dl_expf: dl_expf_bounded's clamp and reduction, dl_scale2's exponent bits (64 more and a product by 2^-64
   below -125, so a denormal result is rounded once), then x * inf beyond the threshold or for NaN */
{a} {v("expf")}(__m256 x) {{
  const __m256 c = _mm256_max_ps(_mm256_set1_ps(-104.0f), x);
  const __m256 shifted = _mm256_fmadd_ps(c, _mm256_set1_ps(1.44269502f), _mm256_set1_ps(12582912.0f));
  const __m256 k = _mm256_sub_ps(shifted, _mm256_set1_ps(12582912.0f));
  const __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(1.428606765330187e-06f),
                                    _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693145751953125f), c));
  const __m256i n = _mm256_sub_epi32(_mm256_castps_si256(shifted), _mm256_set1_epi32(0x4B400000));
  const __m256i low = _mm256_cmpgt_epi32(_mm256_set1_epi32(-125), n);
  const __m256 y = {v("add_exponent")}({v("exp_reduced")}(r), _mm256_add_epi32(n, _mm256_and_si256(low, _mm256_set1_epi32(64))));
  const __m256 scaled = _mm256_blendv_ps(y, _mm256_mul_ps(y, _mm256_set1_ps(0x1p-64f)), _mm256_castsi256_ps(low));
  return _mm256_blendv_ps(scaled, _mm256_mul_ps(x, _mm256_set1_ps(INFINITY)),
                          _mm256_cmp_ps(x, _mm256_set1_ps(0x1.62e42ep+6f), _CMP_NLE_UQ));
}}

/* dl_sigmoidf: 1 / (1 + e), the denominator x * -inf (the scalar's -x * inf) below the overflow threshold and
   for NaN */
{a} {v("sigmoidf")}(__m256 x) {{
  const __m256 c = _mm256_min_ps(_mm256_set1_ps({-EXP_NORMAL_LOW!r}f), x);
  const __m256 shifted = _mm256_fmadd_ps(c, _mm256_set1_ps(-1.44269502f), _mm256_set1_ps(12582912.0f));
  const __m256 k = _mm256_sub_ps(shifted, _mm256_set1_ps(12582912.0f));
  const __m256 r = _mm256_fnmsub_ps(k, _mm256_set1_ps(1.428606765330187e-06f),
                                    _mm256_fmadd_ps(k, _mm256_set1_ps(0.693145751953125f), c));
  const __m256 e = {v("add_exponent")}({v("exp_reduced")}(r), _mm256_castps_si256(shifted));
  const __m256 d = _mm256_blendv_ps(_mm256_add_ps(_mm256_set1_ps(1.0f), e),
                                    _mm256_mul_ps(x, _mm256_set1_ps(-INFINITY)),
                                    _mm256_cmp_ps(x, _mm256_set1_ps(-0x1.62e42ep+6f), _CMP_NGE_UQ));
  return _mm256_div_ps(_mm256_set1_ps(1.0f), d);
}}

/* dl_tanhf: e / (2 + e) for e = expm1(2a); 2^k from shifted's bits as the scalar code makes it. e / (2 + e) is
   +0 or positive (or NaN), so x's sign bit is or-ed in (copysignf's result in one operation fewer). */
{a} {v("tanhf")}(__m256 x) {{
  const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  const __m256 a = _mm256_min_ps(_mm256_set1_ps({TANH_CLAMP!r}f), _mm256_and_ps(x, magnitude));
  const __m256 shifted = _mm256_fmadd_ps(a, _mm256_set1_ps(2.88539004f), _mm256_set1_ps(12582912.0f));
  const __m256 k = _mm256_sub_ps(shifted, _mm256_set1_ps(12582912.0f));
  const __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps({LN2!r}f), _mm256_add_ps(a, a));
  const __m256 two_k = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_slli_epi32(_mm256_castps_si256(shifted), 23),
                                                            _mm256_set1_epi32(0x3F800000)));
  const __m256 e = _mm256_fmadd_ps(two_k, _mm256_fmadd_ps(_mm256_mul_ps(r, r), {_horner(isa, "r", EXPM1_Q)}, r),
                                   _mm256_sub_ps(two_k, _mm256_set1_ps(1.0f)));
  return _mm256_or_ps(_mm256_div_ps(e, _mm256_add_ps(_mm256_set1_ps(2.0f), e)), _mm256_andnot_ps(magnitude, x));
}}
#endif
"""


VECTOR_MATH_SOURCE = DISPATCH_SOURCE + _avx512_source(AVX512) + _avx2_source(AVX2)

# op name -> the vector function computing it, by base name (VectorISA.function gives each set's)
VECTOR_FUNCTIONS = {"exp": "expf", "tanh": "tanhf", "sigmoid": "sigmoidf"}
