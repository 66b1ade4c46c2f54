//! The property tests of the vectorized functions: ≤ 2 ulp against an f64
//! reference on random bit patterns (every exponent, sign, NaN and
//! infinity), on dense sweeps of the ranges where ML values live, and on
//! the edges of every fast range; and bitwise the same result from every
//! instruction set this CPU has.

use meshrun_compiler::splitmix::SplitMix64;

use super::*;

/// Random bit patterns and uniform floats from a seeded SplitMix64.
struct Rng(SplitMix64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(SplitMix64::new(seed))
    }
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }
    fn bits(&mut self) -> f32 {
        f32::from_bits(self.next() as u32)
    }
    fn uniform(&mut self, lo: f32, hi: f32) -> f32 {
        let u = (self.next() >> 40) as f32 / (1u64 << 24) as f32;
        lo + (hi - lo) * u
    }
}

/// erf in f64 to ~1e-15: Taylor series below 3, Lentz's continued
/// fraction for erfc above (std has no stable erf).
fn erf64(x: f64) -> f64 {
    let a = x.abs();
    if a.is_nan() {
        return x;
    }
    let v = if a < 3.0 {
        let (mut term, mut sum, mut n) = (a, a, 0.0);
        while term.abs() > 1e-18 * sum.abs() {
            n += 1.0;
            term *= -a * a / n;
            sum += term / (2.0 * n + 1.0);
        }
        sum * 2.0 / std::f64::consts::PI.sqrt()
    } else if a < 30.0 {
        // erfc a = e^{-a²}/√π · 1/(a + (1/2)/(a + 1/(a + (3/2)/(a + ...))))
        let mut f = a;
        for k in (1..200).rev() {
            f = a + (k as f64 / 2.0) / f;
        }
        1.0 - (-a * a).exp() / std::f64::consts::PI.sqrt() / f
    } else {
        1.0
    };
    v.copysign(x)
}

fn reference(func: Func, x: f32) -> f64 {
    let x = x as f64;
    match func {
        Func::Exp => x.exp(),
        Func::Log => x.ln(),
        Func::Tanh => x.tanh(),
        Func::Logistic => 1.0 / (1.0 + (-x).exp()),
        Func::Erf => erf64(x),
        Func::Sin => x.sin(),
        Func::Cos => x.cos(),
        Func::Sqrt => x.sqrt(),
        Func::Rsqrt => 1.0 / x.sqrt(),
    }
}

/// The spacing of f32 values at `v` (subnormal spacing below the normal
/// range).
fn ulp_at(v: f64) -> f64 {
    let a = v.abs();
    if a < f32::MIN_POSITIVE as f64 {
        return 2f64.powi(-149);
    }
    let e = ((a.to_bits() >> 52) as i32) - 1023;
    2f64.powi(e.min(127) - 23)
}

/// `got`'s error in f32 ulps of the exact value (0 when it is the exact
/// value rounded; infinite when only one is NaN or infinite).
fn ulps(got: f32, exact: f64) -> f64 {
    let rounded = exact as f32;
    if got.to_bits() == rounded.to_bits() || (got.is_nan() && exact.is_nan()) {
        return 0.0;
    }
    if !got.is_finite() || !rounded.is_finite() {
        return f64::INFINITY;
    }
    (got as f64 - exact).abs() / ulp_at(exact)
}

/// Inputs for `func`: random bits, dense ranges, fast-range edges.
fn inputs(func: Func) -> Vec<f32> {
    let mut rng = Rng::new(0x5EED ^ func as u64);
    let mut xs: Vec<f32> = (0..1 << 18).map(|_| rng.bits()).collect();
    let (lo, hi) = match func {
        Func::Log | Func::Sqrt | Func::Rsqrt => (0.0, 20.0),
        Func::Sin | Func::Cos => (-100.0, 100.0),
        _ => (-12.0, 12.0),
    };
    xs.extend((0..1 << 18).map(|_| rng.uniform(lo, hi)));
    xs.extend((0..1 << 16).map(|_| rng.uniform(-1.5, 1.5)));
    let edges = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.625,
        -0.625,
        0.999_999_94,
        4.0,
        4.5,
        44.0,
        87.0,
        -87.0,
        88.0,
        88.73,
        -103.9,
        -104.0,
        f32::MIN_POSITIVE,
        f32::MIN_POSITIVE * 0.5,
        f32::from_bits(1),
        f32::MAX,
        -f32::MAX,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        1_048_576.0,
        1_048_577.0,
        std::f32::consts::FRAC_PI_4,
        std::f32::consts::PI,
        // Close to a multiple of π/2 (a hard case for reduction).
        105_414_350.0,
        1e-30,
        -3e-8,
    ];
    xs.extend(edges);
    xs
}

