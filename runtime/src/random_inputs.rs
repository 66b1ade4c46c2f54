//! Deterministic random inputs (`meshrun run --random-inputs SEED`, tests,
//! benches): the same seed gives the same tensors on every machine.
//!
//! Floats are uniform in [-1, 1) (magnitudes that keep `exp`, `tanh` and
//! products of a few layers finite), integers uniform in [0, 8) (sensible
//! as class labels or small counts), booleans fair coin flips. Input `k`
//! draws from its own stream, so adding an input does not change the
//! others.

use meshrun_compiler::ir::{Scalar, TensorType};
use meshrun_compiler::splitmix::SplitMix64;
use meshrun_kernels::{with_array, HostElem, HostTensor};

use crate::capacity::{host_memory_bytes, human_bytes};

/// Random input number `index` of type `ty` for `seed`.
pub fn random_tensor(ty: &TensorType, seed: u64, index: usize) -> Result<HostTensor, String> {
    let mut rng = SplitMix64::new(seed ^ (index as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03));
    if let (Some(memory), bytes) = (host_memory_bytes(), ty.checked_byte_size()) {
        if bytes.is_none_or(|b| b as u64 > memory) {
            return Err(format!(
                "input {index} ({ty}) does not fit in this machine's memory ({})",
                human_bytes(memory as u128)
            ));
        }
    }
    let mut t = HostTensor::zeros(ty).map_err(|e| e.to_string())?;
    let float = ty.elem.is_float();
    let boolean = ty.elem.is_bool();
    with_array!(&mut t, a: T => {
        for x in a.iter_mut() {
            let s = if float {
                Scalar::Float(rng.next_f64() * 2.0 - 1.0)
            } else if boolean {
                Scalar::Bool(rng.below(2) == 1)
            } else {
                Scalar::Int(rng.below(8) as i64)
            };
            *x = T::from_scalar(s);
        }
    });
    Ok(t)
}

/// One random tensor per type.
pub fn random_inputs(types: &[TensorType], seed: u64) -> Result<Vec<HostTensor>, String> {
    types
        .iter()
        .enumerate()
        .map(|(i, ty)| random_tensor(ty, seed, i))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use meshrun_compiler::ir::ElemType;

    #[test]
    fn deterministic_and_in_range() {
        let ty = TensorType::new(vec![4, 5], ElemType::F32);
        let a = random_tensor(&ty, 7, 0).unwrap();
        assert_eq!(a, random_tensor(&ty, 7, 0).unwrap());
        assert_ne!(a, random_tensor(&ty, 7, 1).unwrap());
        assert_ne!(a, random_tensor(&ty, 8, 0).unwrap());
        assert!(a.to_f64_vec().iter().all(|x| (-1.0..1.0).contains(x)));
        let i = random_tensor(&TensorType::new(vec![100], ElemType::I32), 1, 0).unwrap();
        assert!(i.to_f64_vec().iter().all(|x| (0.0..8.0).contains(x)));
        let b = random_tensor(&TensorType::new(vec![100], ElemType::I1), 1, 0).unwrap();
        let trues = b.to_f64_vec().iter().filter(|&&x| x == 1.0).count();
        assert!(trues > 20 && trues < 80, "{trues}");
    }
}
