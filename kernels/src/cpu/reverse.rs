//! `stablehlo.reverse`: the elements along each reversed dimension in the
//! opposite order.

use ndarray::Slice;

use crate::error::{KernelError, Result};
use crate::tensor::{HostElem, HostTensor};

pub fn reverse(x: &HostTensor, dims: &[i64]) -> Result<HostTensor> {
    let rank = x.shape().len();
    if let Some(&d) = dims.iter().find(|&&d| d < 0 || d >= rank as i64) {
        return Err(KernelError::invalid(
            "stablehlo.reverse",
            format!("dimension {d} is out of range for rank {rank}"),
        ));
    }
    let reversed = |axis: usize| dims.contains(&(axis as i64));
    Ok(crate::with_array!(x, a: T => {
        let v = a.slice_each_axis(|ax| {
            if reversed(ax.axis.index()) {
                Slice::new(0, None, -1)
            } else {
                Slice::new(0, None, 1)
            }
        });
        T::wrap(v.as_standard_layout().into_owned())
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reverses_each_named_dimension() {
        let x = HostTensor::from_vec(&[2, 3], vec![1i32, 2, 3, 4, 5, 6]).unwrap();
        let cases: [(&[i64], [i32; 6]); 4] = [
            (&[], [1, 2, 3, 4, 5, 6]),
            (&[1], [3, 2, 1, 6, 5, 4]),
            (&[0], [4, 5, 6, 1, 2, 3]),
            (&[0, 1], [6, 5, 4, 3, 2, 1]),
        ];
        for (dims, want) in cases {
            let got = reverse(&x, dims).unwrap();
            assert_eq!(got, HostTensor::from_vec(&[2, 3], want.to_vec()).unwrap());
        }
        assert!(reverse(&x, &[2]).is_err());
    }
}
