// ============================================================ convolution
// im2col of stablehlo.convolution (CPU: cpu/convolution.rs, whose
// ConvGeometry builds `meta`; kernels::cuda::conv::im2col_meta documents
// its layout). The lhs is in the canonical layout [batch, spatial...,
// feature]; `col` is [group][batch of the chunk][output position][tap]
// [group input feature], row-major: per group one matrix whose row is the
// input an output position reads (0 on padding and dilation holes), which
// cuBLAS then multiplies by the group's kernel columns. Bits are copied
// as they are, so one kernel per element width.

#define CONV_HEADER 10
#define CONV_PER_DIM 4

template <typename W>
__device__ __forceinline__ void im2col_impl(const W* x, W* col, const long long* meta,
                                            long long n) {
  int rank = (int)meta[0];
  long long batch_groups = meta[2], chunk = meta[3], first = meta[4], positions = meta[5],
            window = meta[6], cin = meta[7], features = meta[8], out_batch = meta[9];
  GRID_LOOP(i, n) {
    long long r = i;
    long long c = r % cin;
    r /= cin;
    long long k = r % window;
    r /= window;
    long long p = r % positions;
    r /= positions;
    long long b = first + r % chunk;
    long long g = r / chunk;
    long long row = batch_groups ? g * out_batch + b : b;
    long long c0 = batch_groups ? 0 : g * cin;
    long long at = 0, stride = features;
    bool inside = true;
    for (int s = rank - 1; s >= 0; --s) {
      const long long* d = meta + CONV_HEADER + CONV_PER_DIM * s;
      long long o = p % d[1];
      p /= d[1];
      long long t = k % d[2];
      k /= d[2];
      long long tap = meta[d[3] + o * d[2] + t];
      if (tap < 0) {
        inside = false;
        break;
      }
      at += tap * stride;
      stride *= d[0];
    }
    col[i] = inside ? x[at + row * stride + c0 + c] : (W)0;
  }
}
