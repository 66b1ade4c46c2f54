// ======================================================= gather / scatter
// stablehlo.gather and stablehlo.scatter (CPU: cpu/gather.rs). The walk of
// start indices and windows comes in `meta` (kernels::cuda::index::
// walk_meta), start indices are i64 (the runtime converts i32 first):
//   meta[0..7]  operand rank R, batch rank B, index vector stride, batch
//               points P, slices (gather result / scatter updates)
//               elements, operand elements, index elements;
//   then 4 per batch dim j: size, inner (product of the later batch
//               sizes), stride in the indices, stride in the slices;
//   then 7 per operand dim d: size, stride, source of the start (-1: 0,
//               k >= 0: index vector entry k, <= -2: batch position
//               -2 - source), window extent, gather clamp limit (-1: no
//               clamp), stride of the window dim in the slices (0: none),
//               product of the later extents.

#define IHDR 7
#define IBATCH 4
#define IDIM 7

__device__ __forceinline__ const long long* index_dim(const long long* m, int d) {
  return m + IHDR + IBATCH * m[1] + IDIM * d;
}

// The (unclamped) start along the operand dim `p` of the batch point whose
// index vector begins at `ioff`. Batch position j of that point is
// (key / divisor) % size, the divisor being the slices stride of batch dim
// j (`by_slices`: key is a slices element) or its inner product (key is
// the point's row-major number).
// Not inlined: shared by every scatter and gather instantiation of the
// module, which keeps NVRTC's time for the module down.
__device__ __noinline__ long long index_start(const long long* m, const long long* idx,
                                                 const long long* p, long long ioff,
                                                 long long key, bool by_slices) {
  long long src = p[2];
  if (src == -1) return 0;
  if (src >= 0) return idx[ioff + src * m[2]];
  const long long* b = m + IHDR + IBATCH * (-2 - src);
  return (key / (by_slices ? b[3] : b[1])) % b[0];
}

// y[i] = the operand element gathered into result element i: one thread
// per result element, starts clamped into the operand as the CPU does.
template <typename W>
__device__ __forceinline__ void gather_impl(const W* x, const long long* idx, W* y,
                                            const long long* m, long long n) {
  int rank = (int)m[0], batch = (int)m[1];
  GRID_LOOP(i, n) {
    long long ioff = 0;
    for (int j = 0; j < batch; ++j) {
      const long long* b = m + IHDR + IBATCH * j;
      ioff += ((i / b[3]) % b[0]) * b[2];
    }
    long long at = 0;
    for (int d = 0; d < rank; ++d) {
      const long long* p = index_dim(m, d);
      long long s = index_start(m, idx, p, ioff, i, true);
      if (p[4] >= 0) s = s < 0 ? 0 : (s > p[4] ? p[4] : s);
      long long w = p[5] > 0 ? (i / p[5]) % p[3] : 0;
      at += (s + w) * p[1];
    }
    y[i] = x[at];
  }
}

// Update regions on the storage type, one rounding per update as the CPU
// kernel's `f(dst, src)` does.
template <typename R> struct Combine {
  template <typename T> __device__ __forceinline__ T operator()(T a, T b) const {
    R r;
    return St<T>::from(r(ld(a), ld(b)));
  }
};
struct Replace {
  template <typename T> __device__ __forceinline__ T operator()(T, T b) const { return b; }
};

// The point's index-vector offset and where its window begins in the
// updates.
__device__ __noinline__ void scatter_point(const long long* m, long long q, long long* ioff,
                                              long long* uoff) {
  *ioff = 0;
  *uoff = 0;
  for (int j = 0; j < (int)m[1]; ++j) {
    const long long* b = m + IHDR + IBATCH * j;
    long long pos = (q / b[1]) % b[0];
    *ioff += pos * b[2];
    *uoff += pos * b[3];
  }
}

// Scatter, one thread per element t of `y` (a copy of the input): it
// visits every batch point in row-major order (the CPU's order) and folds
// in the update that lands on t, if the point's window lies wholly inside
// the input (XLA drops a window that does not) and covers t. Any dimension
// numbers; a thread's work is P points.
template <typename T, typename F>
__device__ __forceinline__ void scatter_target_impl(const long long* idx, const T* upd, T* y,
                                                    const long long* m, long long n) {
  F f;
  int rank = (int)m[0];
  long long points = m[3];
  GRID_LOOP(t, n) {
    T acc = y[t];
    for (long long q = 0; q < points; ++q) {
      long long ioff, uoff;
      scatter_point(m, q, &ioff, &uoff);
      bool hit = true;
      for (int d = 0; d < rank && hit; ++d) {
        const long long* p = index_dim(m, d);
        long long s = index_start(m, idx, p, ioff, q, false);
        long long w = (t / p[1]) % p[0] - s;
        if (s < 0 || s > p[0] - p[3] || w < 0 || w >= p[3]) {
          hit = false;
        } else {
          uoff += w * p[5];
        }
      }
      if (hit) acc = f(acc, upd[uoff]);
    }
    y[t] = acc;
  }
}

// Scatter, one thread per window element w (n = window volume), in place
// on `y` (a copy of the input): it visits every batch point in row-major
// order and applies that point's update at offset w of its window. Only
// launched when every operand dim a start can move has window extent 1
// (kernels::cuda::index::ScatterStrategy): then element w of any window
// is at the same offset from a start that only moves in dims where w has
// coordinate 0, so two threads never touch one element and each thread
// applies its updates in the CPU's order.
template <typename T, typename F>
__device__ __forceinline__ void scatter_window_impl(const long long* idx, const T* upd, T* y,
                                                    const long long* m, long long n) {
  F f;
  int rank = (int)m[0];
  long long points = m[3];
  GRID_LOOP(w, n) {
    for (long long q = 0; q < points; ++q) {
      long long ioff, uoff;
      scatter_point(m, q, &ioff, &uoff);
      bool inside = true;
      long long at = 0;
      for (int d = 0; d < rank && inside; ++d) {
        const long long* p = index_dim(m, d);
        long long s = index_start(m, idx, p, ioff, q, false);
        if (s < 0 || s > p[0] - p[3]) {
          inside = false;
        } else {
          long long c = (w / p[6]) % p[3];
          at += (s + c) * p[1];
          uoff += c * p[5];
        }
      }
      if (inside) y[at] = f(y[at], upd[uoff]);
    }
  }
}
