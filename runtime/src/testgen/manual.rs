//! Generator of programs as current JAX writes `shard_map` and explicit
//! unreduced shardings, [`manual_program`](Gen::manual_program):
//!
//! - an `sdy.manual_computation` over a random non-empty subset of the
//!   first mesh's axes (partial-manual when some are left free; the mesh
//!   may have a custom device order), its operand's dims split over some
//!   of them (always evenly, as shard_map requires), whose body runs a few
//!   element-wise ops on the local block and one collective written with
//!   mesh-axes replica groups as JAX >= 0.11 prints them
//!   (`#stablehlo.replica_group_mesh_axes`): a psum over one or more
//!   manual axes, an all_gather of a dimension's last axis, a
//!   psum_scatter over an axis the block is replicated along, or an
//!   all_to_all moving a dimension's last axis to another dimension. The
//!   out_shardings say what the collective left: an output is identical
//!   along every manual axis its sharding does not name, as shard_map
//!   checks.
//! - sharding constraints that make a value unreduced
//!   (`unreduced={...}` or `unreduced=max{...}`) over axes it is not a
//!   partial result along (replicated, or sharding a dimension), a linear
//!   op on the partial value (annotated unreduced as JAX prints it), and a
//!   constraint that reduces it; other ops of the basic mix may read the
//!   unreduced value (and must see it reduced).
//!
//! The ops around them come from the basic mix.

use std::fmt::Write;

use super::gen::Gen;
use super::text::{elems, ty, Mesh, Val, MAX_ELEMS};

/// `#stablehlo.replica_group_mesh_axes` over `axes` of `mesh`.
fn mesh_axes_groups(mesh: &str, axes: &[String]) -> String {
    let refs: Vec<String> = axes
        .iter()
        .map(|a| format!("#stablehlo.axis_ref<name = \"{a}\">"))
        .collect();
    format!(
        "#stablehlo.replica_group_mesh_axes<mesh = @{mesh}, axes = [{}]>",
        refs.join(", ")
    )
}

/// `<@mesh, [{"a"}, {}]>` from axis names per dim.
fn dims_text(mesh: &str, dims: &[Vec<String>]) -> String {
    let d: Vec<String> = dims
        .iter()
        .map(|axes| {
            let q: Vec<String> = axes.iter().map(|a| format!("\"{a}\"")).collect();
            format!("{{{}}}", q.join(", "))
        })
        .collect();
    format!("<@{mesh}, [{}]>", d.join(", "))
}

const ADD_BODY: &str = "({\n      ^bb0(%ra: tensor<f32>, %rb: tensor<f32>):\n        %rs = stablehlo.add %ra, %rb : tensor<f32>\n        stablehlo.return %rs : tensor<f32>\n      })";

/// The collective a manual computation's body ends with.
enum Collective {
    None,
    Psum(Vec<String>),
    AllGather {
        axis: String,
        dim: usize,
    },
    PsumScatter {
        axis: String,
        dim: usize,
    },
    AllToAll {
        axis: String,
        from: usize,
        to: usize,
    },
}

impl Gen {
    fn axis_size(mesh: &Mesh, name: &str) -> i64 {
        mesh.axes.iter().find(|a| a.0 == name).map_or(1, |a| a.1)
    }

