//! CUDA kernels of `rng_bit_generator` (`rng.cuh`): XLA's Philox and
//! ThreeFry expansions as the CPU kernel (`cpu/rng.rs`) computes them,
//! one thread per generator block, and the launch plan ([`rng_plan`]:
//! the kernel's scalars and the new state, computed on the host from the
//! few state words).
//!
//! None of this has run on a GPU (none is lent to this project): NVRTC
//! compiles the kernels in CI, and the tests below run the kernels'
//! arithmetic, ported line by line ([`rng_emulated`]), and `rng.cuh`
//! itself built as host C++ (`host_run`), against the CPU kernel for
//! every algorithm, width and many shapes and states.

use meshrun_compiler::ir::ops::rng_bit_generator::RngAlgorithm;

use super::generate::Entries;
use super::names::{width_type, WIDTHS};

/// The template source, included after `templates.cuh`.
pub(crate) const SOURCE: &str = include_str!("rng.cuh");

/// One launch of an RNG kernel and the state after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RngPlan {
    /// `rng_philox_b<w>` or `rng_threefry_b<w>`.
    pub kernel: String,
    /// Philox (its kernel's parameters) rather than ThreeFry.
    pub philox: bool,
    /// Threads: generator blocks.
    pub blocks: usize,
    /// Output elements.
    pub count: usize,
    pub key: u64,
    /// Philox: the 128-bit counter (low, high); ThreeFry: (counter, 0).
    pub counter: (u64, u64),
    /// ThreeFry below 64 bits: the output as `outer x full x inner` with
    /// the `full` dimension halved into `half` blocks (1, 1, 1 otherwise).
    pub inner: usize,
    pub half: usize,
    pub full: usize,
    /// The result state.
    pub state: Vec<u64>,
}

fn name(algorithm: RngAlgorithm, bytes: usize) -> Option<String> {
    width_type(bytes)?;
    Some(match algorithm {
        RngAlgorithm::ThreeFry => format!("rng_threefry_b{bytes}"),
        RngAlgorithm::Philox | RngAlgorithm::Default => format!("rng_philox_b{bytes}"),
    })
}

/// The plan for `shape`-many values of `bytes` bytes from `state`, with
/// the CPU kernel's state checks and messages.
pub fn rng_plan(
    algorithm: RngAlgorithm,
    state: &[u64],
    shape: &[usize],
    bytes: usize,
) -> Result<RngPlan, String> {
    let kernel = name(algorithm, bytes).ok_or_else(|| format!("{bytes}-byte random values"))?;
    let count: usize = shape.iter().product();
    let mut plan = RngPlan {
        kernel,
        philox: algorithm != RngAlgorithm::ThreeFry,
        blocks: 0,
        count,
        key: 0,
        counter: (0, 0),
        inner: 1,
        half: 1,
        full: 1,
        state: Vec::new(),
    };
    match algorithm {
        RngAlgorithm::ThreeFry => {
            let &[key, counter] = state else {
                return Err("THREE_FRY needs 2 state words".into());
            };
            plan.key = key;
            plan.counter = (counter, 0);
            if bytes == 8 {
                plan.blocks = count;
            } else if shape.is_empty() {
                plan.blocks = 1;
            } else {
                // The CPU's split: the first even dimension, else the
                // first of the largest.
                let split = shape.iter().position(|d| d % 2 == 0).unwrap_or_else(|| {
                    let mut best = 0;
                    for (i, &d) in shape.iter().enumerate() {
                        if d > shape[best] {
                            best = i;
                        }
                    }
                    best
                });
                plan.full = shape[split];
                plan.half = shape[split].div_ceil(2);
                plan.inner = shape[split + 1..].iter().product::<usize>();
                let outer: usize = shape[..split].iter().product();
                plan.blocks = outer * plan.half * plan.inner;
                // A zero-sized dimension elsewhere: no blocks; keep the
                // kernel's divisors non-zero.
                plan.inner = plan.inner.max(1);
                plan.half = plan.half.max(1);
            }
            plan.state = vec![key, counter.wrapping_add(plan.blocks as u64)];
        }
        RngAlgorithm::Philox | RngAlgorithm::Default => {
            let (key, lo, hi) = match *state {
                [key, lo, hi] => (key, lo, hi),
                // The CPU kernel's reading of a 2-word state.
                [key, lo] => (key, lo, key),
                _ => return Err("PHILOX needs 2 or 3 state words".into()),
            };
            let per = if bytes == 8 { 2 } else { 4 };
            plan.blocks = count.div_ceil(per);
            plan.key = key;
            plan.counter = (lo, hi);
            let (l, carry) = lo.overflowing_add(plan.blocks as u64);
            let h = hi.wrapping_add(u64::from(carry));
            plan.state = if state.len() == 3 {
                vec![key, l, h]
            } else {
                vec![key, l]
            };
        }
    }
    Ok(plan)
}

