//! `reduce_window` and `select_and_scatter`: ops over windows of an input
//! (geometry: `meshrun_compiler::ir::ops::window::Window`).
//!
//! Both go one window *offset* at a time: for offset `k` (a position inside
//! the window), every window's element `k` is gathered into one tensor of
//! the result's (or source's) shape, padding filled in, and the body is
//! evaluated element-wise over whole tensors ([`eval_computation`]). That
//! is one body evaluation per window element, whatever the body (several
//! inputs, comparators), instead of one interpreter step per element.
//!
//! `select_and_scatter` selects as XLA does: window elements in row-major
//! order, `select(chosen, next)` true keeps the chosen one, padding is
//! never a candidate. Then, per offset, the source values whose window
//! chose that offset are combined into the result (distinct positions for
//! one offset, so each step is a vectorized body evaluation); overlapping
//! windows that choose one position combine in offset order, where XLA
//! goes in source order (the same sum up to float rounding).

use meshrun_compiler::ir::ops::reduce_window::ReduceWindow;
use meshrun_compiler::ir::ops::select_and_scatter::SelectAndScatter;
use meshrun_compiler::ir::ops::window::{Tap, Window};

use crate::cpu::computation::eval_computation;
use crate::error::{KernelError, Result};
use crate::tensor::{HostElem, HostTensor};

const REDUCE_WINDOW: &str = "stablehlo.reduce_window";
const SELECT_AND_SCATTER: &str = "stablehlo.select_and_scatter";

fn row_major_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    strides
}

/// The windows of an input of `input` shape: `out` windows per dimension.
struct Windows<'a> {
    window: &'a Window,
    input: Vec<usize>,
    out: Vec<usize>,
}

impl Windows<'_> {
    fn new<'a>(op: &str, window: &'a Window, input: &[usize]) -> Result<Windows<'a>> {
        let shape: Vec<i64> = input.iter().map(|&d| d as i64).collect();
        let out = window
            .num_windows(&shape)
            .map_err(|e| KernelError::invalid(op, e))?
            .into_iter()
            .map(|n| n as usize)
            .collect();
        Ok(Windows {
            window,
            input: input.to_vec(),
            out,
        })
    }

    /// Every window offset, row-major.
    fn offsets(&self) -> Vec<Vec<usize>> {
        let dims: Vec<usize> = self.window.dims.iter().map(|&d| d as usize).collect();
        let mut all = Vec::new();
        let mut k = vec![0usize; dims.len()];
        loop {
            all.push(k.clone());
            let mut d = dims.len();
            loop {
                if d == 0 {
                    return all;
                }
                d -= 1;
                k[d] += 1;
                if k[d] < dims[d] {
                    break;
                }
                k[d] = 0;
            }
        }
    }

    /// For offset `k`, the row-major input position of every window's
    /// element `k` (windows in row-major order), `None` in padding.
    fn taps(&self, k: &[usize]) -> Vec<Option<usize>> {
        let rank = self.input.len();
        let strides = row_major_strides(&self.input);
        // Per dimension: the input offset of element k of window o.
        let per_dim: Vec<Vec<Option<usize>>> = (0..rank)
            .map(|d| {
                (0..self.out[d])
                    .map(|o| match self.window.tap(d, self.input[d], o, k[d]) {
                        Tap::Input(i) => Some(i * strides[d]),
                        Tap::Pad => None,
                    })
                    .collect()
            })
            .collect();
        let n: usize = self.out.iter().product();
        let mut taps = Vec::with_capacity(n);
        if n == 0 {
            return taps;
        }
        let mut o = vec![0usize; rank];
        loop {
            let mut at = Some(0usize);
            for d in 0..rank {
                at = match (at, per_dim[d][o[d]]) {
                    (Some(a), Some(b)) => Some(a + b),
                    _ => None,
                };
            }
            taps.push(at);
            let mut d = rank;
            loop {
                if d == 0 {
                    return taps;
                }
                d -= 1;
                o[d] += 1;
                if o[d] < self.out[d] {
                    break;
                }
                o[d] = 0;
            }
        }
    }
}

/// The first element of a rank-0 (or any non-empty) tensor of `x`'s type.
fn scalar_of<T: HostElem>(op: &str, t: &HostTensor) -> Result<T> {
    T::array(t)
        .and_then(|a| a.iter().next().copied())
        .ok_or_else(|| {
            KernelError::invalid(op, format!("init value must be one {} element", T::ELEM))
        })
}

/// `x`'s elements at `at` (row-major positions), `fill`'s value where
/// `None`, as a tensor of `shape`.
fn take(
    op: &str,
    x: &HostTensor,
    at: &[Option<usize>],
    fill: &HostTensor,
    shape: &[usize],
) -> Result<HostTensor> {
    crate::with_array!(x, a: T => {
        let f: T = scalar_of(op, fill)?;
        let a = a.as_standard_layout();
        let s = a.as_slice().unwrap_or(&[]);
        let v: Vec<T> = at.iter().map(|i| i.map_or(f, |i| s[i])).collect();
        HostTensor::from_vec(shape, v)
    })
}

/// `x` with the elements at `at` replaced by `values`' (in order).
fn put(op: &str, x: HostTensor, at: &[usize], values: &HostTensor) -> Result<HostTensor> {
    let shape = x.shape().to_vec();
    crate::with_array!(&x, a: T => {
        let vals = T::array(values).ok_or_else(|| {
            KernelError::invalid(op, "the scatter body changed the element type")
        })?;
        let mut v: Vec<T> = a.iter().copied().collect();
        for (&i, &val) in at.iter().zip(vals.iter()) {
            v[i] = val;
        }
        HostTensor::from_vec(&shape, v)
    })
}

