//! Tests only: the CUDA text of the gather / scatter / RNG kernels
//! (`index.cuh`, `rng.cuh`) compiled as host C++ with a small shim (one
//! thread, a grid of one: `GRID_LOOP` becomes a plain loop) and run on
//! cases whose expected bits come from the CPU kernels. This checks the
//! kernels' own source, not a Rust port of it; it cannot see races or
//! anything GPU-specific (NVRTC compiles the same text for sm_80/sm_90 in
//! CI). Skipped, saying why, when the machine has no `c++`.
//!
//! Cases are text, one tag per case:
//! - `G`, then the walk table, the operand's f32 bits, the i64 ids and the
//!   expected result bits;
//! - `S region window`, then the table, input bits, ids, update bits and
//!   the expected bits; `region` 0-4 is add, replace, multiply, maximum,
//!   minimum; `window` 1 also runs the per-window-element kernel;
//! - `R philox bytes blocks count key lo hi inner half full`, then the
//!   expected words.
//!
//! Arrays are a length and then the values, space separated.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;

/// What the kernels need from the prelude, for f32 and the unsigned
/// word types; the reducers are `templates.cuh`'s own.
const SHIM: &str = r#"
#include <cmath>
#include <cstdint>
#include <cstring>
#define __device__
#define __forceinline__ inline
#define __noinline__
#define GRID_LOOP(i, n) for (long long i = 0; i < (n); ++i)
typedef unsigned char pred_t;
inline float ld(float x) { return x; }
template <typename T> struct St;
template <> struct St<float> { static float from(float v) { return v; } };
template <typename T> struct Compute { typedef T type; };
template <typename T> struct Unsigned;
template <typename T> struct IntLimits;
inline float inf_of(float) { return INFINITY; }
inline float nan_of(float) { uint32_t b = 0x7fc00000u; float f; memcpy(&f, &b, 4); return f; }
template <typename C> bool is_nan(C x) { return x != x; }
template <typename C> C max_nan(C x, C y) { if (is_nan(x) || is_nan(y)) return nan_of(x); return x >= y ? x : y; }
template <typename C> C min_nan(C x, C y) { if (is_nan(x) || is_nan(y)) return nan_of(x); return x <= y ? x : y; }
"#;