/// Every RNG kernel, for the `rng` module.
pub(crate) fn entries() -> Entries {
    let mut out = Entries::default();
    for w in WIDTHS {
        let Some(t) = width_type(w) else { continue };
        out.push(
            format!("rng_philox_b{w}"),
            &format!(
                "{t}* y, long long n, unsigned long long key, unsigned long long lo, unsigned long long hi"
            ),
            &format!("rng_philox_impl<{t}>(y, n, key, lo, hi);"),
        );
        out.push(
            format!("rng_threefry_b{w}"),
            &format!(
                "{t}* y, long long blocks, unsigned long long key, unsigned long long counter, long long inner, long long half, long long full"
            ),
            &format!("rng_threefry_impl<{t}>(y, blocks, key, counter, inner, half, full);"),
        );
    }
    out
}

fn philox4x32_10(x: &mut [u32; 4], key: u64) {
    let (mut k0, mut k1) = (key as u32, (key >> 32) as u32);
    for _ in 0..10 {
        let p0 = u64::from(x[0]) * 0xD251_1F53;
        let p1 = u64::from(x[2]) * 0xCD9E_8D57;
        let y0 = (p1 >> 32) as u32 ^ x[1] ^ k0;
        let y2 = (p0 >> 32) as u32 ^ x[3] ^ k1;
        *x = [y0, p1 as u32, y2, p0 as u32];
        k0 = k0.wrapping_add(0x9E37_79B9);
        k1 = k1.wrapping_add(0xBB67_AE85);
    }
}

fn threefry2x32_20(x: &mut [u32; 2], key: u64) {
    const ROT: [u32; 8] = [13, 15, 26, 6, 17, 29, 16, 24];
    let ks = [
        key as u32,
        (key >> 32) as u32,
        0x1BD1_1BDA ^ key as u32 ^ (key >> 32) as u32,
    ];
    x[0] = x[0].wrapping_add(ks[0]);
    x[1] = x[1].wrapping_add(ks[1]);
    for g in 0..5 {
        for r in 0..4 {
            x[0] = x[0].wrapping_add(x[1]);
            x[1] = x[1].rotate_left(ROT[(g % 2) * 4 + r]) ^ x[0];
        }
        let inject = g + 1;
        x[0] = x[0].wrapping_add(ks[inject % 3]);
        x[1] = x[1].wrapping_add(ks[(inject + 1) % 3].wrapping_add(inject as u32));
    }
}