/// A tensor of `shape` filled with the scalar `init`.
fn filled(op: &str, init: &HostTensor, shape: &[usize]) -> Result<HostTensor> {
    let n = shape.iter().product::<usize>();
    take(op, init, &vec![None; n], init, shape)
}

/// `stablehlo.reduce_window` of `inputs` with init values `inits`.
pub fn reduce_window(
    op: &ReduceWindow,
    inputs: &[&HostTensor],
    inits: &[&HostTensor],
) -> Result<Vec<HostTensor>> {
    let first = inputs
        .first()
        .ok_or_else(|| KernelError::invalid(REDUCE_WINDOW, "needs at least one input"))?;
    if inputs.len() != inits.len() {
        return Err(KernelError::invalid(
            REDUCE_WINDOW,
            format!("{} inputs but {} init values", inputs.len(), inits.len()),
        ));
    }
    if let Some(bad) = inputs.iter().find(|t| t.shape() != first.shape()) {
        return Err(KernelError::invalid(
            REDUCE_WINDOW,
            format!("inputs of shapes {:?} and {:?}", first.shape(), bad.shape()),
        ));
    }
    let window = op
        .window(first.shape().len())
        .map_err(|e| KernelError::invalid(REDUCE_WINDOW, e))?;
    let windows = Windows::new(REDUCE_WINDOW, &window, first.shape())?;
    let out = windows.out.clone();
    let mut acc: Vec<HostTensor> = inits
        .iter()
        .map(|init| filled(REDUCE_WINDOW, init, &out))
        .collect::<Result<_>>()?;
    if out.contains(&0) {
        return Ok(acc);
    }
    for k in windows.offsets() {
        let taps = windows.taps(&k);
        let next: Vec<HostTensor> = inputs
            .iter()
            .zip(inits)
            .map(|(x, init)| take(REDUCE_WINDOW, x, &taps, init, &out))
            .collect::<Result<_>>()?;
        let args: Vec<&HostTensor> = acc.iter().chain(&next).collect();
        acc = eval_computation(&op.body, &args)?;
    }
    Ok(acc)
}

/// `stablehlo.select_and_scatter` of `operand` and `source` into a result
/// filled with `init`.
pub fn select_and_scatter(
    op: &SelectAndScatter,
    operand: &HostTensor,
    source: &HostTensor,
    init: &HostTensor,
) -> Result<HostTensor> {
    let window = op
        .window(operand.shape().len())
        .map_err(|e| KernelError::invalid(SELECT_AND_SCATTER, e))?;
    let windows = Windows::new(SELECT_AND_SCATTER, &window, operand.shape())?;
    if windows.out != source.shape() {
        return Err(KernelError::invalid(
            SELECT_AND_SCATTER,
            format!(
                "source has shape {:?} but the operand has {:?} windows",
                source.shape(),
                windows.out
            ),
        ));
    }
    let n: usize = windows.out.iter().product();
    let mut result = filled(SELECT_AND_SCATTER, init, operand.shape())?;
    if n == 0 {
        return Ok(result);
    }
    // Selection: per window, the chosen operand position and its offset.
    let offsets = windows.offsets();
    let mut chosen: Vec<Option<(usize, usize)>> = vec![None; n];
    let mut chosen_values = filled(SELECT_AND_SCATTER, init, &windows.out)?;
    for (ki, k) in offsets.iter().enumerate() {
        let taps = windows.taps(k);
        let cand = take(SELECT_AND_SCATTER, operand, &taps, init, &windows.out)?;
        let keep = eval_computation(&op.select, &[&chosen_values, &cand])?;
        let keep = keep
            .first()
            .and_then(|t| t.array::<bool>())
            .ok_or_else(|| KernelError::invalid(SELECT_AND_SCATTER, "select must give i1"))?;
        let mut replace = Vec::new();
        for (w, (&tap, &kept)) in taps.iter().zip(keep.iter()).enumerate() {
            let Some(at) = tap else { continue };
            if chosen[w].is_none() || !kept {
                chosen[w] = Some((at, ki));
                replace.push(w);
            }
        }
        let picked = take(
            SELECT_AND_SCATTER,
            &cand,
            &replace.iter().map(|&w| Some(w)).collect::<Vec<_>>(),
            init,
            &[replace.len()],
        )?;
        chosen_values = put(SELECT_AND_SCATTER, chosen_values, &replace, &picked)?;
    }
    // Scatter, one offset at a time: distinct result positions per step.
    for ki in 0..offsets.len() {
        let (targets, from): (Vec<usize>, Vec<Option<usize>>) = chosen
            .iter()
            .enumerate()
            .filter_map(|(w, c)| match *c {
                Some((at, k)) if k == ki => Some((at, Some(w))),
                _ => None,
            })
            .unzip();
        if targets.is_empty() {
            continue;
        }
        let shape = [targets.len()];
        let at: Vec<Option<usize>> = targets.iter().map(|&t| Some(t)).collect();
        let current = take(SELECT_AND_SCATTER, &result, &at, init, &shape)?;
        let values = take(SELECT_AND_SCATTER, source, &from, init, &shape)?;
        let combined = eval_computation(&op.scatter, &[&current, &values])?;
        let combined = combined
            .first()
            .ok_or_else(|| KernelError::invalid(SELECT_AND_SCATTER, "scatter gave nothing"))?;
        result = put(SELECT_AND_SCATTER, result, &targets, combined)?;
    }
    Ok(result)
}