#[test]
fn every_function_is_within_two_ulp_of_f64() {
    for func in Func::ALL {
        let xs = inputs(func);
        let mut got = vec![0.0f32; xs.len()];
        apply(func, &xs, &mut got);
        let (mut worst, mut at) = (0.0f64, 0.0f32);
        for (&x, &g) in xs.iter().zip(&got) {
            let e = ulps(g, reference(func, x));
            if e > worst {
                (worst, at) = (e, x);
            }
        }
        eprintln!("{}: worst {worst:.3} ulp at {at:e}", func.name());
        assert!(
            worst <= 2.0,
            "{}: {worst:.2} ulp at x = {at:e} (got {:e}, f64 {:e})",
            func.name(),
            got[xs
                .iter()
                .position(|v| v.to_bits() == at.to_bits())
                .unwrap_or(0)],
            reference(func, at)
        );
    }
}

#[test]
fn pow_is_within_two_ulp_of_f64() {
    let mut rng = Rng::new(99);
    let mut pairs: Vec<(f32, f32)> = (0..1 << 18).map(|_| (rng.bits(), rng.bits())).collect();
    pairs.extend((0..1 << 18).map(|_| (rng.uniform(0.0, 10.0), rng.uniform(-20.0, 20.0))));
    pairs.extend((0..1 << 16).map(|_| (rng.uniform(-4.0, 4.0), rng.uniform(-6.0, 6.0).round())));
    let specials = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        2.0,
        0.5,
        f32::INFINITY,
        -f32::INFINITY,
        f32::NAN,
        3.0,
    ];
    for &a in &specials {
        for &b in &specials {
            pairs.push((a, b));
        }
    }
    let (a, b): (Vec<f32>, Vec<f32>) = pairs.iter().copied().unzip();
    let mut got = vec![0.0f32; a.len()];
    pow(&a, &b, &mut got);
    for ((&x, &y), &g) in a.iter().zip(&b).zip(&got) {
        let e = ulps(g, (x as f64).powf(y as f64));
        assert!(e <= 2.0, "pow({x:e}, {y:e}) = {g:e}: {e:.2} ulp");
    }
    // Exact cases stay exact.
    let mut out = [0.0f32; 3];
    pow(&[2.0, 4.0, 3.0], &[10.0, 0.5, 2.0], &mut out);
    assert_eq!(out, [1024.0, 2.0, 9.0]);
}

#[test]
fn every_instruction_set_gives_the_same_bits() {
    let isas = Isa::available();
    // Lengths that leave partial blocks and partial vectors.
    for n in [1usize, 7, 255, 256, 1000] {
        let mut rng = Rng::new(n as u64);
        let xs: Vec<f32> = (0..n)
            .map(|i| {
                if i % 3 == 0 {
                    rng.bits()
                } else {
                    rng.uniform(-9.0, 9.0)
                }
            })
            .collect();
        for func in Func::ALL {
            let runs: Vec<Vec<u32>> = isas
                .iter()
                .map(|&isa| {
                    let mut out = vec![0.0f32; n];
                    apply_on(isa, func, &xs, &mut out);
                    out.iter().map(|v| v.to_bits()).collect()
                })
                .collect();
            for (isa, r) in isas.iter().zip(&runs) {
                assert!(r == &runs[0], "{} on {} differs", func.name(), isa.name());
            }
            for (i, &x) in xs.iter().enumerate() {
                assert_eq!(
                    one(func, x).to_bits(),
                    runs[0][i],
                    "{} one({x})",
                    func.name()
                );
            }
        }
        let ys: Vec<f32> = xs.iter().map(|v| v.abs().sqrt()).collect();
        let pows: Vec<Vec<u32>> = isas
            .iter()
            .map(|&isa| {
                let mut out = vec![0.0f32; n];
                pow_on(isa, &ys, &xs, &mut out);
                out.iter().map(|v| v.to_bits()).collect()
            })
            .collect();
        assert!(pows.iter().all(|p| p == &pows[0]), "pow differs by ISA");
    }
}

#[test]
fn arrays_keep_shape_and_layout() {
    let a = ndarray::Array2::from_shape_fn((3, 4), |(i, j)| (i * 4 + j) as f32 * 0.25);
    let t = a.t().to_owned().into_dyn(); // column-major storage
    let got = unary_array(UnaryOp::Exp, &a.t().into_owned().into_dyn()).unwrap();
    assert_eq!(got.shape(), &[4, 3]);
    for (g, x) in got.iter().zip(t.iter()) {
        assert!(ulps(*g, (*x as f64).exp()) <= 2.0);
    }
    assert!(unary_array(UnaryOp::Floor, &t).is_none());
}
