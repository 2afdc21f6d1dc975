"""Vectorizable float32 exp, sigmoid, tanh and erfc in C: branch-free polynomials gcc inlines into SIMD loops.

NOTE: [native vmath] A call to a library function inside a loop costs a call per vector
(glibc's libmvec) or per element (libm), and the values around it are spilled; these
functions are plain arithmetic, selects and integer bit operations, so gcc inlines and
vectorizes them with the rest of a fused group. They keep every special value exact:
NaN in gives NaN, ``exp`` overflows to +inf above 88.7228317 and underflows through the
denormals to +0 (a denormal result is rounded once), ``sigmoid`` is eager's 1 / (1 + exp(-x))
(+0 below -88.7228317, where that exp overflows), ``tanh`` is ±1 beyond 9.01 and keeps the sign
of zero. Accuracy, measured over every float32 against float64 (tests/backends/test_native_math.py
sweeps every 997th float32 with the bound in brackets): at most 0.98 ulp for exp [1.5], 2.57 for
tanh [3] (near 0.06: expm1's error, then 2 + e and the division each round), 2.48 for sigmoid [3]
(the exp's error, then 1 + e and the division), well inside torch's float32 tolerance. With FMA hardware (``-march=native``) the polynomials use fused
multiply-adds explicitly; without, each step rounds twice (every 97th float32: exp 1.18, tanh
2.57, sigmoid 2.31 ulp). ``erfc`` (exact gelu's) is ``exp(-a^2)`` times a rational, with ``a^2``
split exactly into two floats; its rational rounds at each float32 step, so it is looser: at most
6.93 ulp over every float32 [8]; NaN, ±inf (0 and 2) and underflow to 0 exact.
Float64 keeps libm / libmvec (``c_ops.MATH_FUNCTIONS``).

Cost matters as much as accuracy here: on this project's machines a fused loop of exp-based
functions is bound by the number of vector operations (about one 16-lane AVX-512 operation per
cycle), so each function is written to the fewest: exp's polynomial is evaluated down to its
final 1 (no separate expm1 + 1), the exponent goes into the bits of ``c / ln2 + 1.5 2^23``
shifted left (no integer subtraction), sigmoid folds its negation into the reduction, and tanh is
one formula for every argument (its expm1 needs no overflow or denormal path: the argument is
clamped to [0, 19]). A polynomial for small arguments would take tanh to 1.4 ulp, at a fifth more
time for a chain like pointwise_chain. AVX-512 loops use the same functions written with
intrinsics (vector_math.py, NOTE: [vector loops]).
"""
from __future__ import annotations

# exp(r) = 1 + r + r^2 q(r) on |r| <= ln2 / 2, q fitted for minimal relative error.
EXP_Q = (0.5, 0.16666576266288757, 0.041666362434625626, 0.008363175205886364, 0.0013942165533080697)
# erfc(a) = exp(-a^2) N(a) / D(a) for a in [0, ERFC_CLAMP]: a rational fit of erfc(a) exp(a^2) (relative error
# 6.2e-9 against math.erfc in exact arithmetic; float32 evaluation adds a few ulp).
ERFC_N = (1.000000006216414, 1.2416478607911956, 0.7350014547805213, 0.23084062985936482, 0.03313783986264125)
ERFC_D = (1.0, 2.3700276489777847, 2.409281315172392, 1.3317113349857357, 0.40917922126836276, 0.05873464671436037)
ERFC_CLAMP = 10.5  # erfc(10.5) < 2**-150: float32 0 from here on
# From here up exp's result is normal: k = round(c / ln2) >= -126 with r > 0 where k = -126.
EXP_NORMAL_LOW = -87.0
# expm1(r) = r + r^2 q(r) on |r| <= ln2 / 2, q fitted (iteratively reweighted least squares against
# mpmath) for minimal error relative to expm1(r), not to exp(r): tanh divides by expm1 near 0.
EXPM1_Q = (0.4999999701976776, 0.16666533052921295, 0.04166724532842636, 0.008367855101823807,
           0.0013882260536774993)
TANH_CLAMP = 9.5  # e / (2 + e) rounds to 1 for e = expm1(19), as tanh does from 9.01 on
LN2 = 0.6931471824645996  # ln 2 rounded to float32


