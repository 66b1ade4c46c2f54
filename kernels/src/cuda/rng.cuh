// ======================================================= rng_bit_generator
// XLA's Philox4x32-10 and Threefry2x32-20 expansions (CPU: cpu/rng.rs),
// counter-based: one thread per generator block, writing that block's
// elements where the CPU kernel puts them. Outputs are unsigned words of
// the element's width W (narrow types keep the low bits of a 32-bit word;
// signed and float outputs are the same bits). The launch parameters come
// from kernels::cuda::rng::rng_plan; the new state is computed on the
// host.

__device__ __forceinline__ void philox4x32_10(unsigned int x[4], unsigned long long key) {
  unsigned int k0 = (unsigned int)key, k1 = (unsigned int)(key >> 32);
  for (int r = 0; r < 10; ++r) {
    unsigned long long p0 = (unsigned long long)x[0] * 0xD2511F53ull;
    unsigned long long p1 = (unsigned long long)x[2] * 0xCD9E8D57ull;
    unsigned int y0 = (unsigned int)(p1 >> 32) ^ x[1] ^ k0;
    unsigned int y2 = (unsigned int)(p0 >> 32) ^ x[3] ^ k1;
    x[0] = y0;
    x[1] = (unsigned int)p1;
    x[2] = y2;
    x[3] = (unsigned int)p0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
}

__device__ __forceinline__ unsigned int rotl32(unsigned int x, unsigned int r) {
  return (x << r) | (x >> (32 - r));
}

__device__ __forceinline__ void threefry2x32_20(unsigned int x[2], unsigned long long key) {
  const unsigned int rot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  unsigned int ks[3];
  ks[0] = (unsigned int)key;
  ks[1] = (unsigned int)(key >> 32);
  ks[2] = 0x1BD11BDAu ^ ks[0] ^ ks[1];
  x[0] += ks[0];
  x[1] += ks[1];
  for (int g = 0; g < 5; ++g) {
    for (int r = 0; r < 4; ++r) {
      x[0] += x[1];
      x[1] = rotl32(x[1], rot[(g % 2) * 4 + r]) ^ x[0];
    }
    int inject = g + 1;
    x[0] += ks[inject % 3];
    x[1] += ks[(inject + 1) % 3] + (unsigned int)inject;
  }
}

// Philox: block b is counter (lo, hi) + b (128-bit); its four words are
// elements 4b..4b+3 (2b, 2b+1 as word pairs for 64-bit outputs), cut at n.
template <typename W>
__device__ __forceinline__ void rng_philox_impl(W* y, long long n, unsigned long long key,
                                                unsigned long long lo, unsigned long long hi) {
  const long long per = sizeof(W) == 8 ? 2 : 4;
  long long blocks = (n + per - 1) / per;
  GRID_LOOP(b, blocks) {
    unsigned long long clo = lo + (unsigned long long)b;
    unsigned long long chi = hi + (clo < lo ? 1ull : 0ull);
    unsigned int x[4] = {(unsigned int)clo, (unsigned int)(clo >> 32), (unsigned int)chi,
                         (unsigned int)(chi >> 32)};
    philox4x32_10(x, key);
    if (sizeof(W) == 8) {
      for (int k = 0; k < 2 && 2 * b + k < n; ++k) {
        y[2 * b + k] = (W)((unsigned long long)x[2 * k] | ((unsigned long long)x[2 * k + 1] << 32));
      }
    } else {
      for (int k = 0; k < 4 && 4 * b + k < n; ++k) y[4 * b + k] = (W)x[k];
    }
  }
}

// ThreeFry, 64-bit outputs: element b is both words of block counter + b.
// Narrower: block b numbers the output with one dimension halved (row-major
// over outer x half x inner); its word 0 goes to the even index 2h along
// that dimension, word 1 to 2h + 1 when it exists.
template <typename W>
__device__ __forceinline__ void rng_threefry_impl(W* y, long long blocks,
                                                  unsigned long long key,
                                                  unsigned long long counter, long long inner,
                                                  long long half, long long full) {
  GRID_LOOP(b, blocks) {
    unsigned long long c = counter + (unsigned long long)b;
    unsigned int x[2] = {(unsigned int)c, (unsigned int)(c >> 32)};
    threefry2x32_20(x, key);
    if (sizeof(W) == 8) {
      y[b] = (W)((unsigned long long)x[0] | ((unsigned long long)x[1] << 32));
    } else {
      long long in = b % inner;
      long long h = (b / inner) % half;
      long long out = b / (inner * half);
      long long at = (out * full + 2 * h) * inner + in;
      y[at] = (W)x[0];
      if (2 * h + 1 < full) y[at + inner] = (W)x[1];
    }
  }
}
