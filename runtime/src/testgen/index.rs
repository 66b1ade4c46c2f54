//! Generators of the indexing ops, [`index_program`](Gen::index_program):
//! `gather` (`jnp.take` along any axis, with one or two batch dims of ids,
//! some slices cut short; `take_along_axis` with batching dims; `x[i, j]`
//! with an index vector of two), `scatter` (the same shapes, its region
//! add, max, min, multiply or replace, into a computed value or JAX's
//! zeros), `dynamic_slice` and `dynamic_update_slice`, each on randomly
//! sharded operands and ids.
//!
//! Ids come from a new f32 argument `x` in [-1, 1) as `convert(x * s + c)`
//! (`s` a power of two, so the product is exact and a fused multiply-add
//! cannot round differently): they run from -1 to one past the dimension,
//! so some are out of range either way, and repeat. A replacing scatter
//! with repeated ids has no specified result, so its ids are a constant of
//! distinct values (out-of-range ones too), sometimes resharded by a
//! constraint. Start indices of the dynamic slices are constants or come
//! from a scalar argument the same way, out of range too (they clamp).

use std::fmt::Write;

use super::gen::Gen;
use super::text::{elems, list, ty, ty_of, Val, MAX_ELEMS};

/// A scatter's region: its body text and how it bounds the result.
#[derive(Clone, Copy, PartialEq)]
enum Region {
    Add,
    Max,
    Min,
    Mul,
    Replace,
}

impl Region {
    fn body(self) -> &'static str {
        match self {
            Region::Add => "%s = stablehlo.add %a, %b : tensor<f32>\n      stablehlo.return %s : tensor<f32>",
            Region::Max => "%s = stablehlo.maximum %a, %b : tensor<f32>\n      stablehlo.return %s : tensor<f32>",
            Region::Min => "%s = stablehlo.minimum %a, %b : tensor<f32>\n      stablehlo.return %s : tensor<f32>",
            Region::Mul => "%s = stablehlo.multiply %a, %b : tensor<f32>\n      stablehlo.return %s : tensor<f32>",
            Region::Replace => "stablehlo.return %b : tensor<f32>",
        }
    }
}

/// `[a, b]` of i64s.
fn ints(v: &[i64]) -> String {
    let s: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    format!("[{}]", s.join(", "))
}

/// `k` sorted positions out of `0..n`.
fn positions(g: &mut Gen, n: usize, k: usize) -> Vec<usize> {
    let mut all: Vec<usize> = (0..n).collect();
    g.rng.shuffle(&mut all);
    let mut out = all[..k].to_vec();
    out.sort_unstable();
    out
}

impl Gen {
    /// A splat f32 constant of `shape`.
    fn splat(&mut self, value: i64, shape: &[i64]) -> String {
        let (c, b) = (self.fresh(), self.fresh());
        let _ = writeln!(
            self.body,
            "    {c} = stablehlo.constant dense<{value}.0> : tensor<f32>"
        );
        let _ = writeln!(
            self.body,
            "    {b} = stablehlo.broadcast_in_dim {c}, dims = [] : (tensor<f32>) -> {}",
            ty(shape)
        );
        b
    }

    /// i32 ids of `shape` into a dimension of `dim` elements, from a new
    /// argument (see the module doc): -1 to `dim`, repeating.
    fn arg_ids(&mut self, shape: &[i64], dim: i64) -> String {
        let x = self.new_arg(shape.to_vec());
        let scale = ((dim + 4) / 2).max(1) as u64;
        let scale = scale.next_power_of_two() as i64;
        let s = self.splat(scale, shape);
        let c = self.splat(dim / 2, shape);
        let (m, a, ids) = (self.fresh(), self.fresh(), self.fresh());
        let t = ty(shape);
        let b = &mut self.body;
        let _ = writeln!(b, "    {m} = stablehlo.multiply {}, {s} : {t}", x.name);
        let _ = writeln!(b, "    {a} = stablehlo.add {m}, {c} : {t}");
        let _ = writeln!(
            b,
            "    {ids} = stablehlo.convert {a} : ({t}) -> {}",
            ty_of(shape, "i32")
        );
        ids
    }

    /// `n` distinct i32 ids into a dimension of `dim` elements (some out
    /// of range), as a constant, sometimes resharded; `None` if there are
    /// not that many.
    fn unique_ids(&mut self, n: i64, dim: i64) -> Option<String> {
        let mut pool: Vec<i64> = (-2..dim + 2).collect();
        if (pool.len() as i64) < n {
            return None;
        }
        self.rng.shuffle(&mut pool);
        let ids = &pool[..n as usize];
        let name = self.fresh();
        let t = ty_of(&[n], "i32");
        let _ = writeln!(
            self.body,
            "    {name} = stablehlo.constant dense<{}> : {t}",
            ints(ids)
        );
        if !self.rng.chance(0.5) {
            return Some(name);
        }
        let s = self.sharding(&[n]);
        let out = self.fresh();
        let _ = writeln!(
            self.body,
            "    {out} = sdy.sharding_constraint {name} {s} : {t}"
        );
        Some(out)
    }

