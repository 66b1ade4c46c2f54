//! `gather` and `scatter`: slices of an operand at start indices read from
//! an index tensor.
//!
//! Both walk the same geometry ([`SliceWalk`]): one start-index vector per
//! batch point of the indices, and a window of elements per start. A gather
//! clamps each start so its slice stays inside the operand (StableHLO spec:
//! `clamp(start, 0, dim - slice_size)`). A scatter skips an update window
//! that does not lie wholly inside the input: the spec skips per element,
//! XLA (and so JAX, the referee) drops the whole window when any of it
//! falls outside; for the windows JAX emits (one row per index) the two
//! agree. Updates are applied in row-major order of the updates, so a
//! duplicate target under `replace` keeps the last one.

use meshrun_compiler::ir::ops::gather::Gather;
use meshrun_compiler::ir::ops::index_dims::IndexDims;
use meshrun_compiler::ir::ops::scatter::{Scatter, ScatterUpdate};
use meshrun_compiler::ir::ReduceKind;
use ndarray::{ArrayD, IxDyn};

use crate::cpu::map::into_standard;
use crate::cpu::real::{max_nan, min_nan, HalfFloat};
use crate::error::{KernelError, Result};
use crate::tensor::{HostElem, HostTensor};

const GATHER: &str = "stablehlo.gather";
const SCATTER: &str = "stablehlo.scatter";

/// The integer values of an index tensor in row-major order.
pub(crate) fn index_values(op: &str, what: &str, t: &HostTensor) -> Result<Vec<i64>> {
    if !t.elem_type().is_integer() {
        return Err(KernelError::invalid(
            op,
            format!("{what} must be integers, not {}", t.elem_type()),
        ));
    }
    Ok(crate::with_array!(t, a: T => a.iter().map(|x| x.to_scalar().as_i64()).collect()))
}

fn row_major_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    strides
}

/// The geometry of a gather or scatter on row-major buffers: the operand,
/// the indices and the slices (gather's result, scatter's updates).
struct SliceWalk<'a> {
    dims: &'a IndexDims,
    operand_shape: &'a [usize],
    indices: &'a [i64],
    indices_shape: &'a [usize],
    slices_shape: &'a [usize],
}

/// One window of elements: its extent along each operand window dim, and
/// the strides of those dims in the operand and the slices.
struct Window {
    shape: Vec<usize>,
    operand_strides: Vec<usize>,
    slices_strides: Vec<usize>,
}

impl SliceWalk<'_> {
    fn operand_window_dims(&self) -> Vec<usize> {
        self.dims.operand_window_dims(self.operand_shape.len())
    }

    /// The window: slices window dim `k` runs over operand window dim `k`.
    fn window(&self) -> Window {
        let os = row_major_strides(self.operand_shape);
        let ss = row_major_strides(self.slices_shape);
        let od = self.operand_window_dims();
        let sd: Vec<usize> = self.dims.window_dims.iter().map(|&d| d as usize).collect();
        Window {
            shape: sd.iter().map(|&d| self.slices_shape[d]).collect(),
            operand_strides: od.iter().map(|&d| os[d]).collect(),
            slices_strides: sd.iter().map(|&d| ss[d]).collect(),
        }
    }

    /// Call `f(start, slices_offset)` for every batch point, in row-major
    /// order: `start` is the full (unclamped) start along every operand
    /// dim (start indices at `start_index_map`, the batch position at
    /// explicit batching dims, 0 elsewhere); `slices_offset` is where the
    /// point's window begins in the slices.
    fn for_each_start(&self, mut f: impl FnMut(&[i64], usize)) {
        let dims = self.dims;
        let ivd = dims.index_vector_dim as usize;
        let irank = self.indices_shape.len();
        let istrides = row_major_strides(self.indices_shape);
        let ibatch = dims.indices_batch_dims(irank);
        let sstrides = row_major_strides(self.slices_shape);
        let sbatch = dims.slices_batch_dims(self.slices_shape.len());
        let batch_shape: Vec<usize> = ibatch.iter().map(|&d| self.indices_shape[d]).collect();
        let vector_stride = if ivd < irank { istrides[ivd] } else { 0 };
        // Batch point k's position along indices batching dim `ib` fills
        // operand batching dim `ob`.
        let batching: Vec<(usize, usize)> = dims
            .indices_batching_dims
            .iter()
            .zip(&dims.operand_batching_dims)
            .filter_map(|(&ib, &ob)| {
                let k = ibatch.iter().position(|&d| d == ib as usize)?;
                Some((k, ob as usize))
            })
            .collect();
        if batch_shape.contains(&0) {
            return;
        }
        let mut pos = vec![0usize; batch_shape.len()];
        let mut start = vec![0i64; self.operand_shape.len()];
        loop {
            let ioff: usize = pos
                .iter()
                .zip(&ibatch)
                .map(|(&p, &d)| p * istrides[d])
                .sum();
            let soff: usize = pos
                .iter()
                .zip(&sbatch)
                .map(|(&p, &d)| p * sstrides[d])
                .sum();
            start.iter_mut().for_each(|s| *s = 0);
            for (k, &od) in dims.start_index_map.iter().enumerate() {
                start[od as usize] = self.indices[ioff + k * vector_stride];
            }
            for &(k, od) in &batching {
                start[od] = pos[k] as i64;
            }
            f(&start, soff);
            if !odometer(&mut pos, &batch_shape) {
                return;
            }
        }
    }
}

