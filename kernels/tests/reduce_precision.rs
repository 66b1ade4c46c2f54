//! The reduce_precision kernels bit for bit against JAX's `lax.reduce_precision`
//! on CPU (`data/reduce_precision.txt`, made by
//! `tools/jax_reduce_precision_cases.py`): edge values (denormals, the
//! largest and smallest normals of type and format, ties to even and odd,
//! infinities, NaN payloads) for f64, f32, f16 and bf16 in the formats
//! e8m7, e5m10, e4m3, e5m2, e8m23, e11m4, e2m20, e1m0 and e3m0.

use half::{bf16, f16};
use meshrun_kernels::cpu::reduce_precision::{reduce_precision, Format};
use meshrun_kernels::HostTensor;

const DATA: &str = include_str!("data/reduce_precision.txt");

/// One input of the file: type, format, input and JAX's output bits.
struct Case<'a> {
    ty: &'a str,
    format: Format,
    input: u64,
    want: u64,
}

fn cases() -> Vec<Case<'static>> {
    DATA.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(f.len(), 5, "bad line {l:?}");
            let int = |s: &str| s.parse::<i32>().unwrap_or_else(|_| panic!("{l:?}"));
            let hex = |s: &str| u64::from_str_radix(s, 16).unwrap_or_else(|_| panic!("{l:?}"));
            Case {
                ty: f[0],
                format: Format::new(int(f[1]), int(f[2])).unwrap(),
                input: hex(f[3]),
                want: hex(f[4]),
            }
        })
        .collect()
}

/// The kernel's output bits for one input bit pattern.
fn run(ty: &str, format: Format, bits: u64) -> u64 {
    let t = match ty {
        "f64" => HostTensor::from_vec(&[1], vec![f64::from_bits(bits)]),
        "f32" => HostTensor::from_vec(&[1], vec![f32::from_bits(bits as u32)]),
        "f16" => HostTensor::from_vec(&[1], vec![f16::from_bits(bits as u16)]),
        "bf16" => HostTensor::from_vec(&[1], vec![bf16::from_bits(bits as u16)]),
        other => panic!("unknown type {other}"),
    }
    .unwrap();
    match reduce_precision(&t, format).unwrap() {
        HostTensor::F64(a) => a[[0]].to_bits(),
        HostTensor::F32(a) => u64::from(a[[0]].to_bits()),
        HostTensor::F16(a) => u64::from(a[[0]].to_bits()),
        HostTensor::BF16(a) => u64::from(a[[0]].to_bits()),
        other => panic!("unexpected result {other:?}"),
    }
}

#[test]
fn every_case_matches_jax_bitwise() {
    let cases = cases();
    assert!(cases.len() > 6000, "{} cases", cases.len());
    let mut bad = Vec::new();
    for c in &cases {
        let got = run(c.ty, c.format, c.input);
        if got != c.want {
            bad.push(format!(
                "{} e{}m{} {:x}: got {got:x}, JAX {:x}",
                c.ty, c.format.exponent_bits, c.format.mantissa_bits, c.input, c.want
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "{} of {} differ:\n{}",
        bad.len(),
        cases.len(),
        bad[..bad.len().min(20)].join("\n")
    );
}

#[test]
fn the_file_covers_every_type_and_the_fp8_formats() {
    let cases = cases();
    for ty in ["f64", "f32", "f16", "bf16"] {
        for (e, m) in [(8, 7), (5, 10), (4, 3), (5, 2)] {
            let n = cases
                .iter()
                .filter(|c| c.ty == ty && c.format == Format::new(e, m).unwrap())
                .count();
            assert!(n > 50, "{ty} e{e}m{m}: {n} cases");
        }
    }
}