/// The kernel of `plan` on the host, thread by thread, as the output's
/// `bytes`-byte words (low bits kept), for the tests.
pub fn rng_emulated(plan: &RngPlan, bytes: usize) -> Vec<u64> {
    let mask = if bytes == 8 {
        u64::MAX
    } else {
        (1u64 << (8 * bytes)) - 1
    };
    let mut y = vec![0u64; plan.count.max(1)];
    let n = plan.count;
    let (key, (lo, hi)) = (plan.key, plan.counter);
    for b in 0..plan.blocks {
        if plan.philox {
            let clo = lo.wrapping_add(b as u64);
            let chi = hi.wrapping_add(u64::from(clo < lo));
            let mut x = [
                clo as u32,
                (clo >> 32) as u32,
                chi as u32,
                (chi >> 32) as u32,
            ];
            philox4x32_10(&mut x, key);
            if bytes == 8 {
                for k in 0..2 {
                    if 2 * b + k < n {
                        y[2 * b + k] = u64::from(x[2 * k]) | u64::from(x[2 * k + 1]) << 32;
                    }
                }
            } else {
                for k in 0..4 {
                    if 4 * b + k < n {
                        y[4 * b + k] = u64::from(x[k]) & mask;
                    }
                }
            }
        } else {
            let c = lo.wrapping_add(b as u64);
            let mut x = [c as u32, (c >> 32) as u32];
            threefry2x32_20(&mut x, key);
            if bytes == 8 {
                y[b] = u64::from(x[0]) | u64::from(x[1]) << 32;
            } else {
                let (inner, half, full) = (plan.inner, plan.half, plan.full);
                let (i, h, o) = (b % inner, (b / inner) % half, b / (inner * half));
                let at = (o * full + 2 * h) * inner + i;
                y[at] = u64::from(x[0]) & mask;
                if 2 * h + 1 < full {
                    y[at + inner] = u64::from(x[1]) & mask;
                }
            }
        }
    }
    y.truncate(n);
    y
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::bitcast::to_le_bytes;
    use crate::cpu::rng::rng_bit_generator;
    use crate::HostTensor;
    use meshrun_compiler::ir::{ElemType, TensorType};

    /// The CPU kernel's bits of `elem` as words of its width, and its state.
    fn cpu(
        algorithm: RngAlgorithm,
        state: &[u64],
        shape: &[usize],
        elem: ElemType,
    ) -> (Vec<u64>, Vec<u64>) {
        let st = HostTensor::from_vec(&[state.len()], state.to_vec()).unwrap();
        let ty = TensorType::new(shape.iter().map(|&d| d as i64).collect::<Vec<_>>(), elem);
        let (next, bits) = rng_bit_generator(algorithm, &st, &ty).unwrap();
        let bytes = to_le_bytes(&bits).unwrap();
        let w = elem.byte_size();
        let words = bytes
            .chunks_exact(w)
            .map(|c| {
                let mut b = [0u8; 8];
                b[..w].copy_from_slice(c);
                u64::from_le_bytes(b)
            })
            .collect();
        let HostTensor::U64(s) = next else {
            panic!("state not ui64")
        };
        (words, s.iter().copied().collect())
    }

    #[test]
    fn kernels_match_the_cpu_kernel_for_every_algorithm_width_and_shape() {
        let shapes: [&[usize]; 12] = [
            &[],
            &[1],
            &[3],
            &[4],
            &[5, 3],
            &[3, 4],
            &[2, 3, 5],
            &[3, 5, 7],
            &[7, 1, 2],
            &[0, 3],
            &[3, 0],
            &[9, 6, 4],
        ];
        let elems = [
            ElemType::U8,
            ElemType::I16,
            ElemType::F16,
            ElemType::U32,
            ElemType::F32,
            ElemType::I32,
            ElemType::U64,
            ElemType::F64,
        ];
        let states: [&[u64]; 5] = [
            &[0, 0],
            &[0x1234_5678_9abc_def0, u64::MAX - 2],
            &[7, u64::MAX, 3],
            &[42, 5, u64::MAX],
            &[u64::MAX, u64::MAX - 1, u64::MAX],
        ];
        let mut checked = 0;
        for algorithm in [
            RngAlgorithm::Philox,
            RngAlgorithm::Default,
            RngAlgorithm::ThreeFry,
        ] {
            for state in states {
                if algorithm == RngAlgorithm::ThreeFry && state.len() != 2 {
                    continue;
                }
                for shape in shapes {
                    for elem in elems {
                        let (want, want_state) = cpu(algorithm, state, shape, elem);
                        let plan = rng_plan(algorithm, state, shape, elem.byte_size()).unwrap();
                        let got = rng_emulated(&plan, elem.byte_size());
                        let what = format!("{algorithm:?} {state:?} {shape:?} {elem}");
                        assert_eq!(got, want, "{what}");
                        assert_eq!(plan.state, want_state, "{what}");
                        checked += 1;
                    }
                }
            }
        }
        assert_eq!(checked, 2 * 5 * 12 * 8 + 2 * 12 * 8);
    }

    #[test]
    fn the_kernel_text_built_for_the_host_matches_the_cpu_kernel() {
        // rng.cuh itself (not the Rust port), one thread at a time.
        use crate::cuda::host_run::{array, run};
        let shapes: [&[usize]; 8] = [
            &[],
            &[1],
            &[5, 3],
            &[3, 4],
            &[3, 5, 7],
            &[7, 1, 2],
            &[0, 3],
            &[9, 6, 4],
        ];
        let elems = [ElemType::U8, ElemType::F16, ElemType::U32, ElemType::I64];
        let states: [&[u64]; 3] = [
            &[5, u64::MAX - 1],
            &[0x1234_5678_9abc_def0, 3, u64::MAX],
            &[9, 0],
        ];
        let (mut text, mut expected) = (String::new(), 0);
        for algorithm in [RngAlgorithm::Philox, RngAlgorithm::ThreeFry] {
            for state in states {
                if algorithm == RngAlgorithm::ThreeFry && state.len() != 2 {
                    continue;
                }
                for shape in shapes {
                    for elem in elems {
                        let (want, _) = cpu(algorithm, state, shape, elem);
                        let p = rng_plan(algorithm, state, shape, elem.byte_size()).unwrap();
                        text.push_str(&format!(
                            "R {} {} {} {} {} {} {} {} {} {}\n",
                            u8::from(p.philox),
                            elem.byte_size(),
                            p.blocks,
                            p.count,
                            p.key,
                            p.counter.0,
                            p.counter.1,
                            p.inner,
                            p.half,
                            p.full
                        ));
                        array(&mut text, &want);
                        expected += 1;
                    }
                }
            }
        }
        match run("rng", &text) {
            Err(why) => eprintln!("skipped: {why}"),
            Ok(report) => assert!(
                report.ends_with(&format!("{expected} ok 0 differ\n")),
                "{report}"
            ),
        }
        assert_eq!(expected, 3 * 8 * 4 + 2 * 8 * 4);
    }

    #[test]
    fn plans_reject_what_the_cpu_kernel_rejects() {
        let err = rng_plan(RngAlgorithm::ThreeFry, &[1, 2, 3], &[2], 4).unwrap_err();
        assert!(err.contains("THREE_FRY needs 2"), "{err}");
        let err = rng_plan(RngAlgorithm::Philox, &[1], &[2], 4).unwrap_err();
        assert!(err.contains("PHILOX needs 2 or 3"), "{err}");
        assert!(rng_plan(RngAlgorithm::Philox, &[1, 2], &[2], 3).is_err());
        let names = entries().functions;
        assert_eq!(names.len(), 8);
        assert!(names.contains(&"rng_threefry_b2".to_string()));
    }
}
