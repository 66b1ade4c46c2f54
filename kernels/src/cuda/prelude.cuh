// meshrun CUDA kernels: the shared prelude of every kernel module.
//
// Compiled at run time by NVRTC (no host compiler, no standard headers):
// only cuda_fp16.h / cuda_bf16.h are included, from the include path the
// runtime passes. Element types follow meshrun's HostTensor: f64, f32,
// f16, bf16, i1 (one byte, 0 or 1), i32, i64. f16 and bf16 are computed
// in f32 and rounded once per result, like the CPU kernels.

#include <cuda_fp16.h>
#include <cuda_bf16.h>

typedef unsigned char pred_t;

// A grid-stride loop over `n` elements.
#define GRID_LOOP(i, n)                                                        \
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;        \
       i < (n); i += (long long)gridDim.x * blockDim.x)

// ---------------------------------------------------------------- load/store
// `ld` widens a stored element to its compute type; `St<T>::from` rounds a
// compute value back to storage.

__device__ __forceinline__ double ld(double x) { return x; }
__device__ __forceinline__ float ld(float x) { return x; }
__device__ __forceinline__ float ld(__half x) { return __half2float(x); }
__device__ __forceinline__ float ld(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ bool ld(pred_t x) { return x != 0; }
__device__ __forceinline__ int ld(int x) { return x; }
__device__ __forceinline__ long long ld(long long x) { return x; }

template <typename T> struct St;
template <> struct St<double> {
  static __device__ __forceinline__ double from(double v) { return v; }
};
template <> struct St<float> {
  static __device__ __forceinline__ float from(float v) { return v; }
};
template <> struct St<__half> {
  static __device__ __forceinline__ __half from(float v) { return __float2half_rn(v); }
};
template <> struct St<__nv_bfloat16> {
  static __device__ __forceinline__ __nv_bfloat16 from(float v) { return __float2bfloat16_rn(v); }
};
template <> struct St<pred_t> {
  static __device__ __forceinline__ pred_t from(bool v) { return v ? 1 : 0; }
};
template <> struct St<int> {
  static __device__ __forceinline__ int from(int v) { return v; }
};
template <> struct St<long long> {
  static __device__ __forceinline__ long long from(long long v) { return v; }
};

// The compute type of a storage type.
template <typename T> struct Compute { typedef T type; };
template <> struct Compute<__half> { typedef float type; };
template <> struct Compute<__nv_bfloat16> { typedef float type; };
template <> struct Compute<pred_t> { typedef bool type; };

// Unsigned twins for wrapping integer arithmetic.
template <typename T> struct Unsigned;
template <> struct Unsigned<int> { typedef unsigned int type; };
template <> struct Unsigned<long long> { typedef unsigned long long type; };

template <typename T> struct IntLimits;
template <> struct IntLimits<int> {
  static __device__ __forceinline__ int lo() { return (int)0x80000000u; }
  static __device__ __forceinline__ int hi() { return 0x7fffffff; }
};
template <> struct IntLimits<long long> {
  static __device__ __forceinline__ long long lo() { return (long long)0x8000000000000000ull; }
  static __device__ __forceinline__ long long hi() { return 0x7fffffffffffffffll; }
};

__device__ __forceinline__ float inf_of(float) { return __int_as_float(0x7f800000); }
__device__ __forceinline__ double inf_of(double) { return __longlong_as_double(0x7ff0000000000000ll); }
__device__ __forceinline__ float nan_of(float) { return __int_as_float(0x7fc00000); }
__device__ __forceinline__ double nan_of(double) { return __longlong_as_double(0x7ff8000000000000ll); }

// ------------------------------------------------------------- scalar rules
// StableHLO convert semantics, as `HostElem::from_scalar` on the CPU: every
// value goes through a "scalar" (double for floats, long long for integers,
// bool for i1) and then to the target type. Floats round to nearest even,
// float -> int truncates and saturates (NaN -> 0), int -> narrower int
// wraps, anything -> i1 is `!= 0`, i1 -> number is 0 or 1.

template <typename D> struct FromScalar;
template <> struct FromScalar<double> {
  static __device__ __forceinline__ double f(double v) { return v; }
  static __device__ __forceinline__ double i(long long v) { return (double)v; }
  static __device__ __forceinline__ double b(bool v) { return v ? 1.0 : 0.0; }
};
template <> struct FromScalar<float> {
  static __device__ __forceinline__ float f(double v) { return (float)v; }
  static __device__ __forceinline__ float i(long long v) { return (float)(double)v; }
  static __device__ __forceinline__ float b(bool v) { return v ? 1.0f : 0.0f; }
};
template <> struct FromScalar<__half> {
  static __device__ __forceinline__ __half f(double v) { return __double2half(v); }
  static __device__ __forceinline__ __half i(long long v) { return __double2half((double)v); }
  static __device__ __forceinline__ __half b(bool v) { return __float2half_rn(v ? 1.0f : 0.0f); }
};
template <> struct FromScalar<__nv_bfloat16> {
  static __device__ __forceinline__ __nv_bfloat16 f(double v) { return __double2bfloat16(v); }
  static __device__ __forceinline__ __nv_bfloat16 i(long long v) { return __double2bfloat16((double)v); }
  static __device__ __forceinline__ __nv_bfloat16 b(bool v) { return __float2bfloat16_rn(v ? 1.0f : 0.0f); }
};
template <> struct FromScalar<pred_t> {
  static __device__ __forceinline__ pred_t f(double v) { return v != 0.0 ? 1 : 0; }
  static __device__ __forceinline__ pred_t i(long long v) { return v != 0 ? 1 : 0; }
  static __device__ __forceinline__ pred_t b(bool v) { return v ? 1 : 0; }
};
template <> struct FromScalar<int> {
  static __device__ __forceinline__ int f(double v) {
    if (v != v) return 0;
    if (v >= 2147483647.0) return 0x7fffffff;
    if (v <= -2147483648.0) return (int)0x80000000u;
    return (int)v;
  }
  static __device__ __forceinline__ int i(long long v) {
    return (int)(unsigned int)(unsigned long long)v;
  }
  static __device__ __forceinline__ int b(bool v) { return v ? 1 : 0; }
};
template <> struct FromScalar<long long> {
  static __device__ __forceinline__ long long f(double v) {
    if (v != v) return 0;
    if (v >= 9223372036854775807.0) return 0x7fffffffffffffffll;
    if (v <= -9223372036854775808.0) return (long long)0x8000000000000000ull;
    return (long long)v;
  }
  static __device__ __forceinline__ long long i(long long v) { return v; }
  static __device__ __forceinline__ long long b(bool v) { return v ? 1 : 0; }
};

// A stored element as a scalar, handed to FromScalar<D>.
template <typename D> __device__ __forceinline__ D convert_one(double x) { return FromScalar<D>::f(x); }
template <typename D> __device__ __forceinline__ D convert_one(float x) { return FromScalar<D>::f((double)x); }
template <typename D> __device__ __forceinline__ D convert_one(__half x) { return FromScalar<D>::f((double)__half2float(x)); }
template <typename D> __device__ __forceinline__ D convert_one(__nv_bfloat16 x) { return FromScalar<D>::f((double)__bfloat162float(x)); }
template <typename D> __device__ __forceinline__ D convert_one(pred_t x) { return FromScalar<D>::b(x != 0); }
template <typename D> __device__ __forceinline__ D convert_one(int x) { return FromScalar<D>::i((long long)x); }
template <typename D> __device__ __forceinline__ D convert_one(long long x) { return FromScalar<D>::i(x); }

// ------------------------------------------------------------------ math
#define MATH1(name, f32fn, f64fn)                                               \
  __device__ __forceinline__ float name(float x) { return f32fn(x); }          \
  __device__ __forceinline__ double name(double x) { return f64fn(x); }
#define MATH2(name, f32fn, f64fn)                                               \
  __device__ __forceinline__ float name(float x, float y) { return f32fn(x, y); } \
  __device__ __forceinline__ double name(double x, double y) { return f64fn(x, y); }

MATH1(m_exp, expf, exp)
MATH1(m_expm1, expm1f, expm1)
MATH1(m_log, logf, log)
MATH1(m_log1p, log1pf, log1p)
MATH1(m_tanh, tanhf, tanh)
MATH1(m_sin, sinf, sin)
MATH1(m_cos, cosf, cos)
MATH1(m_tan, tanf, tan)
MATH1(m_sqrt, sqrtf, sqrt)
MATH1(m_cbrt, cbrtf, cbrt)
MATH1(m_abs, fabsf, fabs)
MATH1(m_floor, floorf, floor)
MATH1(m_ceil, ceilf, ceil)
MATH1(m_rint, rintf, rint)
MATH1(m_round, roundf, round)
MATH1(m_erf, erff, erf)
MATH1(m_erfc, erfcf, erfc)
MATH1(m_erfinv, erfinvf, erfinv)
MATH1(m_lgamma, lgammaf, lgamma)
MATH1(m_acos, acosf, acos)
MATH1(m_acosh, acoshf, acosh)
MATH1(m_asin, asinf, asin)
MATH1(m_asinh, asinhf, asinh)
MATH1(m_atan, atanf, atan)
MATH1(m_atanh, atanhf, atanh)
MATH1(m_cosh, coshf, cosh)
MATH1(m_sinh, sinhf, sinh)
MATH2(m_nextafter, nextafterf, nextafter)
MATH2(m_pow, powf, pow)
MATH2(m_atan2, atan2f, atan2)
MATH2(m_fmod, fmodf, fmod)

// Bit counts on the unsigned twin of an integer type.
__device__ __forceinline__ unsigned int m_popc(unsigned int x) { return __popc(x); }
__device__ __forceinline__ unsigned long long m_popc(unsigned long long x) { return __popcll(x); }
__device__ __forceinline__ unsigned int m_clz(unsigned int x) { return __clz(x); }
__device__ __forceinline__ unsigned long long m_clz(unsigned long long x) { return __clzll(x); }

template <typename C> __device__ __forceinline__ bool is_nan(C x) { return x != x; }

// StableHLO maximum / minimum on floats: NaN if either is NaN (the CPU
// kernels' `max_nan` / `min_nan`, ties resolved the same way).
template <typename C> __device__ __forceinline__ C max_nan(C x, C y) {
  if (is_nan(x) || is_nan(y)) return nan_of(x);
  return x >= y ? x : y;
}
template <typename C> __device__ __forceinline__ C min_nan(C x, C y) {
  if (is_nan(x) || is_nan(y)) return nan_of(x);
  return x <= y ? x : y;
}

// f64 total order key (Rust's f64::total_cmp).
__device__ __forceinline__ long long total_key(double x) {
  long long k = __double_as_longlong(x);
  return k ^ (long long)(((unsigned long long)(k >> 63)) >> 1);
}