const DRIVER: &str = r#"
#include <cstdio>
#include <type_traits>
#include <vector>
template <typename T> std::vector<T> rd(FILE* f) {
  long long n = 0;
  if (fscanf(f, "%lld", &n) != 1) return {};
  std::vector<T> v(n);
  for (auto& x : v) {
    if (std::is_signed<T>::value) { long long s = 0; if (fscanf(f, "%lld", &s) != 1) break; x = (T)s; }
    else { unsigned long long u = 0; if (fscanf(f, "%llu", &u) != 1) break; x = (T)u; }
  }
  return v;
}
static float fb(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }
static uint32_t bf(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }
template <typename F>
void sc(bool win, const long long* idx, const float* u, float* y, const long long* m, long long n, long long vol) {
  if (win) scatter_window_impl<float, F>(idx, u, y, m, vol);
  else scatter_target_impl<float, F>(idx, u, y, m, n);
}
template <typename W>
std::vector<unsigned long long> rng(int philox, long long blocks, long long count, unsigned long long key,
                                    unsigned long long lo, unsigned long long hi, long long inner,
                                    long long half, long long full) {
  std::vector<W> y(count + 1);
  if (philox) rng_philox_impl<W>(y.data(), count, key, lo, hi);
  else rng_threefry_impl<W>(y.data(), blocks, key, lo, inner, half, full);
  return std::vector<unsigned long long>(y.begin(), y.begin() + count);
}
int main(int argc, char** argv) {
  FILE* f = fopen(argv[1], "r");
  if (!f) return 2;
  char tag[4];
  int ok = 0, bad = 0;
  while (fscanf(f, "%3s", tag) == 1) {
    if (tag[0] == 'G') {
      auto m = rd<long long>(f); auto x = rd<uint32_t>(f); auto ids = rd<long long>(f); auto want = rd<uint32_t>(f);
      std::vector<uint32_t> y(want.size() + 1);
      gather_impl<unsigned int>(x.data(), ids.data(), y.data(), m.data(), (long long)want.size());
      bool same = true;
      for (size_t i = 0; i < want.size(); ++i) same &= y[i] == want[i];
      if (!same) printf("gather %d differs\n", ok + bad);
      same ? ++ok : ++bad;
    } else if (tag[0] == 'S') {
      int region = 0, win = 0;
      if (fscanf(f, "%d %d", &region, &win) != 2) return 2;
      auto m = rd<long long>(f); auto x = rd<uint32_t>(f); auto ids = rd<long long>(f); auto u = rd<uint32_t>(f); auto want = rd<uint32_t>(f);
      std::vector<float> y(x.size() + 1), uf(u.size() + 1);
      for (size_t i = 0; i < x.size(); ++i) y[i] = fb(x[i]);
      for (size_t i = 0; i < u.size(); ++i) uf[i] = fb(u[i]);
      long long vol = 1;
      for (int d = 0; d < (int)m[0]; ++d) vol *= m[IHDR + IBATCH * m[1] + IDIM * d + 3];
      for (int pass = 0; pass <= win; ++pass) {
        std::vector<float> yy = y;
        bool w = pass == 1;
        long long n = (long long)x.size();
        switch (region) {
          case 0: sc<Combine<FR_add> >(w, ids.data(), uf.data(), yy.data(), m.data(), n, vol); break;
          case 1: sc<Replace>(w, ids.data(), uf.data(), yy.data(), m.data(), n, vol); break;
          case 2: sc<Combine<FR_multiply> >(w, ids.data(), uf.data(), yy.data(), m.data(), n, vol); break;
          case 3: sc<Combine<FR_maximum> >(w, ids.data(), uf.data(), yy.data(), m.data(), n, vol); break;
          default: sc<Combine<FR_minimum> >(w, ids.data(), uf.data(), yy.data(), m.data(), n, vol); break;
        }
        bool same = true;
        for (size_t i = 0; i < want.size(); ++i) same &= bf(yy[i]) == want[i];
        if (!same) printf("scatter %d (region %d, window %d) differs\n", ok + bad, region, (int)w);
        same ? ++ok : ++bad;
      }
    } else {
      int philox = 0, bytes = 0;
      long long blocks, count, inner, half, full;
      unsigned long long key, lo, hi;
      if (fscanf(f, "%d %d %lld %lld %llu %llu %llu %lld %lld %lld", &philox, &bytes, &blocks, &count, &key,
                 &lo, &hi, &inner, &half, &full) != 10) return 2;
      auto want = rd<unsigned long long>(f);
      std::vector<unsigned long long> got;
      if (bytes == 1) got = rng<unsigned char>(philox, blocks, count, key, lo, hi, inner, half, full);
      else if (bytes == 2) got = rng<unsigned short>(philox, blocks, count, key, lo, hi, inner, half, full);
      else if (bytes == 4) got = rng<unsigned int>(philox, blocks, count, key, lo, hi, inner, half, full);
      else got = rng<unsigned long long>(philox, blocks, count, key, lo, hi, inner, half, full);
      bool same = got == want;
      if (!same) printf("rng %d (philox %d, %d bytes) differs\n", ok + bad, philox, bytes);
      same ? ++ok : ++bad;
    }
  }
  printf("%d ok %d differ\n", ok, bad);
  return bad != 0;
}
"#;

/// Append `v` as an array line.
pub(crate) fn array<T: std::fmt::Display>(out: &mut String, v: &[T]) {
    let _ = write!(out, "{}", v.len());
    for x in v {
        let _ = write!(out, " {x}");
    }
    out.push('\n');
}

/// The reducers of `templates.cuh` (from `#define REDUCER` to the last
/// `REDUCER(...)` line).
fn reducers() -> String {
    let t = super::TEMPLATES;
    let start = t
        .find("#define REDUCER")
        .expect("templates.cuh defines REDUCER");
    let body = &t[start..];
    let end = body
        .find("REDUCER(PR_or")
        .and_then(|i| body[i..].find('\n').map(|j| i + j))
        .expect("templates.cuh's last reducer");
    body[..end].to_string()
}

/// Run `cases` through the kernels' host build: its report (a line per
/// differing case, then `<n> ok <m> differ`), or why it could not run (no
/// host C++ compiler).
pub(crate) fn run(tag: &str, cases: &str) -> Result<String, String> {
    let dir: PathBuf =
        std::env::temp_dir().join(format!("meshrun-cuda-host-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let src = format!(
        "{SHIM}\n{}\n{}\n{}\n{DRIVER}",
        reducers(),
        super::index::SOURCE,
        super::rng::SOURCE
    );
    let (cpp, exe, data) = (dir.join("k.cpp"), dir.join("k"), dir.join("cases.txt"));
    std::fs::write(&cpp, src).map_err(|e| e.to_string())?;
    std::fs::write(&data, cases).map_err(|e| e.to_string())?;
    let built = Command::new("c++")
        .args(["-std=c++17", "-O1", "-w", "-o"])
        .arg(&exe)
        .arg(&cpp)
        .output()
        .map_err(|e| format!("no host C++ compiler (c++): {e}"))?;
    assert!(
        built.status.success(),
        "the kernels do not build as host C++:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let ran = Command::new(&exe)
        .arg(&data)
        .output()
        .map_err(|e| e.to_string())?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(String::from_utf8_lossy(&ran.stdout).into_owned())
}