/// Advance `pos` in row-major order within `shape`; false after the last.
fn odometer(pos: &mut [usize], shape: &[usize]) -> bool {
    for d in (0..pos.len()).rev() {
        pos[d] += 1;
        if pos[d] < shape[d] {
            return true;
        }
        pos[d] = 0;
    }
    false
}

impl Window {
    fn is_empty(&self) -> bool {
        self.shape.contains(&0)
    }

    /// Call `f(operand_offset, slices_offset, len, operand_stride,
    /// slices_stride)` for every run along the innermost window dim (one
    /// run of one element when the window has no dims).
    fn for_each_run(
        &self,
        operand_base: usize,
        slices_base: usize,
        mut f: impl FnMut(usize, usize, usize, usize, usize),
    ) {
        if self.is_empty() {
            return;
        }
        let Some(last) = self.shape.len().checked_sub(1) else {
            f(operand_base, slices_base, 1, 1, 1);
            return;
        };
        let outer = &self.shape[..last];
        let mut pos = vec![0usize; outer.len()];
        loop {
            let o: usize = pos
                .iter()
                .zip(&self.operand_strides)
                .map(|(&p, &s)| p * s)
                .sum();
            let s: usize = pos
                .iter()
                .zip(&self.slices_strides)
                .map(|(&p, &s)| p * s)
                .sum();
            f(
                operand_base + o,
                slices_base + s,
                self.shape[last],
                self.operand_strides[last],
                self.slices_strides[last],
            );
            if !odometer(&mut pos, outer) {
                return;
            }
        }
    }
}

fn usize_shape(op: &str, what: &str, shape: &[i64]) -> Result<Vec<usize>> {
    shape
        .iter()
        .map(|&d| {
            usize::try_from(d)
                .map_err(|_| KernelError::invalid(op, format!("{what} has a negative dimension")))
        })
        .collect()
}

/// `stablehlo.gather` of `operand` at `indices`; the result shape comes
/// from the op (checked by the verifier).
pub fn gather(g: &Gather, operand: &HostTensor, indices: &HostTensor) -> Result<HostTensor> {
    let dims = &g.dimension_numbers;
    let rank = operand.shape().len();
    if g.slice_sizes.len() != rank {
        return Err(KernelError::invalid(
            GATHER,
            format!(
                "slice_sizes has {} entries for an operand of rank {rank}",
                g.slice_sizes.len()
            ),
        ));
    }
    let idx = index_values(GATHER, "start_indices", indices)?;
    let operand_ty = operand.tensor_type();
    let result_shape = usize_shape(
        GATHER,
        "result",
        &g.result_shape(&operand_ty, &indices.tensor_type()),
    )?;
    let walk = SliceWalk {
        dims,
        operand_shape: operand.shape(),
        indices: &idx,
        indices_shape: indices.shape(),
        slices_shape: &result_shape,
    };
    crate::with_array!(operand, a: T => {
        // Read in place: a gather takes a few rows of a big operand (a
        // token's logit out of 16x64x2048), and copying the operand first
        // cost 5 ms there.
        match a.as_slice() {
            Some(src) => gather_typed(g, &walk, src).map(T::wrap),
            None => {
                let src = a.as_standard_layout();
                gather_typed(g, &walk, src.as_slice().unwrap_or(&[])).map(T::wrap)
            }
        }
    })
}

