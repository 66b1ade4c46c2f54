//! `dynamic_slice` and `dynamic_update_slice` on the GPU as strided copies
//! (pure, tested on the CPU): the device downloads the scalar start
//! indices, clamps them with the CPU kernel's own rule
//! (`cpu::dynamic_slice::clamped_starts`: `clamp(0, start, dim - size)`)
//! and copies one box. Never run on a GPU (none is lent).

use meshrun_kernels::cpu::dynamic_slice::clamped_starts;
use meshrun_kernels::HostTensor;

use super::layout::{box_copy, StridedCopy};

const DS: &str = "stablehlo.dynamic_slice";
const DUS: &str = "stablehlo.dynamic_update_slice";

/// The copy of the `sizes` block at `starts` (clamped) of an operand of
/// `shape` into a new `sizes` buffer.
pub fn dynamic_slice_copy(
    shape: &[usize],
    sizes: &[usize],
    starts: &[&HostTensor],
) -> Result<StridedCopy, String> {
    let at = clamped_starts(DS, shape, sizes, starts).map_err(|e| e.to_string())?;
    box_copy(sizes, shape, &vec![0; shape.len()], &at, sizes)
}

/// The copy of an `update` block into a copy of the operand (of `shape`)
/// at `starts` (clamped).
pub fn dynamic_update_copy(
    shape: &[usize],
    update: &[usize],
    starts: &[&HostTensor],
) -> Result<StridedCopy, String> {
    if update.len() != shape.len() {
        return Err(format!(
            "{DUS}: update has rank {} but the operand has rank {}",
            update.len(),
            shape.len()
        ));
    }
    let at = clamped_starts(DUS, shape, update, starts).map_err(|e| e.to_string())?;
    box_copy(shape, update, &at, &vec![0; shape.len()], update)
}

#[cfg(test)]
mod tests {
    use super::*;
    use meshrun_kernels::cpu::dynamic_slice::{dynamic_slice, dynamic_update_slice};

    fn scalar(v: i64) -> HostTensor {
        HostTensor::from_vec(&[], vec![v as i32]).unwrap()
    }

    /// Every size and start (out of range on both sides too) of a 3 x 5
    /// operand: the copies equal the CPU kernels.
    #[test]
    fn copies_equal_the_cpu_kernels() {
        let shape = [3usize, 5];
        let x: Vec<f64> = (0..15).map(f64::from).collect();
        let xt = HostTensor::from_vec(&shape, x.clone()).unwrap();
        for (s0, s1) in (0..=3).flat_map(|a| (0..=5).map(move |b| (a, b))) {
            for (a, b) in (-2..5).flat_map(|a| (-2..7).map(move |b| (a, b))) {
                let (ta, tb) = (scalar(a), scalar(b));
                let starts = [&ta, &tb];
                let copy = dynamic_slice_copy(&shape, &[s0, s1], &starts).unwrap();
                let mut got = vec![0.0; s0 * s1];
                copy.apply(&x, &mut got).unwrap();
                let want = dynamic_slice(&xt, &starts, &[s0 as i64, s1 as i64]).unwrap();
                assert_eq!(got, want.to_f64_vec(), "{s0}x{s1} at ({a}, {b})");

                let u: Vec<f64> = (0..s0 * s1).map(|i| 100.0 + i as f64).collect();
                let ut = HostTensor::from_vec(&[s0, s1], u.clone()).unwrap();
                let copy = dynamic_update_copy(&shape, &[s0, s1], &starts).unwrap();
                let mut got = x.clone();
                copy.apply(&u, &mut got).unwrap();
                let want = dynamic_update_slice(&xt, &ut, &starts).unwrap();
                assert_eq!(got, want.to_f64_vec(), "update {s0}x{s1} at ({a}, {b})");
            }
        }
        let too_big = dynamic_slice_copy(&shape, &[4, 1], &[&scalar(0), &scalar(0)]);
        assert!(too_big.unwrap_err().contains("exceeds"));
    }
}