    /// A scalar i32 start index into a dimension of `dim` elements:
    /// a constant or from a scalar argument, -2 to `dim + 1`.
    fn start_index(&mut self, dim: i64) -> String {
        let name = self.fresh();
        if self.rng.chance(0.5) {
            let v = self.rng.below(dim as usize + 4) as i64 - 2;
            let _ = writeln!(
                self.body,
                "    {name} = stablehlo.constant dense<{v}> : tensor<i32>"
            );
            return name;
        }
        self.arg_ids(&[], dim)
    }

    /// The shape of a value's ids: one or two batch dims, and sometimes a
    /// trailing index-vector dim of 1 (else the index vector is implicit).
    fn ids_shape(&mut self) -> (Vec<i64>, bool) {
        let nb = 1 + usize::from(self.rng.chance(0.3));
        let shape: Vec<i64> = (0..nb)
            .map(|_| *self.rng.pick(&[1i64, 2, 3, 4, 5, 6, 7, 8, 12]))
            .collect();
        (shape, self.rng.chance(0.5))
    }

    /// `jnp.take(x, ids, axis)`: rows of `x` along one axis, offset dims
    /// at random places among the ids' batch dims, a slice sometimes cut
    /// short on another dim.
    pub(super) fn take(&mut self, x: Val) -> Option<Val> {
        let r = x.shape.len();
        if r == 0 {
            return None;
        }
        let axis = self.rng.below(r);
        let (batch, explicit) = self.ids_shape();
        let nb = batch.len();
        let mut sizes = x.shape.clone();
        sizes[axis] = 1;
        if r > 1 && self.rng.chance(0.25) {
            let d = (axis + 1 + self.rng.below(r - 1)) % r;
            sizes[d] = 1 + self.rng.below(x.shape[d] as usize) as i64;
        }
        let window: Vec<i64> = (0..r).filter(|&d| d != axis).map(|d| sizes[d]).collect();
        let offset = positions(self, nb + r - 1, r - 1);
        let shape = interleave(nb + r - 1, &offset, &window, &batch)?;
        if elems(&shape) > MAX_ELEMS {
            return None;
        }
        let mut ids_shape = batch.clone();
        if explicit {
            ids_shape.push(1);
        }
        let ids = self.arg_ids(&ids_shape, x.shape[axis]);
        Some(self.push_gather(&x, &ids, &ids_shape, format!("offset_dims = {}, collapsed_slice_dims = [{axis}], start_index_map = [{axis}], index_vector_dim = {nb}", list(&offset)), &sizes, shape))
    }

    /// `jnp.take_along_axis` as a gather with batching dims: for each
    /// index along dim `b` of `x`, `k` elements along `axis`.
    pub(super) fn take_along(&mut self, x: Val) -> Option<Val> {
        let r = x.shape.len();
        if r < 2 {
            return None;
        }
        let b = self.rng.below(r);
        let axis = (b + 1 + self.rng.below(r - 1)) % r;
        let k = *self.rng.pick(&[1i64, 2, 3, 5, 8]);
        let mut sizes = x.shape.clone();
        sizes[b] = 1;
        sizes[axis] = 1;
        let rest: Vec<usize> = (0..r).filter(|&d| d != b && d != axis).collect();
        let mut shape = vec![x.shape[b], k];
        shape.extend(rest.iter().map(|&d| x.shape[d]));
        if elems(&shape) > MAX_ELEMS {
            return None;
        }
        let ids_shape = [x.shape[b], k, 1];
        let ids = self.arg_ids(&ids_shape, x.shape[axis]);
        let offset: Vec<usize> = (2..2 + rest.len()).collect();
        Some(self.push_gather(&x, &ids, &ids_shape, format!("offset_dims = {}, collapsed_slice_dims = [{axis}], operand_batching_dims = [{b}], start_indices_batching_dims = [0], start_index_map = [{axis}], index_vector_dim = 2", list(&offset)), &sizes, shape))
    }

