//! `chlo.ragged_dot` as plain ops once its group sizes are known: the
//! slices of each group's range, one `dot_general` per group, zero blocks
//! for rows no group covers, and the concatenations (or padded sums) that
//! put the blocks in place. Every backend runs these same steps with its
//! own kernels (the CPU's `gemm`, cuBLAS on a GPU): the op's semantics
//! are written once, here, and [`run`] interprets them for any value type.
//!
//! Mode 1 (ragged rows): group `i`'s rows (after the rows of the groups
//! before it) times group `i` of rhs, the blocks concatenated along the
//! result's ragged dimension, rows past the last group zero (XLA's
//! semantics). Mode 2 (ragged contracting dimension): group `i`'s slice of
//! both operands' ragged dimension, one product per group stacked along
//! the result's leading group dimension, zero for an empty group. Mode 3
//! (ragged batch dimension): the `dot_general`. Group sizes are clamped to
//! what is there, so a bad size never reads outside lhs. `group_sizes` of
//! rank > 1 (sizes per batch element or earlier index): one grouped
//! product per index of its prefix, concatenated into place (or summed
//! where a prefix dimension is contracted).
//!
//! On a device's blocks ([`BlockStart`], the partitioner's optional fourth
//! and fifth operands: the first global index of the block of the ragged
//! dimension, the first global group of the block of groups — rhs's in
//! mode 1, the result's in mode 2), local group `j` is global group
//! `h + j`, its global range is intersected with the block's, and groups
//! outside the block are zero (another device adds them).

use crate::ir::ops::constant::Constant;
use crate::ir::ops::dot_general::DotGeneral;
use crate::ir::ops::ragged_dot::{RaggedDot, RaggedMode, RaggedPlan};
use crate::ir::{BinaryOp, DenseLiteral, DotDims, ElemType, OpKind, Scalar, TensorType};

/// Where a step's operand comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Src {
    Lhs,
    Rhs,
    /// The result of an earlier step.
    Step(usize),
}

/// One op of the expansion: `kind` applied to `operands`, giving `ty`.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub kind: OpKind,
    pub operands: Vec<Src>,
    pub ty: TensorType,
}

/// The ops that compute one ragged dot, and which value is its result.
#[derive(Debug, Clone, PartialEq)]
pub struct RaggedSteps {
    steps: Vec<Step>,
    result: Src,
}

impl RaggedSteps {
    /// The steps in order; each reads only the operands and earlier steps.
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    pub fn result(&self) -> Src {
        self.result
    }
}

/// Where a device's blocks start: the first global index of its block of
/// lhs's ragged dimension, the first global group of its block of groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockStart {
    pub row: i64,
    pub group: i64,
}

/// The steps of `op` on operands of types `lhs`, `rhs` with group sizes
/// `sizes` (row-major, of shape `sizes_shape`), on a device's blocks when
/// `start` is given, with result type `out`.
pub fn expand(
    op: &RaggedDot,
    lhs: &TensorType,
    rhs: &TensorType,
    sizes_shape: &[i64],
    sizes: &[i64],
    start: Option<BlockStart>,
    out: &TensorType,
) -> Result<RaggedSteps, String> {
    let plan = op.plan(lhs.shape.len(), rhs.shape.len())?;
    let mut b = Builder::default();
    let l = Val {
        src: Src::Lhs,
        ty: lhs.clone(),
    };
    let r = Val {
        src: Src::Rhs,
        ty: rhs.clone(),
    };
    let result = if plan.mode == RaggedMode::Batch {
        b.dot(&l, &r, &plan.per_group, out.clone())
    } else {
        let Some((&g, prefix_shape)) = sizes_shape.split_last() else {
            return Err("group_sizes is a scalar".into());
        };
        let g = usize::try_from(g).map_err(|_| format!("{g} groups"))?;
        if sizes.len() != sizes_shape.iter().product::<i64>().max(0) as usize {
            return Err(format!(
                "{} group sizes for group_sizes of shape {sizes_shape:?}",
                sizes.len()
            ));
        }
        let at = Grouped {
            plan: &plan,
            start: start.unwrap_or(BlockStart { row: 0, group: 0 }),
            local: start.is_some(),
        };
        if prefix_shape.is_empty() {
            at.grouped(&mut b, &l, &r, sizes, out)?
        } else {
            at.per_prefix(&mut b, op, &l, &r, (g, prefix_shape), sizes, out)?
        }
    };
    Ok(RaggedSteps {
        steps: b.steps,
        result: result.src,
    })
}

