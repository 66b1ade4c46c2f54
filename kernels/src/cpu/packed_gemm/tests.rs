//! The packed kernel against a plain f64 product, over edge shapes and
//! strides, and the bit-for-bit invariances the lockstep executor relies
//! on (stacked rows, column slices, transposed problem, threads).

use ndarray::{s, Array2, ArrayView2, Axis};

use super::{PackedGemm, KC, MC, MR, NR};

/// The kernel, or `None` with a line on stderr on a CPU without AVX2+FMA
/// (every CI machine has them).
fn kernel() -> Option<PackedGemm> {
    let k = PackedGemm::detect();
    if k.is_none() {
        eprintln!("packed_gemm tests: this CPU has no AVX2+FMA; nothing to run");
    }
    k
}

fn random(rows: usize, cols: usize, seed: u64) -> Array2<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    Array2::from_shape_fn((rows, cols), |_| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    })
}

fn check(got: ArrayView2<'_, f32>, lhs: ArrayView2<'_, f32>, rhs: ArrayView2<'_, f32>) {
    let k = lhs.ncols();
    for ((i, j), &g) in got.indexed_iter() {
        let want: f64 = (0..k)
            .map(|p| lhs[(i, p)] as f64 * rhs[(p, j)] as f64)
            .sum();
        let scale: f64 = (0..k)
            .map(|p| (lhs[(i, p)] as f64 * rhs[(p, j)] as f64).abs())
            .sum();
        assert!(
            (g as f64 - want).abs()
                <= 4.0 * f32::EPSILON as f64 * scale.max(1e-30) * (k as f64).sqrt().max(1.0),
            "({i},{j}) of {:?}x{:?}: {g} vs {want}",
            lhs.dim(),
            rhs.dim()
        );
    }
}

#[test]
fn matches_a_plain_product_on_edge_shapes() {
    let Some(g) = kernel() else { return };
    let ms = [1, 2, MR - 1, MR, MR + 1, 13, MC - 1, MC + 5];
    let ns = [1, 3, NR - 1, NR, NR + 1, 40];
    let ks = [1, 7, KC - 1, KC, KC + 1, 2 * KC + 3];
    for (t, &m) in ms.iter().enumerate() {
        for &n in &ns {
            for &k in &ks {
                let (a, b) = (random(m, k, t as u64), random(k, n, 99));
                let mut d = Array2::from_elem((m, n), f32::NAN);
                g.run(d.view_mut(), a.view(), b.view());
                check(d.view(), a.view(), b.view());
            }
        }
    }
}

#[test]
fn any_strides_give_the_same_bits() {
    let Some(g) = kernel() else { return };
    let (m, k, n) = (37, 300, 45);
    let (a, b) = (random(m, k, 1), random(k, n, 2));
    let mut want = Array2::zeros((m, n));
    g.run(want.view_mut(), a.view(), b.view());
    check(want.view(), a.view(), b.view());
    // Transposed storage of each operand and of dst.
    let at = a.t().as_standard_layout().into_owned();
    let bt = b.t().as_standard_layout().into_owned();
    let mut dt = Array2::zeros((n, m));
    g.run(dt.view_mut().reversed_axes(), at.t(), bt.t());
    assert_eq!(dt.t(), want, "column-major operands and dst");
    // Reversed and strided views.
    let a2 = a.slice(s![..;-1, ..]).to_owned();
    let mut d2 = Array2::zeros((2 * m, n));
    g.run(
        d2.slice_mut(s![..;-2, ..]),
        a2.slice(s![..;-1, ..]),
        b.view(),
    );
    assert_eq!(d2.slice(s![..;-2, ..]), want.view());
    // k = 0: zeros.
    let mut z = Array2::from_elem((3, 4), 7.0f32);
    g.run(
        z.view_mut(),
        Array2::zeros((3, 0)).view(),
        Array2::zeros((0, 4)).view(),
    );
    assert!(z.iter().all(|&v| v == 0.0));
}

#[test]
fn stacked_rows_column_slices_and_threads_give_the_same_bits() {
    let Some(g) = kernel() else { return };
    let (devices, rows, k, n) = (8, 64, 600, 200);
    let a = random(devices * rows, k, 3);
    let b = random(k, n, 4);
    let mut whole = Array2::zeros((devices * rows, n));
    g.run(whole.view_mut(), a.view(), b.view());
    for (d, block) in a.axis_chunks_iter(Axis(0), rows).enumerate() {
        let mut part = Array2::zeros((rows, n));
        g.run(part.view_mut(), block, b.view());
        assert_eq!(
            part,
            whole.slice(s![d * rows..(d + 1) * rows, ..]),
            "rows of device {d}"
        );
    }
    let mut cols = Array2::zeros((devices * rows, 37));
    g.run(cols.view_mut(), a.view(), b.slice(s![.., 50..87]));
    assert_eq!(cols, whole.slice(s![.., 50..87]));
    for threads in [2, 3] {
        let mut t = Array2::zeros((devices * rows, n));
        g.run_threads(t.view_mut(), a.view(), b.view(), threads);
        assert_eq!(t, whole, "{threads} threads");
        let mut narrow = Array2::zeros((devices * rows, 9));
        g.run_threads(narrow.view_mut(), a.view(), b.slice(s![.., ..9]), threads);
        assert_eq!(
            narrow,
            whole.slice(s![.., ..9]),
            "{threads} threads, by rows"
        );
    }
}