    /// `x[i, j]` for `n` pairs of ids: an index vector of two over two
    /// dims of `x`, the other dims whole.
    pub(super) fn gather_pairs(&mut self, x: Val) -> Option<Val> {
        let r = x.shape.len();
        if r < 2 {
            return None;
        }
        let mut dims = positions(self, r, 2);
        if self.rng.chance(0.5) {
            dims.reverse();
        }
        let n = *self.rng.pick(&[1i64, 3, 4, 7, 9]);
        let mut sizes = x.shape.clone();
        sizes[dims[0]] = 1;
        sizes[dims[1]] = 1;
        let mut collapsed = dims.clone();
        collapsed.sort_unstable();
        let rest: Vec<i64> = (0..r)
            .filter(|d| !dims.contains(d))
            .map(|d| x.shape[d])
            .collect();
        let mut shape = vec![n];
        shape.extend(&rest);
        let ids_shape = [n, 2];
        let ids = self.arg_ids(&ids_shape, x.shape[dims[0]].max(x.shape[dims[1]]));
        let offset: Vec<usize> = (1..1 + rest.len()).collect();
        Some(self.push_gather(&x, &ids, &ids_shape, format!("offset_dims = {}, collapsed_slice_dims = {}, start_index_map = {}, index_vector_dim = 1", list(&offset), list(&collapsed), list(&dims)), &sizes, shape))
    }