/// Runs `steps` on `lhs` and `rhs`, each step by `eval` (a backend's
/// kernel for one op and its result type). A value is dropped after its
/// last use, so the blocks of many groups are not all held at once.
pub fn run<V, E>(
    steps: &RaggedSteps,
    lhs: &V,
    rhs: &V,
    mut eval: impl FnMut(&OpKind, &[&V], &TensorType) -> Result<V, E>,
) -> Result<V, E>
where
    V: Clone,
{
    let mut last = vec![usize::MAX; steps.steps.len()];
    for (i, s) in steps.steps.iter().enumerate() {
        for src in &s.operands {
            if let Src::Step(k) = *src {
                last[k] = i;
            }
        }
    }
    let mut vals: Vec<Option<V>> = Vec::with_capacity(steps.steps.len());
    for (i, s) in steps.steps.iter().enumerate() {
        let v = {
            let ops: Vec<&V> = s
                .operands
                .iter()
                .map(|src| match *src {
                    Src::Lhs => lhs,
                    Src::Rhs => rhs,
                    // `expand` builds steps in order and a value is kept
                    // until its last use, so it is present.
                    Src::Step(k) => match vals[k].as_ref() {
                        Some(v) => v,
                        None => unreachable!("step {k} read after its last use"),
                    },
                })
                .collect();
            eval(&s.kind, &ops, &s.ty)?
        };
        for src in &s.operands {
            if let Src::Step(k) = *src {
                if last[k] == i && steps.result != Src::Step(k) {
                    vals[k] = None;
                }
            }
        }
        vals.push(Some(v));
    }
    Ok(match steps.result {
        Src::Lhs => lhs.clone(),
        Src::Rhs => rhs.clone(),
        Src::Step(k) => match vals.get_mut(k).and_then(Option::take) {
            Some(v) => v,
            None => unreachable!("the result step is kept"),
        },
    })
}

/// A value of the expansion and its type.
#[derive(Debug, Clone)]
struct Val {
    src: Src,
    ty: TensorType,
}

#[derive(Default)]
struct Builder {
    steps: Vec<Step>,
}

fn zero_of(elem: ElemType) -> Scalar {
    match elem {
        ElemType::I1 => Scalar::Bool(false),
        e if e.is_float() => Scalar::Float(0.0),
        _ => Scalar::Int(0),
    }
}

impl Builder {
    fn push(&mut self, kind: OpKind, operands: &[&Val], ty: TensorType) -> Val {
        self.steps.push(Step {
            kind,
            operands: operands.iter().map(|v| v.src).collect(),
            ty: ty.clone(),
        });
        Val {
            src: Src::Step(self.steps.len() - 1),
            ty,
        }
    }

    /// `x`'s box `[lo, hi)`.
    fn slice_box(&mut self, x: &Val, lo: Vec<i64>, hi: Vec<i64>) -> Val {
        let mut ty = x.ty.clone();
        for (d, (l, h)) in ty.shape.iter_mut().zip(lo.iter().zip(&hi)) {
            *d = h - l;
        }
        let strides = vec![1; lo.len()];
        self.push(
            OpKind::Slice(crate::ir::ops::slice::Slice {
                start: lo,
                limit: hi,
                strides,
            }),
            &[x],
            ty,
        )
    }

    /// `x`'s range `[lo, hi)` of dimension `dim`.
    fn range(&mut self, x: &Val, dim: usize, lo: i64, hi: i64) -> Val {
        let mut start = vec![0; x.ty.shape.len()];
        let mut limit = x.ty.shape.clone();
        (start[dim], limit[dim]) = (lo, hi);
        self.slice_box(x, start, limit)
    }

