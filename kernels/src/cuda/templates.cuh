// meshrun CUDA kernels: the operations (functors) and the kernel bodies
// (templates). The `extern "C"` entry points that instantiate them are
// generated from Rust (kernels/src/cuda/generate.rs), one per operation
// and element type, named as in kernels/src/cuda/names.rs.
//
// Semantics follow the CPU kernels (meshrun_kernels::cpu) op for op; the
// comments name the CPU rule each one mirrors.

// ============================================================ element-wise

// Float unary ops, on the compute type (float or double).
#define FLOAT_UNARY(name, expr)                                                \
  struct F_##name {                                                            \
    template <typename C> __device__ __forceinline__ C operator()(C x) const { \
      return (expr);                                                           \
    }                                                                          \
  };
FLOAT_UNARY(negate, -x)
FLOAT_UNARY(exponential, m_exp(x))
FLOAT_UNARY(exponential_minus_one, m_expm1(x))
FLOAT_UNARY(log, m_log(x))
FLOAT_UNARY(log_plus_one, m_log1p(x))
FLOAT_UNARY(tanh, m_tanh(x))
FLOAT_UNARY(sine, m_sin(x))
FLOAT_UNARY(cosine, m_cos(x))
FLOAT_UNARY(tan, m_tan(x))
FLOAT_UNARY(logistic, (C)1 / ((C)1 + m_exp(-x)))
FLOAT_UNARY(sqrt, m_sqrt(x))
FLOAT_UNARY(rsqrt, (C)1 / m_sqrt(x))
FLOAT_UNARY(cbrt, m_cbrt(x))
FLOAT_UNARY(abs, m_abs(x))
// CPU `sign`: NaN and (signed) zero stay as they are.
FLOAT_UNARY(sign, (is_nan(x) || x == (C)0) ? x : (x > (C)0 ? (C)1 : (C)-1))
FLOAT_UNARY(floor, m_floor(x))
FLOAT_UNARY(ceil, m_ceil(x))
FLOAT_UNARY(round_nearest_even, m_rint(x))
FLOAT_UNARY(round_nearest_afz, m_round(x))
FLOAT_UNARY(square, x * x)
// CHLO's functions (CPU: cpu/special.rs). lgamma is +inf at the poles in
// both libraries; digamma and bessel_i1e have no CUDA kernel.
FLOAT_UNARY(erf, m_erf(x))
FLOAT_UNARY(erfc, m_erfc(x))
FLOAT_UNARY(erf_inv, m_erfinv(x))
FLOAT_UNARY(lgamma, m_lgamma(x))
FLOAT_UNARY(acos, m_acos(x))
FLOAT_UNARY(acosh, m_acosh(x))
FLOAT_UNARY(asin, m_asin(x))
FLOAT_UNARY(asinh, m_asinh(x))
FLOAT_UNARY(atan, m_atan(x))
FLOAT_UNARY(atanh, m_atanh(x))
FLOAT_UNARY(cosh, m_cosh(x))
FLOAT_UNARY(sinh, m_sinh(x))

// Integer unary ops: wrapping like the CPU's `wrapping_neg` / `wrapping_mul`.
#define INT_UNARY(name, expr)                                                  \
  struct I_##name {                                                            \
    template <typename C> __device__ __forceinline__ C operator()(C x) const { \
      typedef typename Unsigned<C>::type U;                                    \
      return (C)(expr);                                                        \
    }                                                                          \
  };
INT_UNARY(negate, (U)0 - (U)x)
INT_UNARY(abs, x < 0 ? (U)0 - (U)x : (U)x)
INT_UNARY(sign, (x > 0) - (x < 0))
INT_UNARY(square, (U)x * (U)x)
INT_UNARY(not, ~(U)x)
// CPU `int::unary_int`: bit counts of the stored bits.
INT_UNARY(popcnt, m_popc((U)x))
INT_UNARY(count_leading_zeros, m_clz((U)x))

struct P_not {
  __device__ __forceinline__ bool operator()(bool x) const { return !x; }
};

template <typename T, typename Op>
__device__ __forceinline__ void unary_impl(const T* x, T* y, long long n) {
  Op op;
  GRID_LOOP(i, n) { y[i] = St<T>::from(op(ld(x[i]))); }
}