    /// `x` through an `sdy.manual_computation` (see the module doc), or
    /// `None` for a scalar.
    pub(super) fn shard_map(&mut self, x: Val) -> Option<Val> {
        if x.shape.is_empty() {
            return None;
        }
        let mesh = self.meshes[0].clone();
        let mut manual: Vec<String> = mesh
            .axes
            .iter()
            .filter(|_| self.rng.chance(0.7))
            .map(|a| a.0.clone())
            .collect();
        if manual.is_empty() {
            manual.push(self.rng.pick(&mesh.axes).0.clone());
        }
        let size = |a: &str| Gen::axis_size(&mesh, a);
        // The operand's dims split evenly over some manual axes.
        let rank = x.shape.len();
        let mut dims: Vec<Vec<String>> = vec![Vec::new(); rank];
        let mut order = manual.clone();
        self.rng.shuffle(&mut order);
        for a in &order {
            if !self.rng.chance(0.75) {
                continue;
            }
            let fits: Vec<usize> = (0..rank)
                .filter(|&d| {
                    let split: i64 = dims[d].iter().map(|b| size(b)).product::<i64>() * size(a);
                    x.shape[d] % split == 0
                })
                .collect();
            if !fits.is_empty() {
                let d = *self.rng.pick(&fits);
                dims[d].push(a.clone());
            }
        }
        let split =
            |dims: &[Vec<String>], d: usize| -> i64 { dims[d].iter().map(|b| size(b)).product() };
        let local: Vec<i64> = (0..rank).map(|d| x.shape[d] / split(&dims, d)).collect();
        let collective = self.pick_collective(&manual, &dims, &local, &mesh);
        // The body: element-wise ops, the collective, maybe one more op.
        let saved_body = std::mem::take(&mut self.body);
        let saved_values = std::mem::take(&mut self.values);
        let arg = format!("%m{}", self.next + 1);
        self.next += 1;
        let mut v = Val {
            name: arg.clone(),
            shape: local.clone(),
            bound: x.bound,
        };
        self.values.push(v.clone());
        for _ in 0..self.rng.below(3) {
            v = self.unary(v);
        }
        let mut out_dims = dims.clone();
        let mut out_local = local.clone();
        let groups = |axes: &[String]| mesh_axes_groups(&mesh.name, axes);
        let channel = "channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>";
        let name = self.fresh();
        let line = match &collective {
            Collective::None => None,
            Collective::Psum(axes) => {
                for d in &mut out_dims {
                    d.retain(|a| !axes.contains(a));
                }
                let n: i64 = axes.iter().map(|a| size(a)).product();
                v.bound *= n as f64;
                Some(format!(
                    "{name} = \"stablehlo.all_reduce\"({}) <{{{channel}, replica_groups = {}, use_global_device_ids}}> {ADD_BODY} : ({}) -> {}",
                    v.name,
                    groups(axes),
                    ty(&local),
                    ty(&local)
                ))
            }
            Collective::AllGather { axis, dim } => {
                out_dims[*dim].pop();
                out_local[*dim] *= size(axis);
                Some(format!(
                    "{name} = \"stablehlo.all_gather\"({}) <{{all_gather_dim = {dim} : i64, {channel}, replica_groups = {}, use_global_device_ids}}> : ({}) -> {}",
                    v.name,
                    groups(std::slice::from_ref(axis)),
                    ty(&local),
                    ty(&out_local)
                ))
            }
            Collective::PsumScatter { axis, dim } => {
                out_dims[*dim].push(axis.clone());
                out_local[*dim] /= size(axis);
                v.bound *= size(axis) as f64;
                Some(format!(
                    "{name} = \"stablehlo.reduce_scatter\"({}) <{{{channel}, replica_groups = {}, scatter_dimension = {dim} : i64, use_global_device_ids}}> {ADD_BODY} : ({}) -> {}",
                    v.name,
                    groups(std::slice::from_ref(axis)),
                    ty(&local),
                    ty(&out_local)
                ))
            }
            Collective::AllToAll { axis, from, to } => {
                let n = size(axis);
                out_dims[*from].pop();
                out_dims[*to].push(axis.clone());
                out_local[*from] *= n;
                out_local[*to] /= n;
                Some(format!(
                    "{name} = \"stablehlo.all_to_all\"({}) <{{{channel}, concat_dimension = {from} : i64, replica_groups = {}, split_count = {n} : i64, split_dimension = {to} : i64}}> : ({}) -> {}",
                    v.name,
                    groups(std::slice::from_ref(axis)),
                    ty(&local),
                    ty(&out_local)
                ))
            }
        };
        if let Some(line) = line {
            v = self.push(
                line,
                Val {
                    name,
                    shape: out_local.clone(),
                    bound: v.bound,
                },
            );
        }
        if v.bound <= 16.0 && self.rng.chance(0.4) {
            v = self.unary(v);
        }
        let body = std::mem::replace(&mut self.body, saved_body);
        self.values = saved_values;
        let out_shape: Vec<i64> = (0..rank)
            .map(|d| out_local[d] * split(&out_dims, d))
            .collect();
        let result = self.fresh();
        let mut manual_sorted: Vec<&(String, i64)> =
            mesh.axes.iter().filter(|a| manual.contains(&a.0)).collect();
        manual_sorted.dedup();
        let manual_text: Vec<String> = manual_sorted
            .iter()
            .map(|a| format!("\"{}\"", a.0))
            .collect();
        let mut s = String::new();
        let _ = writeln!(
            s,
            "    {result} = sdy.manual_computation({}) in_shardings=[{}] out_shardings=[{}] manual_axes={{{}}} ({arg}: {}) {{",
            x.name,
            dims_text(&mesh.name, &dims),
            dims_text(&mesh.name, &out_dims),
            manual_text.join(", "),
            ty(&local)
        );
        for l in body.lines() {
            let _ = writeln!(s, "  {l}");
        }
        let _ = writeln!(s, "      sdy.return {} : {}", v.name, ty(&out_local));
        let _ = write!(s, "    }} : ({}) -> {}", ty(&x.shape), ty(&out_shape));
        self.body.push_str(&s);
        self.body.push('\n');
        let out = Val {
            name: result,
            shape: out_shape,
            bound: v.bound,
        };
        self.values.push(out.clone());
        Some(out)
    }

