//! Window geometry shared by `reduce_window` and `select_and_scatter`:
//! window sizes, strides, base (input) and window dilations and edge
//! padding per dimension, the number of windows they give (spec C15), and
//! where each window element lies in the input.
//!
//! Coordinates: the *padded* input is the input with `base_dilation - 1`
//! holes between elements and `padding` added at both edges (negative
//! padding removes elements). Window `o`'s element `k` sits at padded
//! position `o * stride + k * window_dilation`; it is an input element when
//! that position, less the low padding, is a multiple of the base dilation
//! inside the dilated input, and padding (the init value) otherwise.

use crate::ir::ops::decode::I64Rows;

/// The window of one op, every list with one entry per dimension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    pub dims: Vec<i64>,
    pub strides: Vec<i64>,
    pub base_dilations: Vec<i64>,
    pub window_dilations: Vec<i64>,
    /// `(low, high)` padding.
    pub padding: Vec<(i64, i64)>,
}

/// Where one window element of one dimension lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tap {
    /// Input element at this index.
    Input(usize),
    /// Padding or a base-dilation hole.
    Pad,
}

impl Window {
    /// The window from optional attributes (absent: all 1, padding 0) for
    /// inputs of `rank`, or why the attributes do not fit (spec C4-C12).
    pub fn from_attrs(
        rank: usize,
        dims: Option<&[i64]>,
        strides: Option<&[i64]>,
        base_dilations: Option<&[i64]>,
        window_dilations: Option<&[i64]>,
        padding: Option<&I64Rows>,
    ) -> Result<Window, String> {
        let list = |v: Option<&[i64]>, name: &str| -> Result<Vec<i64>, String> {
            let v = v.map_or_else(|| vec![1; rank], |v| v.to_vec());
            if v.len() != rank {
                return Err(format!(
                    "{name} has {} entries but the input has rank {rank}",
                    v.len()
                ));
            }
            if let Some(bad) = v.iter().find(|&&x| x <= 0) {
                return Err(format!("{name} must be positive, got {bad}"));
            }
            Ok(v)
        };
        let padding = match padding {
            None => vec![(0, 0); rank],
            Some(p) => {
                if p.rows.len() != rank || (rank > 0 && p.width != 2) {
                    return Err(format!(
                        "padding must have shape [{rank}, 2], got [{}, {}]",
                        p.rows.len(),
                        p.width
                    ));
                }
                p.rows.iter().map(|r| (r[0], r[1])).collect()
            }
        };
        Ok(Window {
            dims: list(dims, "window_dimensions")?,
            strides: list(strides, "window_strides")?,
            base_dilations: list(base_dilations, "base_dilations")?,
            window_dilations: list(window_dilations, "window_dilations")?,
            padding,
        })
    }

    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// The number of windows along every dimension of an input of `shape`
    /// (spec C15), or why there is none (an absurd padding or size).
    pub fn num_windows(&self, shape: &[i64]) -> Result<Vec<i64>, String> {
        (0..self.rank())
            .map(|d| {
                let dilated = if shape[d] == 0 {
                    0
                } else {
                    (shape[d] - 1)
                        .checked_mul(self.base_dilations[d])
                        .and_then(|x| x.checked_add(1))
                        .ok_or("the dilated input is too large")?
                };
                let (lo, hi) = self.padding[d];
                let padded = dilated
                    .checked_add(lo)
                    .and_then(|x| x.checked_add(hi))
                    .ok_or("the padded input is too large")?;
                if padded < 0 {
                    return Err(format!(
                        "padding ({lo}, {hi}) of dimension {d} removes more than the input's {dilated} elements"
                    ));
                }
                let span = (self.dims[d] - 1)
                    .checked_mul(self.window_dilations[d])
                    .and_then(|x| x.checked_add(1))
                    .ok_or("the dilated window is too large")?;
                Ok(if padded == 0 || span > padded {
                    0
                } else {
                    (padded - span) / self.strides[d] + 1
                })
            })
            .collect()
    }

    /// Window size 1, stride 1 and no padding along `d` (Shardy's
    /// `isWindowPassthroughDim`, which the sharding rule follows; it
    /// ignores dilations).
    pub fn is_passthrough(&self, d: usize) -> bool {
        self.dims[d] == 1 && self.strides[d] == 1 && self.padding[d] == (0, 0)
    }

    /// Result index `i` reads input index `i` only along `d`: pass-through
    /// and no base dilation (which would change the size). A dimension
    /// sharded where this is false needs data from other devices.
    pub fn is_one_to_one(&self, d: usize) -> bool {
        self.is_passthrough(d) && self.base_dilations[d] == 1
    }

    /// Where element `k` of window `o` along dimension `d` lies in an input
    /// dimension of `size`.
    pub fn tap(&self, d: usize, size: usize, o: usize, k: usize) -> Tap {
        let pos =
            o as i64 * self.strides[d] + k as i64 * self.window_dilations[d] - self.padding[d].0;
        let b = self.base_dilations[d];
        if pos < 0 || pos % b != 0 {
            return Tap::Pad;
        }
        let i = pos / b;
        if (i as usize) < size {
            Tap::Input(i as usize)
        } else {
            Tap::Pad
        }
    }
}