fn gather_typed<T: HostElem>(g: &Gather, walk: &SliceWalk, src: &[T]) -> Result<ArrayD<T>> {
    let n: usize = walk.slices_shape.iter().product();
    let mut out = vec![T::zero_value(); n];
    let window = walk.window();
    let ostrides = row_major_strides(walk.operand_shape);
    let limits: Vec<i64> = walk
        .operand_shape
        .iter()
        .zip(&g.slice_sizes)
        .map(|(&d, &s)| d as i64 - s)
        .collect();
    let mapped = &walk.dims.start_index_map;
    if n > 0 {
        walk.for_each_start(|start, soff| {
            let mut base = 0usize;
            for (d, &s) in start.iter().enumerate() {
                let s = if mapped.contains(&(d as i64)) {
                    s.clamp(0, limits[d].max(0))
                } else {
                    s
                };
                base += s as usize * ostrides[d];
            }
            window.for_each_run(base, soff, |o, s, len, os, ss| {
                if os == 1 && ss == 1 {
                    out[s..s + len].copy_from_slice(&src[o..o + len]);
                } else {
                    for k in 0..len {
                        out[s + k * ss] = src[o + k * os];
                    }
                }
            });
        });
    }
    ArrayD::from_shape_vec(IxDyn(walk.slices_shape), out)
        .map_err(|e| KernelError::invalid(GATHER, format!("internal: {e}")))
}

/// `stablehlo.scatter`: `operands` are N inputs, the indices, N updates.
pub fn scatter(s: &Scatter, operands: &[&HostTensor]) -> Result<Vec<HostTensor>> {
    let n = Scatter::num_inputs(operands.len());
    if n == 0 || operands.len() != 2 * n + 1 {
        return Err(KernelError::invalid(
            SCATTER,
            format!(
                "needs N inputs, the indices and N updates, got {} operands",
                operands.len()
            ),
        ));
    }
    let (inputs, rest) = operands.split_at(n);
    let (indices, updates) = (rest[0], &rest[1..]);
    let idx = index_values(SCATTER, "scatter_indices", indices)?;
    inputs
        .iter()
        .zip(updates)
        .map(|(&input, &u)| scatter_one(s, input.clone(), indices, &idx, u))
        .collect()
}

/// A scatter of one input that writes into `input` itself (its owner
/// hands it over: the input's last use): the same updates in the same
/// order as [`scatter`], without first copying the input.
pub fn scatter_into(
    s: &Scatter,
    input: HostTensor,
    indices: &HostTensor,
    updates: &HostTensor,
) -> Result<HostTensor> {
    let idx = index_values(SCATTER, "scatter_indices", indices)?;
    scatter_one(s, input, indices, &idx, updates)
}

fn scatter_one(
    s: &Scatter,
    input: HostTensor,
    indices: &HostTensor,
    idx: &[i64],
    updates: &HostTensor,
) -> Result<HostTensor> {
    let update = s
        .update_kind()
        .map_err(|e| KernelError::invalid(SCATTER, e))?;
    let operand_shape = input.shape().to_vec();
    let walk = SliceWalk {
        dims: s.dims(),
        operand_shape: &operand_shape,
        indices: idx,
        indices_shape: indices.shape(),
        slices_shape: updates.shape(),
    };
    apply_updates(update, &walk, input, updates)
}

macro_rules! scatter_with {
    ($walk:expr, $a:expr, $u:expr, $variant:ident, |$x:ident, $y:ident| $f:expr) => {
        HostTensor::$variant(scatter_typed($walk, $a, $u, |$x, $y| $f)?)
    };
}