// `stablehlo.reduce_precision` on the stored bits (CPU:
// cpu/reduce_precision.rs, XLA's rule): the mantissa rounded to nearest
// even by a bias and a truncation, then exponents above the format's
// largest to +-inf and at or below its smallest normal to +-0. A NaN stays
// itself; bf16 NaNs become the canonical quiet NaN with their sign unless
// the format holds all of f32 (XLA computes bf16 in f32).
template <typename T> struct FloatBits;
template <> struct FloatBits<double> { typedef unsigned long long U; enum { E = 11, M = 52 }; };
template <> struct FloatBits<float> { typedef unsigned int U; enum { E = 8, M = 23 }; };
template <> struct FloatBits<__half> { typedef unsigned short U; enum { E = 5, M = 10 }; };
template <> struct FloatBits<__nv_bfloat16> { typedef unsigned short U; enum { E = 8, M = 7 }; };

template <typename T>
__device__ __forceinline__ void reduce_precision_impl(const T* x, T* y, long long n,
                                                      int exponent_bits, int mantissa_bits) {
  typedef typename FloatBits<T>::U U;
  const int E = FloatBits<T>::E, M = FloatBits<T>::M;
  const U sign = (U)((U)1 << (E + M));
  const U exp_mask = (U)((((U)1 << E) - 1) << M);
  const bool bf16_nan_canonical = E == 8 && M == 7 && !(exponent_bits >= 8 && mantissa_bits >= 23);
  // Same size and alignment as T: the elements' bits.
  const U* xs = reinterpret_cast<const U*>(x);
  U* ys = reinterpret_cast<U*>(y);
  GRID_LOOP(i, n) {
    U v = xs[i];
    if ((U)(v & (U)~sign) > exp_mask) {
      ys[i] = bf16_nan_canonical ? (U)((v & sign) | 0x7fc0) : v;
      continue;
    }
    if (mantissa_bits < M) {
      const int drop = M - mantissa_bits;
      const U last = (U)((U)1 << drop);
      const U bias = (U)((last >> 1) - 1 + ((v >> drop) & 1));
      v = (U)((U)(v + bias) & (U)~(U)(last - 1));
    }
    if (exponent_bits < E) {
      const U b = (U)(((U)1 << (E - 1)) - 1);
      const U rb = (U)(((U)1 << (exponent_bits - 1)) - 1);
      const U e = (U)(v & exp_mask);
      if (e > (U)((U)(b + rb) << M)) {
        v = (U)((v & sign) | exp_mask);
      } else if (e <= (U)((U)(b - rb) << M)) {
        v = (U)(v & sign);
      }
    }
    ys[i] = v;
  }
}

// `is_finite`: x - x is 0 exactly for finite x (NaN for NaN and +-inf).
template <typename T>
__device__ __forceinline__ void is_finite_impl(const T* x, pred_t* y, long long n) {
  GRID_LOOP(i, n) {
    typename Compute<T>::type v = ld(x[i]);
    y[i] = (v - v == 0) ? 1 : 0;
  }
}

// Float binary ops.
#define FLOAT_BINARY(name, expr)                                                     \
  struct F_##name {                                                                  \
    template <typename C> __device__ __forceinline__ C operator()(C x, C y) const {  \
      return (expr);                                                                 \
    }                                                                                \
  };
FLOAT_BINARY(add, x + y)
FLOAT_BINARY(subtract, x - y)
FLOAT_BINARY(multiply, x * y)
FLOAT_BINARY(divide, x / y)
FLOAT_BINARY(remainder, m_fmod(x, y))
FLOAT_BINARY(maximum, max_nan(x, y))
FLOAT_BINARY(minimum, min_nan(x, y))
FLOAT_BINARY(power, m_pow(x, y))
FLOAT_BINARY(atan2, m_atan2(x, y))
FLOAT_BINARY(next_after, m_nextafter(x, y))

// Integer binary ops (CPU `binary_int`): wrapping add/sub/mul; x / 0 = -1,
// x % 0 = x; MIN / -1 = MIN, MIN % -1 = 0; pow by squaring, negative
// exponents as the CPU's `int_pow`.
#define INT_BINARY(name, body)                                                       \
  struct I_##name {                                                                  \
    template <typename C> __device__ __forceinline__ C operator()(C x, C y) const {  \
      typedef typename Unsigned<C>::type U;                                          \
      body                                                                           \
    }                                                                                \
  };
INT_BINARY(add, return (C)((U)x + (U)y);)
INT_BINARY(subtract, return (C)((U)x - (U)y);)
INT_BINARY(multiply, return (C)((U)x * (U)y);)
INT_BINARY(divide, if (y == 0) return (C)-1;
           if (x == IntLimits<C>::lo() && y == (C)-1) return x; return x / y;)
INT_BINARY(remainder, if (y == 0) return x;
           if (x == IntLimits<C>::lo() && y == (C)-1) return (C)0; return x % y;)