    fn reshape(&mut self, x: &Val, ty: TensorType) -> Val {
        self.push(OpKind::Reshape(crate::ir::ops::reshape::Reshape), &[x], ty)
    }

    fn zeros(&mut self, ty: TensorType) -> Val {
        let lit = DenseLiteral::Splat(zero_of(ty.elem));
        self.push(OpKind::Constant(Constant::new(lit)), &[], ty)
    }

    fn dot(&mut self, l: &Val, r: &Val, dims: &DotDims, ty: TensorType) -> Val {
        let kind = OpKind::DotGeneral(DotGeneral::new(dims.clone()));
        self.push(kind, &[l, r], ty)
    }

    /// `parts` side by side along `dim` (the part itself when alone).
    fn concat(&mut self, parts: &[Val], dim: usize) -> Val {
        if let [one] = parts {
            return one.clone();
        }
        let mut ty = parts[0].ty.clone();
        ty.shape[dim] = parts.iter().map(|p| p.ty.shape[dim]).sum();
        let refs: Vec<&Val> = parts.iter().collect();
        self.push(
            OpKind::Concatenate(crate::ir::ops::concatenate::Concatenate { dim: dim as i64 }),
            &refs,
            ty,
        )
    }

    /// `x` placed at `lo` in zeros of type `ty`.
    fn place(&mut self, x: &Val, lo: &[i64], ty: &TensorType) -> Val {
        let zero = self.zeros(TensorType::new(vec![], ty.elem));
        let high: Vec<i64> = (0..lo.len())
            .map(|d| ty.shape[d] - lo[d] - x.ty.shape[d])
            .collect();
        let kind = OpKind::Pad(crate::ir::ops::pad::Pad {
            low: lo.to_vec(),
            high,
            interior: vec![0; lo.len()],
        });
        self.push(kind, &[x, &zero], ty.clone())
    }

    fn add(&mut self, a: &Val, b: &Val) -> Val {
        self.push(OpKind::Binary(BinaryOp::Add), &[a, b], a.ty.clone())
    }
}

/// The start and end of every group's range, sizes clamped at zero.
fn ranges(sizes: &[i64]) -> Vec<(i64, i64)> {
    let mut at = 0i64;
    sizes
        .iter()
        .map(|&n| {
            let s = at;
            at = at.saturating_add(n.max(0));
            (s, at)
        })
        .collect()
}

/// One grouped product's plan and where the device's blocks start.
struct Grouped<'a> {
    plan: &'a RaggedPlan,
    start: BlockStart,
    /// Whether the operands are a device's blocks (else the whole op).
    local: bool,
}