/// `input` with `updates` applied where `walk` puts them.
fn apply_updates(
    update: ScatterUpdate,
    walk: &SliceWalk,
    input: HostTensor,
    updates: &HostTensor,
) -> Result<HostTensor> {
    use HostTensor as H;
    use ReduceKind as R;
    let input_ty = input.elem_type();
    let mismatch = || {
        KernelError::invalid(
            SCATTER,
            format!(
                "an input is {input_ty} but its updates are {}",
                updates.elem_type()
            ),
        )
    };
    if input_ty != updates.elem_type() {
        return Err(mismatch());
    }
    let kind = match update {
        ScatterUpdate::Replace => {
            return crate::with_array!(input, a: T => {
                let u = T::array(updates).ok_or_else(mismatch)?;
                Ok(T::wrap(scatter_typed(walk, a, u, |_, y| y)?))
            });
        }
        ScatterUpdate::Combine(kind) => kind,
    };
    let unsupported =
        || KernelError::unsupported(&format!("{SCATTER} ({})", kind.name()), input_ty);
    Ok(match (input, updates) {
        (H::F64(a), H::F64(u)) => real_combine(walk, a, u, kind).map(H::F64)?,
        (H::F32(a), H::F32(u)) => real_combine(walk, a, u, kind).map(H::F32)?,
        (H::F16(a), H::F16(u)) => H::F16(half_combine(walk, a, u, kind)?),
        (H::BF16(a), H::BF16(u)) => H::BF16(half_combine(walk, a, u, kind)?),
        (H::I32(a), H::I32(u)) => match kind {
            R::Add => scatter_with!(walk, a, u, I32, |x, y| x.wrapping_add(y)),
            R::Multiply => scatter_with!(walk, a, u, I32, |x, y| x.wrapping_mul(y)),
            R::Maximum => scatter_with!(walk, a, u, I32, |x, y| x.max(y)),
            R::Minimum => scatter_with!(walk, a, u, I32, |x, y| x.min(y)),
            R::And => scatter_with!(walk, a, u, I32, |x, y| x & y),
            R::Or => scatter_with!(walk, a, u, I32, |x, y| x | y),
        },
        (H::I64(a), H::I64(u)) => match kind {
            R::Add => scatter_with!(walk, a, u, I64, |x, y| x.wrapping_add(y)),
            R::Multiply => scatter_with!(walk, a, u, I64, |x, y| x.wrapping_mul(y)),
            R::Maximum => scatter_with!(walk, a, u, I64, |x, y| x.max(y)),
            R::Minimum => scatter_with!(walk, a, u, I64, |x, y| x.min(y)),
            R::And => scatter_with!(walk, a, u, I64, |x, y| x & y),
            R::Or => scatter_with!(walk, a, u, I64, |x, y| x | y),
        },
        (H::Pred(a), H::Pred(u)) => match kind {
            R::And | R::Minimum | R::Multiply => scatter_with!(walk, a, u, Pred, |x, y| x & y),
            R::Or | R::Maximum | R::Add => scatter_with!(walk, a, u, Pred, |x, y| x | y),
        },
        _ => return Err(unsupported()),
    })
}

fn real_combine<F: crate::cpu::real::Real>(
    walk: &SliceWalk,
    a: ArrayD<F>,
    u: &ArrayD<F>,
    kind: ReduceKind,
) -> Result<ArrayD<F>> {
    match kind {
        ReduceKind::Add => scatter_typed(walk, a, u, |x, y| x + y),
        ReduceKind::Multiply => scatter_typed(walk, a, u, |x, y| x * y),
        ReduceKind::Maximum => scatter_typed(walk, a, u, max_nan),
        ReduceKind::Minimum => scatter_typed(walk, a, u, min_nan),
        ReduceKind::And | ReduceKind::Or => Err(KernelError::unsupported(
            &format!("{SCATTER} ({})", kind.name()),
            F::ELEM,
        )),
    }
}