def horner(var: str, coefficients: tuple, fma: str = "DL_FMA", constant=None) -> str:
    """``c0 + var * (c1 + var * (...))``: each step ``fma(var, inner, c)``, each coefficient ``constant(c)``
    (a float literal by default)."""
    constant = constant or _float
    expression = constant(coefficients[-1])
    for c in reversed(coefficients[:-1]):
        expression = f"{fma}({var}, {expression}, {constant(c)})"
    return expression


def _float(value: float) -> str:
    return f"{float(value)!r}f"


VMATH_SOURCE = f"""
#ifdef __FMA__
#define DL_FMA(a, b, c) fmaf(a, b, c)
#else
#define DL_FMA(a, b, c) ((a) * (b) + (c))
#endif
typedef union {{ float f; int32_t i; }} dl_bits32;

static inline float dl_from_bits(int32_t i) {{
  dl_bits32 b;
  b.i = i;
  return b.f;
}}

static inline int32_t dl_to_bits(float f) {{
  dl_bits32 b;
  b.f = f;
  return b.i;
}}

/* exp(r) for |r| <= ln2 / 2 (a little beyond is fine): 1 + r (1 + r q(r)), Horner from the highest term down
   to the final 1 (one rounding less than adding 1 to expm1's form, and one operation fewer). */
static inline float dl_exp_reduced(float r) {{
  return DL_FMA(r, DL_FMA(r, {horner("r", EXP_Q)}, 1.0f), 1.0f);
}}

/* c = k ln2 + r with k = round(c / ln2) (nearest even, through the bits of c / ln2 + 1.5 2^23: no
   float-to-int conversion, which NaN would make undefined), r in two steps (the high part of ln2 has 16
   bits, so k times it is exact). Returns r; *shifted = c / ln2 + 1.5 2^23, whose low bits hold k: its bits
   shifted left by 23 are k's exponent field (the constant's bits shift out), and k = bits - 0x4B400000. */
static inline float dl_exp_reduce(float c, float* shifted) {{
  *shifted = DL_FMA(c, 1.44269502f, 12582912.0f);
  const float k = *shifted - 12582912.0f;
  return DL_FMA(-k, 1.428606765330187e-06f, DL_FMA(-k, 0.693145751953125f, c));
}}

/* p 2^k for the k dl_exp_reduce left in shifted's bits, when the result is normal. */
static inline float dl_exp_scale_normal(float p, float shifted) {{
  return dl_from_bits(dl_to_bits(p) + (int32_t)((uint32_t)dl_to_bits(shifted) << 23));
}}

/* p 2^n for normal p >= 2^(-126 - lowest) (exp: p in [0.7, 1.5], lowest -125): n added to p's exponent bits;
   a result that may be denormal (n < lowest) gets 64 more and is scaled by 2^-64 after, so it is rounded once. */
static inline float dl_scale2(float p, int32_t n, int32_t lowest) {{
  const int low = n < lowest;
  const float y = dl_from_bits(dl_to_bits(p) + (int32_t)((uint32_t)(low ? n + 64 : n) << 23));
  return low ? y * 0x1p-64f : y;
}}

/* exp(x) = 2^k exp(r) for x <= 0x1.62e42ep+6 = 88.7228317 (the largest x with a finite exp) or -inf; not NaN. */
static inline float dl_expf_bounded(float x) {{
  const float c = x < -104.0f ? -104.0f : x;   /* exp(-104) rounds to +0 */
  float shifted;
  const float p = dl_exp_reduced(dl_exp_reduce(c, &shifted));
  return dl_scale2(p, dl_to_bits(shifted) - 0x4B400000, -125);
}}

/* exp(c) for c in [EXP_NORMAL_LOW, 0x1.62e42ep+6]: the result is normal, so no denormal path (other c: garbage). */
static inline float dl_expf_normal(float c) {{
  float shifted;
  const float p = dl_exp_reduced(dl_exp_reduce(c, &shifted));
  return dl_exp_scale_normal(p, shifted);
}}

/* exp(x): beyond the threshold, x * inf is +inf (or x's NaN). */
static inline float dl_expf(float x) {{
  const float y = dl_expf_bounded(x);
  return x <= 0x1.62e42ep+6f ? y : x * INFINITY;
}}

/* 1 / (1 + exp(-x)), eager's formula: exp(-x) overflows to +inf below -0x1.62e42ep+6 (1 + it too, giving +0)
   and keeps NaN; a term below 2^-126 only meets 1 + it, which rounds to 1, so x is clamped to -EXP_NORMAL_LOW instead
   of taking the denormal path. The negation is folded into the reduction: bit for bit the value of
   dl_expf_normal(-x), one operation fewer. */
static inline float dl_sigmoidf(float x) {{
  const float c = x > {_float(-EXP_NORMAL_LOW)} ? {_float(-EXP_NORMAL_LOW)} : x;
  const float shifted = DL_FMA(c, -1.44269502f, 12582912.0f);
  const float k = shifted - 12582912.0f;
  const float r = -DL_FMA(k, 1.428606765330187e-06f, DL_FMA(k, 0.693145751953125f, c));
  const float e = dl_exp_scale_normal(dl_exp_reduced(r), shifted);
  /* NaN takes -x * inf: its payload reaches the exponent bits of e through shifted, which may make e a number */
  return 1.0f / (x >= -0x1.62e42ep+6f ? 1.0f + e : -x * INFINITY);
}}

/* a * a - hi exactly, for hi = a * a rounded: one FMA, or without FMA hardware Dekker's product of the
   halves of a (its top 12 bits and the rest, each squared and multiplied exactly). */
static inline float dl_square_low(float a, float hi) {{
#ifdef __FMA__
  return fmaf(a, a, -hi);
#else
  const float top = dl_from_bits(dl_to_bits(a) & (int32_t)0xFFFFF000);
  const float rest = a - top;
  return ((top * top - hi) + 2.0f * top * rest) + rest * rest;
#endif
}}

/* erfc(z) = exp(-a^2) N(a) / D(a) for a = |z| (clamped to ERFC_CLAMP: float32 erfc is 0 there), 2 minus that
   for z < 0. a^2 = hi + lo exactly (with FMA), exp(-hi - lo) = 2^n p (1 - lo); the power of two is applied
   last, so a denormal result is rounded once (N / D is in [0.05, 1]). NaN in gives NaN. */
static inline float dl_erfcf(float z) {{
  const float az = fabsf(z);
  const float a = az < {_float(ERFC_CLAMP)} ? az : {_float(ERFC_CLAMP)};
  const float hi = a * a;
  const float lo = dl_square_low(a, hi);
  float shifted;
  const float p = dl_exp_reduced(dl_exp_reduce(-hi, &shifted));
  const float e = dl_scale2(DL_FMA(p, -lo, p) * ({horner("a", ERFC_N)} / {horner("a", ERFC_D)}),
                            dl_to_bits(shifted) - 0x4B400000, -120);
  const float result = z < 0.0f ? 2.0f - e : e;
  return z != z ? z : result;
}}

/* tanh(x) = e / (2 + e) for e = expm1(2a), a = |x| clamped to TANH_CLAMP (NaN kept), with x's sign:
   expm1(2a) = 2^k (r + r^2 q(r)) + (2^k - 1), k = round(2a / ln2) in [0, 28], so 2^k is normal and exact
   and no branch is needed (e / (2 + e) keeps the sign of zero and a denormal x). r takes one step with
   ln2 rounded to float: its error, k times 2e-9, matters only where k is large and tanh is near 1. */
static inline float dl_tanhf(float x) {{
  const float a = {_float(TANH_CLAMP)} < fabsf(x) ? {_float(TANH_CLAMP)} : fabsf(x);
  const float shifted = DL_FMA(a, 2.88539004f, 12582912.0f);
  const float k = shifted - 12582912.0f;
  const float r = DL_FMA(-k, {_float(LN2)}, a + a);
  const float two_k = dl_from_bits((int32_t)((uint32_t)dl_to_bits(shifted) << 23) + 0x3F800000);
  const float e = DL_FMA(two_k, DL_FMA(r * r, {horner("r", EXPM1_Q)}, r), two_k - 1.0f);
  return copysignf(e / (2.0f + e), x);
}}
"""

# op name -> the vmath function computing it for float32 (double keeps libm / libmvec).
VMATH_FUNCTIONS = {"exp": "dl_expf", "tanh": "dl_tanhf", "erfc": "dl_erfcf", "sigmoid": "dl_sigmoidf"}