impl Grouped<'_> {
    /// One grouped product with one size per group.
    fn grouped(
        &self,
        b: &mut Builder,
        lhs: &Val,
        rhs: &Val,
        sizes: &[i64],
        out: &TensorType,
    ) -> Result<Val, String> {
        match self.plan.mode {
            RaggedMode::Rows { group } => self.rows(b, group, lhs, rhs, sizes, out),
            RaggedMode::Contracting { rhs_ragged } => {
                self.contracting(b, rhs_ragged, lhs, rhs, sizes, out)
            }
            RaggedMode::Batch => Ok(b.dot(lhs, rhs, &self.plan.per_group, out.clone())),
        }
    }

    /// Mode 1: each group's rows times its matrix.
    fn rows(
        &self,
        b: &mut Builder,
        group: usize,
        lhs: &Val,
        rhs: &Val,
        sizes: &[i64],
        out: &TensorType,
    ) -> Result<Val, String> {
        let at = self.start;
        let local_groups = rhs.ty.shape[group];
        if at.group < 0 || (!self.local && sizes.len() as i64 != local_groups) {
            return Err(format!(
                "{} group sizes for groups {}..{}",
                sizes.len(),
                at.group,
                at.group + local_groups
            ));
        }
        let ragged = self.plan.ragged;
        let out_ragged = self.plan.out_ragged;
        let rows = lhs.ty.shape[ragged];
        let block_type = |n: i64| {
            let mut t = out.clone();
            t.shape[out_ragged] = n;
            t
        };
        let mut one = rhs.ty.clone();
        one.shape.remove(group);
        let mut blocks = Vec::new();
        // The next local row.
        let mut next = 0i64;
        for (g, (s, e)) in ranges(sizes).into_iter().enumerate() {
            let lo = s.max(at.row) - at.row;
            let n = (e.min(at.row + rows) - at.row - lo).max(0);
            // The group's index in rhs's block (padding groups past the
            // sizes are never reached).
            let j = g as i64 - at.group;
            if n == 0 || !(0..local_groups).contains(&j) {
                continue;
            }
            if lo > next {
                blocks.push(b.zeros(block_type(lo - next)));
                next = lo;
            }
            let rows_g = b.range(lhs, ragged, next, next + n);
            let rhs_g = b.range(rhs, group, j, j + 1);
            let rhs_g = b.reshape(&rhs_g, one.clone());
            blocks.push(b.dot(&rows_g, &rhs_g, &self.plan.per_group, block_type(n)));
            next += n;
        }
        if next < rows || blocks.is_empty() {
            blocks.push(b.zeros(block_type(rows - next)));
        }
        Ok(b.concat(&blocks, out_ragged))
    }

    /// Mode 2: one product per group over its range of the contracting
    /// dimension, stacked along the result's leading group dimension.
    fn contracting(
        &self,
        b: &mut Builder,
        rhs_ragged: usize,
        lhs: &Val,
        rhs: &Val,
        sizes: &[i64],
        out: &TensorType,
    ) -> Result<Val, String> {
        let at = self.start;
        let Some((&local_groups, rest)) = out.shape.split_first() else {
            return Err("the result has no group dimension".into());
        };
        if at.group < 0 || (!self.local && sizes.len() as i64 != local_groups) {
            return Err(format!(
                "{} group sizes for {local_groups} result groups",
                sizes.len()
            ));
        }
        if local_groups <= 0 {
            return Ok(b.zeros(out.clone()));
        }
        let len = lhs.ty.shape[self.plan.ragged];
        let mut block = out.clone();
        block.shape = rest.to_vec();
        let mut stacked = block.clone();
        stacked.shape.insert(0, 1);
        let ranges = ranges(sizes);
        let mut blocks = Vec::with_capacity(local_groups as usize);
        for j in 0..local_groups {
            let (s, e) = usize::try_from(at.group + j)
                .ok()
                .and_then(|g| ranges.get(g).copied())
                .unwrap_or((0, 0));
            let lo = s.max(at.row) - at.row;
            let hi = e.min(at.row + len) - at.row;
            let product = if hi > lo {
                let l = b.range(lhs, self.plan.ragged, lo, hi);
                let r = b.range(rhs, rhs_ragged, lo, hi);
                let p = b.dot(&l, &r, &self.plan.per_group, block.clone());
                b.reshape(&p, stacked.clone())
            } else {
                b.zeros(stacked.clone())
            };
            blocks.push(product);
        }
        Ok(b.concat(&blocks, 0))
    }

    /// One grouped product per index of `group_sizes`' prefix (its
    /// dimensions before the last), each on that index's slices of the
    /// operands: concatenated into place when every prefix dimension is a
    /// result dimension, else (a contracted prefix dimension) placed in
    /// zeros and summed.
    #[allow(clippy::too_many_arguments)]
    fn per_prefix(
        &self,
        b: &mut Builder,
        op: &RaggedDot,
        lhs: &Val,
        rhs: &Val,
        (g, prefix_shape): (usize, &[i64]),
        sizes: &[i64],
        out: &TensorType,
    ) -> Result<Val, String> {
        let dims = self.plan.prefix_dims(&op.dims, lhs.ty.shape.len());
        let prefix: Vec<usize> = prefix_shape.iter().map(|&e| e.max(0) as usize).collect();
        if dims.len() != prefix.len() || g == 0 {
            return Err(format!(
                "group_sizes {:?} does not match the operands' prefix dims",
                [prefix_shape, &[g as i64]].concat()
            ));
        }
        let mut parts = Vec::new();
        let mut boxes = Vec::new();
        for (n, row) in sizes.chunks(g).enumerate() {
            let (mut l_lo, mut l_hi) = (vec![0; lhs.ty.shape.len()], lhs.ty.shape.clone());
            let (mut r_lo, mut r_hi) = (vec![0; rhs.ty.shape.len()], rhs.ty.shape.clone());
            let (mut o_lo, mut o_hi) = (vec![0; out.shape.len()], out.shape.clone());
            let mut rest = n;
            for (pd, &extent) in dims.iter().zip(&prefix).rev() {
                let i = (rest % extent) as i64;
                rest /= extent;
                (l_lo[pd.lhs], l_hi[pd.lhs]) = (i, i + 1);
                if let Some(r) = pd.rhs {
                    (r_lo[r], r_hi[r]) = (i, i + 1);
                }
                if let Some(o) = pd.out {
                    (o_lo[o], o_hi[o]) = (i, i + 1);
                }
            }
            let sub_l = b.slice_box(lhs, l_lo, l_hi);
            let sub_r = b.slice_box(rhs, r_lo, r_hi);
            let mut sub_ty = out.clone();
            for (d, (lo, hi)) in sub_ty.shape.iter_mut().zip(o_lo.iter().zip(&o_hi)) {
                *d = hi - lo;
            }
            parts.push(self.grouped(b, &sub_l, &sub_r, row, &sub_ty)?);
            boxes.push(o_lo);
        }
        if parts.is_empty() {
            // An empty prefix dimension: no products, an empty result.
            return Ok(b.zeros(out.clone()));
        }
        let outs: Option<Vec<usize>> = dims.iter().map(|pd| pd.out).collect();
        if let Some(outs) = outs {
            // Row-major prefix order: the innermost prefix dimension's
            // parts are consecutive; join them, then the next one out.
            let mut level = parts;
            for (&o, &extent) in outs.iter().zip(&prefix).rev() {
                level = level.chunks(extent).map(|c| b.concat(c, o)).collect();
            }
            return Ok(level.swap_remove(0));
        }
        let mut acc: Option<Val> = None;
        for (part, lo) in parts.iter().zip(&boxes) {
            let placed = b.place(part, lo, out);
            acc = Some(match acc {
                Some(a) => b.add(&a, &placed),
                None => placed,
            });
        }
        Ok(acc.unwrap_or_else(|| b.zeros(out.clone())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::ops::ragged_dot::RaggedDotDims;

    fn lax_ragged_dot() -> RaggedDot {
        RaggedDot {
            dims: RaggedDotDims {
                lhs_contract: vec![1],
                rhs_contract: vec![1],
                lhs_ragged: vec![0],
                rhs_group: vec![0],
                ..Default::default()
            },
        }
    }

    fn f32(shape: &[i64]) -> TensorType {
        TensorType::new(shape.to_vec(), ElemType::F32)
    }

    /// `lax.ragged_dot` of lhs `[m, 5]` with rhs `[groups, 5, 7]`.
    fn lax_steps(
        m: i64,
        groups: i64,
        sizes: &[i64],
        start: Option<BlockStart>,
    ) -> Result<RaggedSteps, String> {
        expand(
            &lax_ragged_dot(),
            &f32(&[m, 5]),
            &f32(&[groups, 5, 7]),
            &[sizes.len() as i64],
            sizes,
            start,
            &f32(&[m, 7]),
        )
    }

    fn names(s: &RaggedSteps) -> Vec<&'static str> {
        s.steps
            .iter()
            .map(|s| match s.kind {
                OpKind::Slice(_) => "slice",
                OpKind::Reshape(_) => "reshape",
                OpKind::DotGeneral(_) => "dot",
                OpKind::Constant(_) => "zeros",
                OpKind::Concatenate(_) => "concat",
                OpKind::Pad(_) => "pad",
                OpKind::Binary(_) => "add",
                _ => "other",
            })
            .collect()
    }

    /// Mode 1 on 12 rows, groups of 3, 0, 5 rows: one product per
    /// non-empty group (an empty group costs nothing), the 4 rows past
    /// the groups are zeros, and the blocks are joined along the rows.
    #[test]
    fn rows_mode_is_a_product_per_group_and_zeros_past_them() {
        let s = lax_steps(12, 3, &[3, 0, 5], None).unwrap();
        assert_eq!(
            names(&s),
            [
                "slice", "slice", "reshape", "dot", "slice", "slice", "reshape", "dot", "zeros",
                "concat"
            ]
        );
        let shapes: Vec<Vec<i64>> = s.steps.iter().map(|s| s.ty.shape.clone()).collect();
        assert_eq!(shapes[3], [3, 7]);
        assert_eq!(shapes[7], [5, 7]);
        assert_eq!(shapes[8], [4, 7]);
        assert_eq!(s.result, Src::Step(9));
        // A device's rows 6..12 with rhs's groups 1..3: group 2's rows
        // 3..8 overlap at 6..8; the other four rows are zeros.
        let s = lax_steps(6, 2, &[3, 0, 5], Some(BlockStart { row: 6, group: 1 })).unwrap();
        assert_eq!(
            names(&s),
            ["slice", "slice", "reshape", "dot", "zeros", "concat"]
        );
        assert_eq!(
            s.steps[0].kind,
            OpKind::Slice(crate::ir::ops::slice::Slice {
                start: vec![0, 0],
                limit: vec![2, 5],
                strides: vec![1, 1]
            })
        );
        assert_eq!(
            s.steps[1].kind,
            OpKind::Slice(crate::ir::ops::slice::Slice {
                start: vec![1, 0, 0],
                limit: vec![2, 5, 7],
                strides: vec![1, 1, 1]
            })
        );
    }

    /// Wrong counts are one-line errors, not panics.
    #[test]
    fn sizes_that_do_not_match_are_refused() {
        let e = lax_steps(12, 3, &[3, 0], None).unwrap_err();
        assert_eq!(e, "2 group sizes for groups 0..3");
        let e = expand(
            &lax_ragged_dot(),
            &f32(&[12, 5]),
            &f32(&[3, 5, 7]),
            &[3],
            &[3, 0],
            None,
            &f32(&[12, 7]),
        )
        .unwrap_err();
        assert!(e.contains("2 group sizes"), "{e}");
    }

    /// Sizes per batch element with an empty batch: an empty result, no
    /// products (and no panic).
    #[test]
    fn an_empty_batch_gives_an_empty_result() {
        let op = RaggedDot {
            dims: RaggedDotDims {
                lhs_batch: vec![0],
                rhs_batch: vec![0],
                lhs_contract: vec![2],
                rhs_contract: vec![2],
                lhs_ragged: vec![1],
                rhs_group: vec![1],
            },
        };
        let s = expand(
            &op,
            &f32(&[0, 6, 4]),
            &f32(&[0, 3, 4, 5]),
            &[0, 3],
            &[],
            None,
            &f32(&[0, 6, 5]),
        )
        .unwrap();
        assert_eq!(names(&s), ["zeros"]);
    }

    /// `run` frees each value after its last use and returns the result:
    /// with integers for values and a sum for every op, the result is the
    /// sum over the steps' dependency tree.
    #[test]
    fn run_interprets_the_steps_in_order() {
        let s = lax_steps(12, 3, &[3, 0, 5], None).unwrap();
        let mut seen = 0;
        let got: Result<i64, String> = run(&s, &1, &10, |_, ops, _| {
            seen += 1;
            Ok(ops.iter().copied().sum::<i64>() + 100)
        });
        assert_eq!(seen, s.steps.len());
        // concat(dot(slice(l), reshape(slice(r))) x2, zeros):
        // each dot = (1+100) + (10+100+100) + 100 = 411; zeros 100.
        assert_eq!(got.unwrap(), 411 + 411 + 100 + 100);
    }
}
