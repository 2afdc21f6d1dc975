"""C source of a swapped gemm's epilogue: ``out[m, n] = s[n, m] (+ addend[m, n])``, eager's row-major layout.

NOTE: [transposing epilogue] The swapped product ``s`` (N rows of M, NOTE: [gemm
orientation]) is written out transposed, with linear's bias or addmm's input added on the
way (the same single ``+`` per element as eager's ``out += b``, so the same bits). gcc
vectorizes the plain transposing loop poorly (element inserts), so float moves in 8 x 8
tiles transposed in AVX registers (unpack, shuffle, permute: data moves only, bits
untouched), eight rows of ``s`` read and eight rows of ``out`` written per tile; edges,
other types and machines without AVX take the scalar loop, TILE columns of ``out`` per
pass over its rows (the TILE rows of ``s`` they read stay in L1). For 64 x 1024 float32
with a bias, best of 3000 calls over buffers rotated through 48 pairs (caches cold as
after a gemm): the scalar loop 53 us, the AVX tiles 31 us, a memcpy of the same bytes 19
us (with hot caches all three are 15, 15 and 5 us); in perf samples of the mlp workload
the epilogue went from 2.9% to 0.85%.
"""
from __future__ import annotations

TILE = 32  # columns of out per pass of the scalar loop

# The 8 x 8 transpose of registers r0..r7 (rows of s) into c0..c7 (rows of out).
_TRANSPOSE_8X8 = """\
      const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
      const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
      const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
      const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
      const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
      const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
      const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
      const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
      __m256 c[8] = {_mm256_permute2f128_ps(u0, u4, 0x20), _mm256_permute2f128_ps(u1, u5, 0x20),
                     _mm256_permute2f128_ps(u2, u6, 0x20), _mm256_permute2f128_ps(u3, u7, 0x20),
                     _mm256_permute2f128_ps(u0, u4, 0x31), _mm256_permute2f128_ps(u1, u5, 0x31),
                     _mm256_permute2f128_ps(u2, u6, 0x31), _mm256_permute2f128_ps(u3, u7, 0x31)};"""


def transposed_source(name: str, t: str) -> str:
    """C ``static void name(M, N, s, out, ldc, addend, add_m, add_n)`` (NOTE: [transposing epilogue]);
    ``addend`` is NULL or read at ``addend[m * add_m + n * add_n]``."""
    lines = ["#ifdef __AVX__\n#include <immintrin.h>\n#endif" if t == "float" else "",
             f"static void {name}(int64_t M, int64_t N, const {t}* s, {t}* out, int64_t ldc, const {t}* addend,"
             " int64_t add_m, int64_t add_n) {",
             "  int64_t m0 = 0;"]
    if t == "float":
        lines += ["#ifdef __AVX__",
                  "  for (; m0 + 8 <= M; m0 += 8) {",
                  "    int64_t n0 = 0;",
                  "    for (; n0 + 8 <= N; n0 += 8) {",
                  "      __m256 r[8];",
                  "      for (int j = 0; j < 8; j++) r[j] = _mm256_loadu_ps(s + (n0 + j) * M + m0);",
                  _TRANSPOSE_8X8,
                  "      for (int i = 0; i < 8; i++) {",
                  "        if (addend) {",
                  "          const float* add = addend + (m0 + i) * add_m + n0 * add_n;",
                  "          float lane[8];",
                  "          for (int j = 0; j < 8; j++) lane[j] = add[j * add_n];",
                  "          c[i] = _mm256_add_ps(c[i], add_n == 1 ? _mm256_loadu_ps(add) : _mm256_loadu_ps(lane));",
                  "        }",
                  "        _mm256_storeu_ps(out + (m0 + i) * ldc + n0, c[i]);",
                  "      }",
                  "    }",
                  "    for (int64_t m = m0; m < m0 + 8; m++)",
                  "      for (int64_t n = n0; n < N; n++)",
                  "        out[m * ldc + n] = addend ? s[n * M + m] + addend[m * add_m + n * add_n] : s[n * M + m];",
                  "  }",
                  "#endif"]
    lines += [f"  for (int64_t n0 = 0; n0 < N; n0 += {TILE}) {{",
              f"    const int64_t n1 = n0 + {TILE} < N ? n0 + {TILE} : N;",
              "    for (int64_t m = m0; m < M; m++) {",
              f"      {t}* row = out + m * ldc;",
              "      if (addend) {",
              f"        const {t}* add = addend + m * add_m;",
              "        for (int64_t n = n0; n < n1; n++) row[n] = s[n * M + m] + add[n * add_n];",
              "      } else {",
              "        for (int64_t n = n0; n < n1; n++) row[n] = s[n * M + m];",
              "      }",
              "    }",
              "  }",
              "}"]
    return "\n".join(lines)
