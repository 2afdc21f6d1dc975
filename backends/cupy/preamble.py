"""The device helpers every generated kernel starts with (no CUDA headers needed)."""
from __future__ import annotations

# NOTE: [one source, two compilers] The same source text is compiled by NVRTC (at run
# time through CuPy, and offline in the tests) and, with DL_HOST_EMULATION defined and
# a small shim header in front, by the host C++ compiler (backends/cupy/emulation.py).
# Only what differs between the two lives under ``#ifndef DL_HOST_EMULATION``: the
# float16 conversions (PTX) and dynamic shared memory. Everything else is plain C++17.
PREAMBLE = r"""#ifndef DL_PREAMBLE
#define DL_PREAMBLE
#ifndef DL_HOST_EMULATION
__device__ __forceinline__ float dl_h2f(unsigned short h) {
  float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f;
}
__device__ __forceinline__ unsigned short dl_f2h(float f) {
  unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h;
}
#define DL_SHARED(T, name) \
  extern __shared__ __align__(16) unsigned char dl_shared_bytes[]; \
  T* name = reinterpret_cast<T*>(dl_shared_bytes)
#endif
// max/min that propagate NaN, as torch's maximum/minimum/amax/relu do.
template <class T> __device__ __forceinline__ T dl_max(T a, T b) {
  return (a != a) ? a : ((b != b) ? b : (a > b ? a : b));
}
template <class T> __device__ __forceinline__ T dl_min(T a, T b) {
  return (a != a) ? a : ((b != b) ? b : (a < b ? a : b));
}
struct DlSum { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return a + b; } };
struct DlProd { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return a * b; } };
struct DlMax { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return dl_max(a, b); } };
struct DlMin { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return dl_min(a, b); } };
struct DlAnd { __device__ __forceinline__ bool operator()(bool a, bool b) const { return a && b; } };
struct DlOr { __device__ __forceinline__ bool operator()(bool a, bool b) const { return a || b; } };
// Tree reduction over the ``lanes`` threads of each row of the block (NOTE: [rows per
// block] in backends/cupy/rows.py) in shared memory; every lane gets its row's result.
// lanes is a power of two dividing blockDim.x, the same for the whole block; every
// thread of the block must call it (with lanes 1 there is nothing to combine).
template <class T, class Op>
__device__ __forceinline__ T dl_row_reduce(T value, unsigned char* shared_bytes, long long lanes, Op op) {
  if (lanes == 1) return value;
  T* shared = reinterpret_cast<T*>(shared_bytes);
  const unsigned t = threadIdx.x;
  const unsigned lane = t & (unsigned)(lanes - 1);
  __syncthreads();  // the previous reduction's readers are done with shared memory
  shared[t] = value;
  __syncthreads();
  for (unsigned half = (unsigned)lanes >> 1; half > 0; half >>= 1) {
    if (lane < half) shared[t] = op(shared[t], shared[t + half]);
    __syncthreads();
  }
  return shared[t - lane];
}
// floor division and Python-style remainder of floats, as NumPy computes them.
template <class T> __device__ __forceinline__ T dl_floor_divide(T a, T b) {
  if (b == T(0)) return a / b;
  T mod = fmod(a, b);
  T div = (a - mod) / b;
  if (mod != T(0) && ((b < T(0)) != (mod < T(0)))) div -= T(1);
  if (div == T(0)) return copysign(T(0), a / b);
  T floordiv = floor(div);
  if (div - floordiv > T(0.5)) floordiv += T(1);
  return floordiv;
}
template <class T> __device__ __forceinline__ T dl_remainder(T a, T b) {
  if (b == T(0)) return fmod(a, b);
  T mod = fmod(a, b);
  if (mod != T(0)) { if ((b < T(0)) != (mod < T(0))) mod += b; }
  else mod = copysign(T(0), b);
  return mod;
}
#endif
"""
