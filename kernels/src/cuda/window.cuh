// ================================================================= windows
// reduce_window and select_and_scatter (CPU: cpu/window.rs). Window
// geometry comes in `meta` (built by kernels::cuda::window::window_meta):
// meta[0] = rank, then 7 values per dimension d at meta + 1 + 7 * d:
// input size, windows, window size, stride, base dilation, window
// dilation, low padding. Positions are row-major, the last dim fastest.

#define WMETA 7

// The input index of element k of window o along dimension d, or -1 where
// it falls in padding or a base-dilation hole.
__device__ __forceinline__ long long window_tap(const long long* meta, int d, long long o,
                                                long long k) {
  const long long* p = meta + 1 + WMETA * d;
  long long pos = o * p[3] + k * p[5] - p[6];
  if (pos < 0 || pos % p[4] != 0) return -1;
  long long i = pos / p[4];
  return i < p[0] ? i : -1;
}

__device__ __forceinline__ long long window_volume(const long long* meta) {
  long long v = 1;
  for (int d = 0; d < (int)meta[0]; ++d) v *= meta[1 + WMETA * d + 2];
  return v;
}

// The input position of element w (row-major in the window) of window i
// (row-major in the windows), or -1 in padding.
__device__ __forceinline__ long long window_element(const long long* meta, long long i,
                                                    long long w) {
  long long at = 0, stride = 1;
  for (int d = (int)meta[0] - 1; d >= 0; --d) {
    const long long* p = meta + 1 + WMETA * d;
    long long o = i % p[1];
    i /= p[1];
    long long k = w % p[2];
    w /= p[2];
    long long t = window_tap(meta, d, o, k);
    if (t < 0) return -1;
    at += t * stride;
    stride *= p[0];
  }
  return at;
}

// y[i] = the fold of window i's elements (init in padding) from *init, in
// window order, as the CPU kernel folds them.
template <typename T, typename R>
__device__ __forceinline__ void reduce_window_impl(const T* x, const T* init, T* y,
                                                   const long long* meta, long long n) {
  typedef typename Compute<T>::type C;
  R r;
  C start = ld(*init);
  long long vol = window_volume(meta);
  GRID_LOOP(i, n) {
    C acc = start;
    for (long long w = 0; w < vol; ++w) {
      long long at = window_element(meta, i, w);
      acc = r(acc, at < 0 ? start : ld(x[at]));
    }
    y[i] = St<T>::from(acc);
  }
}

// sel[i] = the input position window i selects: elements in window order,
// `cmp(chosen, next)` false moves to `next`, padding never chosen (-1 when
// the window is all padding).
template <typename T, typename Cmp>
__device__ __forceinline__ void select_window_impl(const T* x, long long* sel,
                                                   const long long* meta, long long n) {
  Cmp cmp;
  long long vol = window_volume(meta);
  GRID_LOOP(i, n) {
    long long chosen = -1;
    for (long long w = 0; w < vol; ++w) {
      long long at = window_element(meta, i, w);
      if (at < 0) continue;
      if (chosen < 0 || !cmp(ld(x[chosen]), ld(x[at]))) chosen = at;
    }
    sel[i] = chosen;
  }
}

// y[q] = *init folded with src[i] of every window i that selected q, in
// window-offset order (the CPU kernel's order): each thread owns one
// output position and finds the windows that contain it, so no atomics.
template <typename T, typename R>
__device__ __forceinline__ void scatter_selected_impl(const T* src, const long long* sel,
                                                      const T* init, T* y,
                                                      const long long* meta, long long n) {
  typedef typename Compute<T>::type C;
  R r;
  int rank = (int)meta[0];
  long long vol = window_volume(meta);
  GRID_LOOP(q, n) {
    C acc = ld(*init);
    for (long long w = 0; w < vol; ++w) {
      // The window whose element w is q, if any.
      long long rest_q = q, rest_w = w, win = 0, win_stride = 1;
      bool found = true;
      for (int d = rank - 1; d >= 0 && found; --d) {
        const long long* p = meta + 1 + WMETA * d;
        long long c = rest_q % p[0];
        rest_q /= p[0];
        long long k = rest_w % p[2];
        rest_w /= p[2];
        long long num = c * p[4] + p[6] - k * p[5];
        if (num < 0 || num % p[3] != 0 || num / p[3] >= p[1]) {
          found = false;
        } else {
          win += (num / p[3]) * win_stride;
          win_stride *= p[1];
        }
      }
      if (found && sel[win] == q) acc = r(acc, ld(src[win]));
    }
    y[q] = St<T>::from(acc);
  }
}