/// f16/bf16: each update computed in f32 and rounded back, as a scalar
/// region on 16-bit floats does.
fn half_combine<H: HalfFloat>(
    walk: &SliceWalk,
    a: ArrayD<H>,
    u: &ArrayD<H>,
    kind: ReduceKind,
) -> Result<ArrayD<H>> {
    let w = |f: fn(f32, f32) -> f32| move |x: H, y: H| H::narrow(f(x.widen(), y.widen()));
    match kind {
        ReduceKind::Add => scatter_typed(walk, a, u, w(|x, y| x + y)),
        ReduceKind::Multiply => scatter_typed(walk, a, u, w(|x, y| x * y)),
        ReduceKind::Maximum => scatter_typed(walk, a, u, w(max_nan)),
        ReduceKind::Minimum => scatter_typed(walk, a, u, w(min_nan)),
        ReduceKind::And | ReduceKind::Or => Err(KernelError::unsupported(
            &format!("{SCATTER} ({})", kind.name()),
            H::ELEM,
        )),
    }
}

fn scatter_typed<T: HostElem>(
    walk: &SliceWalk,
    input: ArrayD<T>,
    updates: &ArrayD<T>,
    f: impl Fn(T, T) -> T,
) -> Result<ArrayD<T>> {
    let mut out = into_standard(input);
    let upd = into_standard(updates.clone());
    let (Some(dst), Some(src)) = (out.as_slice_mut(), upd.as_slice()) else {
        return Err(KernelError::invalid(SCATTER, "internal: non-contiguous"));
    };
    let window = walk.window();
    let ostrides = row_major_strides(walk.operand_shape);
    // The window's extent along every operand dim (1 where it has none).
    let mut extent = vec![1i64; walk.operand_shape.len()];
    for (&od, &size) in walk.operand_window_dims().iter().zip(&window.shape) {
        extent[od] = size as i64;
    }
    if src.is_empty() {
        return Ok(out);
    }
    walk.for_each_start(|start, soff| {
        let inside = start
            .iter()
            .zip(walk.operand_shape)
            .zip(&extent)
            .all(|((&s, &dim), &e)| s >= 0 && s <= dim as i64 - e);
        if !inside {
            return;
        }
        let base: usize = start
            .iter()
            .zip(&ostrides)
            .map(|(&s, &st)| s as usize * st)
            .sum();
        window.for_each_run(base, soff, |o, s, len, os, ss| {
            for k in 0..len {
                let (i, j) = (o + k * os, s + k * ss);
                dst[i] = f(dst[i], src[j]);
            }
        });
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use meshrun_compiler::ir::OpKind;
    use meshrun_compiler::text::parse_module;

    /// The op of a one-op `main` in `text`'s body.
    fn op_of(body: &str, sig: &str) -> OpKind {
        let ret = body.rsplit(" : ").next().unwrap_or("");
        let text = format!("func.func @main({sig}) -> {ret} {{\n{body}\n}}");
        let m = parse_module(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let f = &m.funcs[0];
        let kind = f.ops_in_order().next().unwrap().1.kind.clone();
        kind
    }

    fn f32s(shape: &[usize], v: &[f32]) -> HostTensor {
        HostTensor::from_vec(shape, v.to_vec()).unwrap()
    }

    fn range(shape: &[usize]) -> HostTensor {
        let n: usize = shape.iter().product();
        f32s(shape, &(0..n).map(|i| i as f32).collect::<Vec<_>>())
    }

    #[test]
    fn row_gather_clamps_starts() {
        // Rows of a 4x3 table at ids -1, 2, 7 (i64): clamped to 0, 2, 3.
        let OpKind::Gather(g) = op_of(
            r#"%r = "stablehlo.gather"(%t, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 3>}> : (tensor<4x3xf32>, tensor<3xi64>) -> tensor<3x3xf32>
  return %r : tensor<3x3xf32>"#,
            "%t: tensor<4x3xf32>, %i: tensor<3xi64>",
        ) else {
            panic!()
        };
        let ids = HostTensor::from_vec(&[3], vec![-1i64, 2, 7]).unwrap();
        let got = gather(&g, &range(&[4, 3]), &ids).unwrap();
        assert_eq!(got, f32s(&[3, 3], &[0., 1., 2., 6., 7., 8., 9., 10., 11.]));
    }

    #[test]
    fn spec_example_with_batching_dims() {
        // A 2x3x4x2 operand, windows of 2x2 along dims 2 and 3 (dim 1
        // collapsed, dim 0 a batching dim); start (1, 3) is clamped to
        // (1, 2) in the window dims.
        let OpKind::Gather(g) = op_of(
            r#"%r = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1, 2], index_vector_dim = 2>, slice_sizes = array<i64: 1, 1, 2, 2>}> : (tensor<2x3x4x2xf32>, tensor<2x1x2xi32>) -> tensor<2x1x2x2xf32>
  return %r : tensor<2x1x2x2xf32>"#,
            "%x: tensor<2x3x4x2xf32>, %i: tensor<2x1x2xi32>",
        ) else {
            panic!()
        };
        let ids = HostTensor::from_vec(&[2, 1, 2], vec![1i32, 3, 2, 0]).unwrap();
        let got = gather(&g, &range(&[2, 3, 4, 2]), &ids).unwrap();
        // Batch 0: operand[0, 1, 2..4, 0..2] = 12..16; batch 1:
        // operand[1, 2, 0..2, 0..2] = 24 + 16 + (0..4).
        assert_eq!(
            got,
            f32s(&[2, 1, 2, 2], &[12., 13., 14., 15., 40., 41., 42., 43.])
        );
    }

    fn scatter_op(body: &str) -> Scatter {
        let text = format!(
            r#"%r = "stablehlo.scatter"(%x, %i, %u) <{{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}}> ({{
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    {body}
  }}) : (tensor<4x2xf32>, tensor<5xi32>, tensor<5x2xf32>) -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>"#
        );
        match op_of(
            &text,
            "%x: tensor<4x2xf32>, %i: tensor<5xi32>, %u: tensor<5x2xf32>",
        ) {
            OpKind::Scatter(s) => s,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn scatter_updates_skip_outside_and_combine_duplicates() {
        let x = range(&[4, 2]);
        let ids = HostTensor::from_vec(&[5], vec![1i32, 3, 1, 4, -1]).unwrap();
        let u = f32s(
            &[5, 2],
            &[10., 20., 30., 40., 50., 60., 70., 80., 90., 100.],
        );
        let run = |body: &str| {
            scatter(&scatter_op(body), &[&x, &ids, &u])
                .unwrap()
                .remove(0)
        };
        let add =
            run("%s = stablehlo.add %a, %b : tensor<f32>\n    stablehlo.return %s : tensor<f32>");
        assert_eq!(add, f32s(&[4, 2], &[0., 1., 62., 83., 4., 5., 36., 47.]));
        // Replace keeps the last of duplicate targets.
        let set = run("stablehlo.return %b : tensor<f32>");
        assert_eq!(set, f32s(&[4, 2], &[0., 1., 50., 60., 4., 5., 30., 40.]));
        let max = run(
            "%s = stablehlo.maximum %b, %a : tensor<f32>\n    stablehlo.return %s : tensor<f32>",
        );
        assert_eq!(max, f32s(&[4, 2], &[0., 1., 50., 60., 4., 5., 30., 40.]));
        let min = run(
            "%s = stablehlo.minimum %a, %b : tensor<f32>\n    stablehlo.return %s : tensor<f32>",
        );
        assert_eq!(min, f32s(&[4, 2], &[0., 1., 2., 3., 4., 5., 6., 7.]));
        let mul = run(
            "%s = stablehlo.multiply %a, %b : tensor<f32>\n    stablehlo.return %s : tensor<f32>",
        );
        assert_eq!(
            mul,
            f32s(&[4, 2], &[0., 1., 1000., 3600., 4., 5., 180., 280.])
        );
    }

    #[test]
    fn scatter_rejects_mismatched_types() {
        let s = scatter_op(
            "%s = stablehlo.add %a, %b : tensor<f32>\n    stablehlo.return %s : tensor<f32>",
        );
        let x = range(&[4, 2]);
        let ids = HostTensor::from_vec(&[5], vec![0i32; 5]).unwrap();
        let u = HostTensor::from_vec(&[5, 2], vec![1i32; 10]).unwrap();
        let err = scatter(&s, &[&x, &ids, &u]).unwrap_err();
        assert!(err.to_string().contains("updates are i32"), "{err}");
        let fids = f32s(&[5], &[0.; 5]);
        let err = scatter(&s, &[&x, &fids, &x]).unwrap_err();
        assert!(err.to_string().contains("must be integers"), "{err}");
    }
}