INT_BINARY(maximum, return x > y ? x : y;)
INT_BINARY(minimum, return x < y ? x : y;)
INT_BINARY(and, return (C)((U)x & (U)y);)
INT_BINARY(or, return (C)((U)x | (U)y);)
INT_BINARY(xor, return (C)((U)x ^ (U)y);)
// CPU `int::shift_*`: an amount outside [0, bits) (negative ones read as
// unsigned) gives 0, or the sign fill for the arithmetic shift.
INT_BINARY(shift_left, if ((U)y >= (U)(sizeof(C) * 8)) return (C)0; return (C)((U)x << (U)y);)
INT_BINARY(shift_right_logical,
           if ((U)y >= (U)(sizeof(C) * 8)) return (C)0; return (C)((U)x >> (U)y);)
INT_BINARY(shift_right_arithmetic,
           unsigned int n = (U)y >= (U)(sizeof(C) * 8) ? (unsigned int)(sizeof(C) * 8 - 1)
                                                       : (unsigned int)(U)y;
           return x >> n;)
INT_BINARY(power,
           if (y < 0) {
             if (x == 1) return (C)1;
             if (x == -1) return (y & 1) == 0 ? (C)1 : (C)-1;
             return (C)0;
           }
           U r = 1; U b = (U)x; C e = y;
           while (e > 0) {
             if (e & 1) r = r * b;
             b = b * b;
             e = e >> 1;
           }
           return (C)r;)

// i1 binary ops (CPU `binary_bool`).
struct P_and { __device__ __forceinline__ bool operator()(bool x, bool y) const { return x && y; } };
struct P_or { __device__ __forceinline__ bool operator()(bool x, bool y) const { return x || y; } };
struct P_xor { __device__ __forceinline__ bool operator()(bool x, bool y) const { return x != y; } };

template <typename T, typename Op>
__device__ __forceinline__ void binary_impl(const T* a, const T* b, T* y, long long n) {
  Op op;
  GRID_LOOP(i, n) { y[i] = St<T>::from(op(ld(a[i]), ld(b[i]))); }
}

// Comparisons: partial order (NaN compares false except NE), or
// TOTALORDER on floats (Rust's total_cmp of the f64 value).
#define COMPARISON(name, op)                                                         \
  struct Cmp_##name {                                                                \
    template <typename C> __device__ __forceinline__ bool operator()(C x, C y) const { \
      return x op y;                                                                 \
    }                                                                                \
  };
COMPARISON(eq, ==)
COMPARISON(ne, !=)
COMPARISON(lt, <)
COMPARISON(le, <=)
COMPARISON(gt, >)
COMPARISON(ge, >=)

template <typename Cmp> struct Total {
  template <typename C> __device__ __forceinline__ bool operator()(C x, C y) const {
    Cmp c;
    return c(total_key((double)x), total_key((double)y));
  }
};

template <typename T, typename Cmp>
__device__ __forceinline__ void compare_impl(const T* a, const T* b, pred_t* y, long long n) {
  Cmp c;
  GRID_LOOP(i, n) { y[i] = c(ld(a[i]), ld(b[i])) ? 1 : 0; }
}

// select(pred, on_true, on_false); pred is a scalar when p_all is 0.
template <typename W>
__device__ __forceinline__ void select_impl(const pred_t* p, long long p_all, const W* a,
                                            const W* b, W* y, long long n) {
  GRID_LOOP(i, n) { y[i] = p[p_all ? i : 0] ? a[i] : b[i]; }
}

// clamp(lo, x, hi) by comparisons, so NaN stays NaN (CPU `clamp_one`).
template <typename T>
__device__ __forceinline__ void clamp_impl(const T* lo, long long lo_all, const T* x,
                                           const T* hi, long long hi_all, T* y, long long n) {
  GRID_LOOP(i, n) {
    typename Compute<T>::type v = ld(x[i]);
    typename Compute<T>::type l = ld(lo[lo_all ? i : 0]);
    typename Compute<T>::type h = ld(hi[hi_all ? i : 0]);
    if (v < l) v = l;
    if (v > h) v = h;
    y[i] = St<T>::from(v);
  }
}

template <typename S, typename D>
__device__ __forceinline__ void convert_impl(const S* x, D* y, long long n) {
  GRID_LOOP(i, n) { y[i] = convert_one<D>(x[i]); }
}

// iota with a device offset: element i is offset + (i / inner) % dim_size.
template <typename T>
__device__ __forceinline__ void iota_impl(T* y, long long n, long long dim_size, long long inner,
                                          long long offset) {
  GRID_LOOP(i, n) { y[i] = FromScalar<T>::i(offset + (i / inner) % dim_size); }
}

// ================================================================ movement

