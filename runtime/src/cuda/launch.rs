//! Launch configurations of the kernels (pure; tested on the CPU).
//!
//! Element-wise and copy kernels loop grid-stride, so any grid is correct;
//! the grid is sized to cover the elements once with
//! [`THREADS`]-thread blocks, capped at [`MAX_BLOCKS`] (beyond that each
//! thread takes several elements). Reductions use one block of
//! `REDUCE_THREADS` threads per output row, grid-stride over rows.

use meshrun_kernels::cuda::REDUCE_THREADS;

/// Threads per block of the element-wise kernels.
pub const THREADS: u32 = 256;

/// Most blocks of one launch; plenty to fill any current GPU (an H100 has
/// 132 SMs of at most 2048 resident threads: ~1056 blocks of 256).
pub const MAX_BLOCKS: u32 = 65_535;

/// Grid and block sizes of one launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchDims {
    pub grid: u32,
    pub block: u32,
}

/// A launch over `n` elements (`None`: nothing to launch).
pub fn elementwise(n: usize) -> Option<LaunchDims> {
    if n == 0 {
        return None;
    }
    let blocks = n.div_ceil(THREADS as usize).min(MAX_BLOCKS as usize) as u32;
    Some(LaunchDims {
        grid: blocks,
        block: THREADS,
    })
}

/// A launch of the row reduction over `outer` rows.
pub fn rows(outer: usize) -> Option<LaunchDims> {
    if outer == 0 {
        return None;
    }
    Some(LaunchDims {
        grid: outer.min(MAX_BLOCKS as usize) as u32,
        block: REDUCE_THREADS,
    })
}

/// `n` as the kernels' `long long` element count.
pub fn count(n: usize) -> Result<i64, String> {
    i64::try_from(n).map_err(|_| format!("{n} elements do not fit a 64-bit count"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_cover_the_elements_and_are_capped() {
        assert_eq!(elementwise(0), None);
        assert_eq!(
            elementwise(1),
            Some(LaunchDims {
                grid: 1,
                block: 256
            })
        );
        assert_eq!(elementwise(257).map(|l| l.grid), Some(2));
        let big = elementwise(1 << 40).unwrap();
        assert_eq!(big.grid, MAX_BLOCKS);
        // Grid-stride: every element is still reached.
        assert!(
            big.grid as u64 * big.block as u64 * ((1u64 << 40) / (MAX_BLOCKS as u64 * 256) + 1)
                >= 1 << 40
        );
        assert_eq!(
            rows(3),
            Some(LaunchDims {
                grid: 3,
                block: REDUCE_THREADS
            })
        );
        assert_eq!(rows(1 << 20).map(|l| l.grid), Some(MAX_BLOCKS));
        assert_eq!(rows(0), None);
        assert!(REDUCE_THREADS.is_power_of_two());
        assert_eq!(count(5), Ok(5));
    }
}
