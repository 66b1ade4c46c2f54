//! What the kernel benches compare against: the `gemm` crate called
//! directly, `matrixmultiply` (a candidate for the CPU product), and the
//! deterministic data they feed them.

/// `len` values in [-0.5, 0.5) from a multiplicative hash of the index.
pub fn data(len: usize, seed: u32) -> Vec<f32> {
    (0..len as u32)
        .map(|i| {
            ((i.wrapping_mul(2_654_435_761).wrapping_add(seed) >> 8) % 1000) as f32 / 1000.0 - 0.5
        })
        .collect()
}

/// `dst[M x N] = a[M x K] · b[K x N]`, row-major, one thread.
pub fn raw_gemm(m: usize, n: usize, k: usize, dst: &mut [f32], a: &[f32], b: &[f32]) {
    assert!(dst.len() == m * n && a.len() == m * k && b.len() == k * n);
    // SAFETY: row-major buffers of exactly these sizes (checked above);
    // dst does not alias the inputs.
    #[allow(unsafe_code)]
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            n as isize,
            false,
            a.as_ptr(),
            1,
            k as isize,
            b.as_ptr(),
            1,
            n as isize,
            0.0f32,
            1.0f32,
            false,
            false,
            false,
            gemm::Parallelism::None,
        )
    }
}

/// `dst[M x N] = a[M x K] · b[K x N]` with `dst` column-major (`a`, `b`
/// row-major), one thread. (Only the gemm bench uses it.)
#[allow(dead_code)]
pub fn raw_gemm_col_dst(m: usize, n: usize, k: usize, dst: &mut [f32], a: &[f32], b: &[f32]) {
    assert!(dst.len() == m * n && a.len() == m * k && b.len() == k * n);
    // SAFETY: as in `raw_gemm`, with `dst` addressed column-major (column
    // stride m, row stride 1) over the same m*n elements.
    #[allow(unsafe_code)]
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            m as isize,
            1,
            false,
            a.as_ptr(),
            1,
            k as isize,
            b.as_ptr(),
            1,
            n as isize,
            0.0f32,
            1.0f32,
            false,
            false,
            false,
            gemm::Parallelism::None,
        )
    }
}

/// `dst[M x N] = a[M x K] · b[K x N]`, row-major, one thread, by
/// `matrixmultiply` (the other pure-Rust packed GEMM; ndarray's). (Only
/// the gemm bench uses it.)
#[allow(dead_code)]
pub fn raw_matrixmultiply(m: usize, n: usize, k: usize, dst: &mut [f32], a: &[f32], b: &[f32]) {
    assert!(dst.len() == m * n && a.len() == m * k && b.len() == k * n);
    // SAFETY: row-major buffers of exactly these sizes (checked above), so
    // every (row stride, 1)-addressed element is in bounds; dst does not
    // alias the inputs. matrixmultiply runs on the calling thread (its
    // `threading` feature is off).
    #[allow(unsafe_code)]
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            k as isize,
            1,
            b.as_ptr(),
            n as isize,
            1,
            0.0,
            dst.as_mut_ptr(),
            n as isize,
            1,
        )
    }
}