    /// Push a gather of `x` by `ids` with the given dimension numbers
    /// (the text inside `#stablehlo.gather<...>`) and slice sizes.
    fn push_gather(
        &mut self,
        x: &Val,
        ids: &str,
        ids_shape: &[i64],
        dimension_numbers: String,
        sizes: &[i64],
        shape: Vec<i64>,
    ) -> Val {
        let name = self.fresh();
        let line = format!(
            "{name} = \"stablehlo.gather\"({}, {ids}) <{{dimension_numbers = #stablehlo.gather<{dimension_numbers}>, indices_are_sorted = false, slice_sizes = array<i64: {}>}}> : ({}, {}) -> {}",
            x.name,
            sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", "),
            ty(&x.shape),
            ty_of(ids_shape, "i32"),
            ty(&shape)
        );
        self.push(
            line,
            Val {
                name,
                shape,
                bound: x.bound,
            },
        )
    }

    /// A random scatter region; multiply only where products stay small.
    fn region(&mut self, bound: f64) -> Region {
        let mut regions = vec![Region::Add, Region::Max, Region::Min, Region::Replace];
        if bound <= 1.0 {
            regions.push(Region::Mul);
        }
        *self.rng.pick(&regions)
    }

    /// A scatter into `x` (or JAX's zeros of its shape) along one axis:
    /// the transpose of [`take`](Gen::take), updates from a new argument;
    /// with batching dims (`take_along_axis`'s gradient) a third of the
    /// time.
    pub(super) fn scatter(&mut self, x: Val) -> Option<Val> {
        let r = x.shape.len();
        if r == 0 {
            return None;
        }
        let region = self.region(x.bound);
        let batched = r >= 2 && region != Region::Replace && self.rng.chance(0.35);
        let axis = self.rng.below(r);
        let b = batched.then(|| (axis + 1 + self.rng.below(r - 1)) % r);
        // Ids: batch dims (the batching dim first), explicit or implicit
        // index vector.
        let (mut batch, mut explicit) = self.ids_shape();
        if let Some(b) = b {
            batch = vec![x.shape[b], *self.rng.pick(&[1i64, 2, 3, 5])];
            explicit = true;
        }
        if region == Region::Replace {
            batch = vec![batch[0]];
            explicit = false;
        }
        let window_dims: Vec<usize> = (0..r).filter(|&d| d != axis && Some(d) != b).collect();
        let nb = batch.len();
        let nu = nb + window_dims.len();
        let update_window = if b.is_some() {
            (nb..nu).collect()
        } else {
            positions(self, nu, window_dims.len())
        };
        let window: Vec<i64> = window_dims.iter().map(|&d| x.shape[d]).collect();
        let updates = interleave(nu, &update_window, &window, &batch)?;
        if elems(&updates) > MAX_ELEMS {
            return None;
        }
        let mut ids_shape = batch.clone();
        if explicit {
            ids_shape.push(1);
        }
        let ids = if region == Region::Replace {
            self.unique_ids(batch[0], x.shape[axis])?
        } else {
            self.arg_ids(&ids_shape, x.shape[axis])
        };
        let u = self.new_arg(updates.clone());
        let input = if self.rng.chance(0.4) {
            Val {
                name: self.splat(0, &x.shape),
                bound: 0.0,
                ..x.clone()
            }
        } else {
            x.clone()
        };
        let batching = match b {
            Some(b) => {
                format!("input_batching_dims = [{b}], scatter_indices_batching_dims = [0], ")
            }
            None => String::new(),
        };
        let name = self.fresh();
        let line = format!(
            "{name} = \"stablehlo.scatter\"({}, {ids}, {}) <{{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = {}, inserted_window_dims = [{axis}], {batching}scatter_dims_to_operand_dims = [{axis}], index_vector_dim = {nb}>, unique_indices = {}}}> ({{\n    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n      {}\n    }}) : ({}, {}, {}) -> {}",
            input.name,
            u.name,
            list(&update_window),
            region == Region::Replace,
            region.body(),
            ty(&x.shape),
            ty_of(&ids_shape, "i32"),
            ty(&updates),
            ty(&x.shape)
        );
        // Every update row may land on one element.
        let rows = elems(&batch) as f64;
        let bound = match region {
            Region::Add => input.bound + rows * u.bound,
            Region::Mul => 1.0,
            _ => input.bound.max(u.bound),
        };
        Some(self.push(
            line,
            Val {
                name,
                shape: x.shape,
                bound,
            },
        ))
    }

    /// `lax.dynamic_slice` of `x`: a random size per dim, start indices
    /// that may be out of range (they clamp).
    pub(super) fn dynamic_slice(&mut self, x: Val) -> Option<Val> {
        let r = x.shape.len();
        if r == 0 {
            return None;
        }
        let sizes: Vec<i64> = x
            .shape
            .iter()
            .map(|&d| 1 + self.rng.below(d as usize) as i64)
            .collect();
        let starts: Vec<String> = x.shape.iter().map(|&d| self.start_index(d)).collect();
        let name = self.fresh();
        let line = format!(
            "{name} = stablehlo.dynamic_slice {}, {}, sizes = {} : ({}, {}) -> {}",
            x.name,
            starts.join(", "),
            ints(&sizes),
            ty(&x.shape),
            vec!["tensor<i32>"; r].join(", "),
            ty(&sizes)
        );
        Some(self.push(
            line,
            Val {
                name,
                shape: sizes,
                bound: x.bound,
            },
        ))
    }

    /// `lax.dynamic_update_slice` of `x` with a new argument no larger
    /// than it, at start indices that may be out of range (they clamp).
    pub(super) fn dynamic_update_slice(&mut self, x: Val) -> Option<Val> {
        let r = x.shape.len();
        if r == 0 {
            return None;
        }
        let sizes: Vec<i64> = x
            .shape
            .iter()
            .map(|&d| 1 + self.rng.below(d as usize) as i64)
            .collect();
        let u = self.new_arg(sizes.clone());
        let starts: Vec<String> = x.shape.iter().map(|&d| self.start_index(d)).collect();
        let name = self.fresh();
        let line = format!(
            "{name} = stablehlo.dynamic_update_slice {}, {}, {} : ({}, {}, {}) -> {}",
            x.name,
            u.name,
            starts.join(", "),
            ty(&x.shape),
            ty(&sizes),
            vec!["tensor<i32>"; r].join(", "),
            ty(&x.shape)
        );
        let bound = x.bound.max(u.bound);
        Some(self.push(
            line,
            Val {
                name,
                shape: x.shape,
                bound,
            },
        ))
    }

    /// One indexing op on a recent value (see the module doc).
    fn index_op(&mut self) -> Option<Val> {
        let x = self.pick_value();
        match self.rng.below(6) {
            0 => self.take(x),
            1 => self.take_along(x),
            2 => self.gather_pairs(x),
            3 => self.scatter(x),
            4 => self.dynamic_slice(x),
            _ => self.dynamic_update_slice(x),
        }
    }

    /// A program around one or two indexing ops: arguments, a few ops of
    /// the basic mix, the indexing ops, a few more ops that reshard or
    /// reduce their results; with the bound of each result (see
    /// [`program_and_bounds`](super::program_and_bounds)).
    pub(super) fn index_program(seed: u64) -> (String, Vec<f64>) {
        let mut g = Gen::with_args(seed, false);
        for _ in 0..g.rng.below(2) {
            g.op();
        }
        let mut made = Vec::new();
        for _ in 0..20 {
            if let Some(v) = g.index_op() {
                made.push(v);
                if made.len() == 2 || g.rng.chance(0.5) {
                    break;
                }
            }
        }
        if g.rng.chance(0.3) {
            let last = g.values[g.values.len() - 1].clone();
            g.constraint(last);
        }
        for _ in 0..g.rng.below(3) {
            g.op();
        }
        // The last value, and the last indexing op's result where the ops
        // after it left it behind.
        let mut results = vec![g.values[g.values.len() - 1].clone()];
        if let Some(v) = made.last().filter(|v| v.name != results[0].name) {
            results.push(v.clone());
        }
        let bounds = results.iter().map(|v| v.bound).collect();
        (g.module_text(&results), bounds)
    }
}

/// A shape of `rank` dims: the dims at `window_at` take `window`'s sizes
/// in order, the others `batch`'s (a gather's result, a scatter's
/// updates); `None` when the counts do not add up.
fn interleave(rank: usize, window_at: &[usize], window: &[i64], batch: &[i64]) -> Option<Vec<i64>> {
    let (mut w, mut b) = (window.iter(), batch.iter());
    (0..rank)
        .map(|p| {
            if window_at.contains(&p) {
                w.next()
            } else {
                b.next()
            }
            .copied()
        })
        .collect()
}