    fn pick_collective(
        &mut self,
        manual: &[String],
        dims: &[Vec<String>],
        local: &[i64],
        mesh: &Mesh,
    ) -> Collective {
        let size = |a: &str| Gen::axis_size(mesh, a);
        let rank = dims.len();
        let unused: Vec<&String> = manual
            .iter()
            .filter(|a| !dims.iter().any(|d| d.contains(a)))
            .collect();
        let mut options: Vec<Collective> = Vec::new();
        // psum over a random non-empty subset, in a random order.
        let mut axes: Vec<String> = manual
            .iter()
            .filter(|_| self.rng.chance(0.5))
            .cloned()
            .collect();
        if axes.is_empty() {
            axes.push(self.rng.pick(manual).clone());
        }
        self.rng.shuffle(&mut axes);
        options.push(Collective::Psum(axes));
        for d in 0..rank {
            if let Some(a) = dims[d].last() {
                if elems(local) * size(a) <= MAX_ELEMS {
                    options.push(Collective::AllGather {
                        axis: a.clone(),
                        dim: d,
                    });
                }
                for to in (0..rank).filter(|&t| t != d && local[t] % size(a) == 0) {
                    options.push(Collective::AllToAll {
                        axis: a.clone(),
                        from: d,
                        to,
                    });
                }
            }
            for a in &unused {
                if local[d] % size(a) == 0 {
                    options.push(Collective::PsumScatter {
                        axis: (*a).clone(),
                        dim: d,
                    });
                }
            }
        }
        if self.rng.chance(0.1) {
            return Collective::None;
        }
        let k = self.rng.below(options.len());
        options.swap_remove(k)
    }

    /// `x` constrained to be unreduced over axes of the first mesh, a
    /// linear op on the partial value, and a constraint that reduces it
    /// (see the module doc); `None` when the mesh has no axis of size > 1.
    pub(super) fn unreduced(&mut self, x: Val) -> Option<Val> {
        let mesh = self.meshes[0].clone();
        let big: Vec<&(String, i64)> = mesh.axes.iter().filter(|a| a.1 > 1).collect();
        if big.is_empty() {
            return None;
        }
        let mut axes: Vec<String> = big
            .iter()
            .filter(|_| self.rng.chance(0.5))
            .map(|a| a.0.clone())
            .collect();
        if axes.is_empty() {
            axes.push(self.rng.pick(&big).0.clone());
        }
        // The other axes may shard dims.
        let mut dims: Vec<Vec<String>> = vec![Vec::new(); x.shape.len()];
        if !x.shape.is_empty() {
            for a in mesh.axes.iter().filter(|a| !axes.contains(&a.0)) {
                if self.rng.chance(0.5) {
                    let d = self.rng.below(x.shape.len());
                    dims[d].push(a.0.clone());
                }
            }
        }
        let max = self.rng.chance(0.25);
        let quoted: Vec<String> = axes.iter().map(|a| format!("\"{a}\"")).collect();
        let base = dims_text(&mesh.name, &dims);
        let sharding = format!(
            "{}, unreduced={}{{{}}}>",
            &base[..base.len() - 1],
            if max { "max" } else { "" },
            quoted.join(", ")
        );
        let t = ty(&x.shape);
        let u = self.fresh();
        let partial = self.push(
            format!("{u} = sdy.sharding_constraint {} {sharding} : {t}", x.name),
            Val {
                name: u.clone(),
                ..x.clone()
            },
        );
        // A linear op on the partial value, annotated as JAX prints it.
        let (line, bound) = match (max, self.rng.below(3)) {
            (true, 0) => (format!("stablehlo.maximum {u}, {u}"), x.bound),
            (false, 0) => (format!("stablehlo.negate {u}"), x.bound),
            (false, 1) => (format!("stablehlo.add {u}, {u}"), 2.0 * x.bound),
            _ => (String::new(), x.bound),
        };
        let mut cur = partial;
        if !line.is_empty() {
            let n = self.fresh();
            let annotated = self.rng.chance(0.7);
            let attr = if annotated {
                format!(
                    " {{sdy.sharding = #sdy.sharding_per_value<[{}]>}}",
                    &sharding
                )
            } else {
                String::new()
            };
            cur = self.push(
                format!("{n} = {line}{attr} : {t}"),
                Val {
                    name: n,
                    shape: x.shape.clone(),
                    bound,
                },
            );
        }
        if self.rng.chance(0.3) {
            // Left unreduced: the next op reads it as it is.
            return Some(cur);
        }
        Some(self.constraint(cur))
    }

    /// A random program around shard_maps and unreduced values.
    pub(super) fn manual_program(seed: u64) -> (String, Vec<f64>) {
        let mut g = Gen::with_args(seed, false);
        for _ in 0..g.rng.below(2) {
            g.op();
        }
        for _ in 0..1 + g.rng.below(3) {
            let x = g.pick_value();
            let made = if g.rng.chance(0.6) {
                g.shard_map(x)
            } else {
                g.unreduced(x)
            };
            if made.is_none() {
                g.op();
            }
        }
        for _ in 0..g.rng.below(3) {
            g.op();
        }
        let mut results = vec![g.values[g.values.len() - 1].clone()];
        if g.values.len() > 2 && g.rng.chance(0.4) {
            let other = g.values[g.rng.below(g.values.len() - 1)].clone();
            if other.name != results[0].name {
                results.push(other);
            }
        }
        let bounds = results.iter().map(|v| v.bound).collect();
        (g.module_text(&results), bounds)
    }
}