template <typename W>
__device__ __forceinline__ void fill_impl(W* y, long long n, unsigned long long bits) {
  W v = (W)bits;
  GRID_LOOP(i, n) { y[i] = v; }
}

// Padding mask: elements whose index along the dimension is >= valid
// become `bits`.
template <typename W>
__device__ __forceinline__ void mask_impl(const W* x, W* y, long long n, long long dim_size,
                                          long long inner, long long valid,
                                          unsigned long long bits) {
  W v = (W)bits;
  GRID_LOOP(i, n) {
    long long k = (i / inner) % dim_size;
    y[i] = k >= valid ? v : x[i];
  }
}

// The one data-movement kernel: for every index of a box of `shape`,
// dst[dst_off + sum(idx * dst_strides)] = src[src_off + sum(idx * src_strides)].
// meta = [n, rank, src_off, dst_off, shape[rank], src_strides[rank],
// dst_strides[rank]] (StridedCopy::encode in the runtime). Transposes,
// broadcasts, slices, pads, concatenations, remaps and the collectives'
// block copies are all one or a few of these.
template <typename W>
__device__ __forceinline__ void strided_copy_impl(const W* src, W* dst, const long long* meta) {
  long long n = meta[0];
  int rank = (int)meta[1];
  long long src_off = meta[2];
  long long dst_off = meta[3];
  const long long* shape = meta + 4;
  const long long* ss = shape + rank;
  const long long* ds = ss + rank;
  GRID_LOOP(i, n) {
    long long rem = i, s = src_off, d = dst_off;
    for (int k = rank - 1; k >= 0; --k) {
      long long ext = shape[k];
      long long idx = rem % ext;
      rem /= ext;
      s += idx * ss[k];
      d += idx * ds[k];
    }
    dst[d] = src[s];
  }
}

// ============================================================== reductions

// Reducers: an identity and a combiner on the compute type.
#define REDUCER(name, ident, expr)                                                   \
  struct name {                                                                      \
    template <typename C> __device__ __forceinline__ C id(C z) const { return (ident); } \
    template <typename C> __device__ __forceinline__ C operator()(C x, C y) const {  \
      return (expr);                                                                 \
    }                                                                                \
  };
REDUCER(FR_add, (C)0, x + y)
REDUCER(FR_multiply, (C)1, x * y)
REDUCER(FR_maximum, -inf_of(z), max_nan(x, y))
REDUCER(FR_minimum, inf_of(z), min_nan(x, y))
REDUCER(IR_add, (C)0, (C)((typename Unsigned<C>::type)x + (typename Unsigned<C>::type)y))
REDUCER(IR_multiply, (C)1, (C)((typename Unsigned<C>::type)x * (typename Unsigned<C>::type)y))
REDUCER(IR_maximum, IntLimits<C>::lo(), x > y ? x : y)
REDUCER(IR_minimum, IntLimits<C>::hi(), x < y ? x : y)
REDUCER(IR_and, (C)-1, x & y)
REDUCER(IR_or, (C)0, x | y)
REDUCER(PR_and, true, x && y)
REDUCER(PR_or, false, x || y)

#define REDUCE_THREADS 256

// Row o of the outer x red matrix x, folded from *init: one block per row
// (grid-stride over rows), a strided pass per thread, then a tree in
// shared memory. Launched with REDUCE_THREADS threads per block.
template <typename T, typename R>
__device__ __forceinline__ void reduce_impl(const T* x, const T* init, T* y, long long outer,
                                            long long red) {
  typedef typename Compute<T>::type C;
  __shared__ C part[REDUCE_THREADS];
  R r;
  C start = ld(*init);
  for (long long o = blockIdx.x; o < outer; o += gridDim.x) {
    C acc = r.id(start);
    for (long long j = threadIdx.x; j < red; j += blockDim.x) {
      acc = r(acc, ld(x[o * red + j]));
    }
    part[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s) part[threadIdx.x] = r(part[threadIdx.x], part[threadIdx.x + s]);
      __syncthreads();
    }
    if (threadIdx.x == 0) y[o] = St<T>::from(r(start, part[0]));
    __syncthreads();
  }
}

// The collectives' reduction: y[i] = fold over k (in rank order) of
// ptrs[k][i], in the compute type, rounded once (CPU `reduce_range`).
template <typename T, typename R>
__device__ __forceinline__ void reduce_many_impl(const unsigned long long* ptrs, long long count,
                                                 T* y, long long n) {
  R r;
  GRID_LOOP(i, n) {
    typename Compute<T>::type acc = ld(((const T*)ptrs[0])[i]);
    for (long long k = 1; k < count; ++k) acc = r(acc, ld(((const T*)ptrs[k])[i]));
    y[i] = St<T>::from(acc);
  }
}
