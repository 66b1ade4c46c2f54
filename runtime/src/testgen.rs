//! Random sharded programs for differential tests: the generator of
//! `tests/differential.rs`, here so that other test suites (the MPI
//! backend's) run the same programs.
//!
//! [`program`] writes a random program as the MLIR text JAX prints: chains
//! of element-wise ops, `dot_general` (with batching and contracting dims),
//! `reshape`, `transpose`, `broadcast_in_dim` and `reduce` (add, max, min),
//! on random shapes that include non-divisible sizes (7, 13, 1), with
//! random shardings (some open, some by constraints) on a random mesh of
//! 1-3 axes of sizes 1-4, sometimes with a custom `device_ids` order and a
//! second mesh over the same devices in another order. Values stay in
//! ranges where f32 rounding cannot be amplified past a 1e-5 tolerance.

use std::fmt::Write;

use meshrun_compiler::ir::OpKind;
use meshrun_compiler::partition::global::GStepKind;
use meshrun_compiler::partition::PartitionedProgram;
use meshrun_compiler::sharding::layout::TensorLayout;

use crate::random_inputs::SplitMix64;

/// Largest number of elements of any generated tensor.
const MAX_ELEMS: i64 = 3000;
const SIZES: [i64; 11] = [1, 2, 3, 4, 5, 6, 7, 8, 12, 13, 16];

struct Rng(SplitMix64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0.below(n as u64) as usize
    }
    fn chance(&mut self, p: f64) -> bool {
        self.0.next_f64() < p
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i + 1);
            v.swap(i, j);
        }
    }
}

#[derive(Clone)]
struct Mesh {
    name: String,
    axes: Vec<(String, i64)>,
    device_ids: Option<Vec<i64>>,
}

impl Mesh {
    fn text(&self) -> String {
        let axes: Vec<String> = self
            .axes
            .iter()
            .map(|(n, s)| format!("\"{n}\"={s}"))
            .collect();
        let ids = self.device_ids.as_ref().map_or(String::new(), |ids| {
            let v: Vec<String> = ids.iter().map(|d| d.to_string()).collect();
            format!(", device_ids=[{}]", v.join(", "))
        });
        format!("  sdy.mesh @{} = <[{}]{ids}>\n", self.name, axes.join(", "))
    }
}

#[derive(Clone)]
struct Val {
    name: String,
    shape: Vec<i64>,
    /// An upper bound of the magnitude of every element.
    bound: f64,
}

fn ty(shape: &[i64]) -> String {
    if shape.is_empty() {
        "tensor<f32>".into()
    } else {
        let d: Vec<String> = shape.iter().map(|x| x.to_string()).collect();
        format!("tensor<{}xf32>", d.join("x"))
    }
}

fn list(v: &[usize]) -> String {
    let s: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    format!("[{}]", s.join(", "))
}

fn elems(shape: &[i64]) -> i64 {
    shape.iter().product()
}

struct Gen {
    rng: Rng,
    /// Whether shardings may name axes of size 1 (propagation mishandles
    /// them; see `tests/differential.rs`).
    size_one_axes: bool,
    meshes: Vec<Mesh>,
    args: Vec<(Val, Option<String>)>,
    body: String,
    values: Vec<Val>,
    next: usize,
}

impl Gen {
    fn new(seed: u64, size_one_axes: bool) -> Gen {
        let mut rng = Rng(SplitMix64::new(seed));
        let n_axes = 1 + rng.below(3);
        let names = ["a", "b", "c"];
        let axes: Vec<(String, i64)> = (0..n_axes)
            .map(|i| (names[i].to_string(), 1 + rng.below(4) as i64))
            .collect();
        let n: i64 = axes.iter().map(|a| a.1).product();
        // A custom order, or `None` when the shuffle gave the default one
        // (which must not be written).
        let permuted = |rng: &mut Rng| {
            let mut ids: Vec<i64> = (0..n).collect();
            rng.shuffle(&mut ids);
            ids.iter()
                .enumerate()
                .any(|(i, &d)| d != i as i64)
                .then_some(ids)
        };
        let mut meshes = vec![Mesh {
            name: "mesh".into(),
            axes: axes.clone(),
            device_ids: if rng.chance(0.3) {
                permuted(&mut rng)
            } else {
                None
            },
        }];
        if n > 1 && rng.chance(0.2) {
            meshes.push(Mesh {
                name: "mesh2".into(),
                axes,
                device_ids: permuted(&mut rng),
            });
        }
        Gen {
            rng,
            size_one_axes,
            meshes,
            args: Vec::new(),
            body: String::new(),
            values: Vec::new(),
            next: 0,
        }
    }

    /// A random sharding of a rank-`rank` tensor on a random mesh (each
    /// axis used at most once), in `<@mesh, [...]>` form; some dims open.
    fn sharding(&mut self, shape: &[i64]) -> String {
        let mesh = self.rng.pick(&self.meshes).clone();
        let mut dims: Vec<Vec<String>> = vec![Vec::new(); shape.len()];
        let mut order: Vec<usize> = (0..mesh.axes.len()).collect();
        self.rng.shuffle(&mut order);
        if !shape.is_empty() {
            for a in order {
                let usable = self.size_one_axes || mesh.axes[a].1 > 1;
                if usable && self.rng.chance(0.6) {
                    let d = self.rng.below(shape.len());
                    dims[d].push(format!("\"{}\"", mesh.axes[a].0));
                }
            }
        }
        let dims: Vec<String> = dims
            .into_iter()
            .map(|axes| {
                let open = self.rng.chance(0.15);
                match (axes.is_empty(), open) {
                    (true, true) => "{?}".to_string(),
                    (true, false) => "{}".to_string(),
                    (false, true) => format!("{{{}, ?}}", axes.join(", ")),
                    (false, false) => format!("{{{}}}", axes.join(", ")),
                }
            })
            .collect();
        format!("<@{}, [{}]>", mesh.name, dims.join(", "))
    }

    fn random_shape(&mut self, rank: usize) -> Vec<i64> {
        loop {
            let s: Vec<i64> = (0..rank).map(|_| *self.rng.pick(&SIZES)).collect();
            if elems(&s) <= MAX_ELEMS {
                return s;
            }
        }
    }

    fn new_arg(&mut self, shape: Vec<i64>) -> Val {
        let name = format!("%arg{}", self.args.len());
        let v = Val {
            name,
            shape: shape.clone(),
            bound: 1.0,
        };
        let s = (!self.rng.chance(0.25)).then(|| self.sharding(&shape));
        self.args.push((v.clone(), s));
        v
    }

    fn fresh(&mut self) -> String {
        self.next += 1;
        format!("%v{}", self.next)
    }

    fn push(&mut self, line: String, v: Val) -> Val {
        let _ = writeln!(self.body, "    {line}");
        self.values.push(v.clone());
        v
    }

    fn pick_value(&mut self) -> Val {
        let k = self.values.len();
        // Prefer recent values, so programs are chains rather than fans.
        let i = if self.rng.chance(0.6) {
            k - 1 - self.rng.below(k.min(3))
        } else {
            self.rng.below(k)
        };
        self.values[i].clone()
    }

    fn unary(&mut self, x: Val) -> Val {
        let mut ops: Vec<&str> = vec!["negate", "abs"];
        if x.bound <= 16.0 {
            ops.extend(["tanh", "sine", "cosine", "logistic"]);
        }
        if x.bound <= 2.0 {
            ops.push("exponential");
        }
        let op = *self.rng.pick(&ops);
        let bound = match op {
            "negate" | "abs" => x.bound,
            "exponential" => x.bound.exp(),
            _ => 1.0,
        };
        let name = self.fresh();
        let line = format!("{name} = stablehlo.{op} {} : {}", x.name, ty(&x.shape));
        self.push(
            line,
            Val {
                name,
                shape: x.shape,
                bound,
            },
        )
    }

    fn binary(&mut self, x: Val) -> Val {
        let same: Vec<Val> = self
            .values
            .iter()
            .filter(|v| v.shape == x.shape)
            .cloned()
            .collect();
        let y = self.rng.pick(&same).clone();
        let mut ops = vec!["add", "subtract", "maximum", "minimum"];
        if x.bound * y.bound <= 1e4 {
            ops.push("multiply");
        }
        let op = *self.rng.pick(&ops);
        let bound = match op {
            "add" | "subtract" => x.bound + y.bound,
            "multiply" => x.bound * y.bound,
            _ => x.bound.max(y.bound),
        };
        let name = self.fresh();
        let line = format!(
            "{name} = stablehlo.{op} {}, {} : {}",
            x.name,
            y.name,
            ty(&x.shape)
        );
        self.push(
            line,
            Val {
                name,
                shape: x.shape,
                bound,
            },
        )
    }

    fn broadcast(&mut self, x: Val) -> Option<Val> {
        if x.shape.len() >= 3 {
            return None;
        }
        let size = *self.rng.pick(&SIZES);
        let at = self.rng.below(x.shape.len() + 1);
        let mut shape = x.shape.clone();
        shape.insert(at, size);
        if elems(&shape) > MAX_ELEMS {
            return None;
        }
        let dims: Vec<usize> = (0..x.shape.len())
            .map(|i| if i < at { i } else { i + 1 })
            .collect();
        let name = self.fresh();
        let line = format!(
            "{name} = stablehlo.broadcast_in_dim {}, dims = {} : ({}) -> {}",
            x.name,
            list(&dims),
            ty(&x.shape),
            ty(&shape)
        );
        Some(self.push(
            line,
            Val {
                name,
                shape,
                bound: x.bound,
            },
        ))
    }

    fn transpose(&mut self, x: Val) -> Option<Val> {
        if x.shape.len() < 2 {
            return None;
        }
        let mut perm: Vec<usize> = (0..x.shape.len()).collect();
        self.rng.shuffle(&mut perm);
        let shape: Vec<i64> = perm.iter().map(|&p| x.shape[p]).collect();
        let name = self.fresh();
        let line = format!(
            "{name} = stablehlo.transpose {}, dims = {} : ({}) -> {}",
            x.name,
            list(&perm),
            ty(&x.shape),
            ty(&shape)
        );
        Some(self.push(
            line,
            Val {
                name,
                shape,
                bound: x.bound,
            },
        ))
    }

    fn reshape(&mut self, x: Val) -> Option<Val> {
        let r = x.shape.len();
        let mut shape = x.shape.clone();
        match self.rng.below(3) {
            // Merge two adjacent dims.
            0 if r >= 2 => {
                let i = self.rng.below(r - 1);
                let merged = shape[i] * shape[i + 1];
                shape.splice(i..i + 2, [merged]);
            }
            // Split a dim into two factors.
            1 if (1..3).contains(&r) => {
                let i = self.rng.below(r);
                let d = shape[i];
                let factors: Vec<i64> = (2..d).filter(|f| d % f == 0).collect();
                if factors.is_empty() {
                    return None;
                }
                let f = *self.rng.pick(&factors);
                shape.splice(i..i + 1, [f, d / f]);
            }
            // Insert or drop a dim of size 1.
            _ => {
                if let Some(i) = shape.iter().position(|&d| d == 1) {
                    shape.remove(i);
                } else if r < 3 {
                    let at = self.rng.below(r + 1);
                    shape.insert(at, 1);
                } else {
                    return None;
                }
            }
        }
        let name = self.fresh();
        let line = format!(
            "{name} = stablehlo.reshape {} : ({}) -> {}",
            x.name,
            ty(&x.shape),
            ty(&shape)
        );
        Some(self.push(
            line,
            Val {
                name,
                shape,
                bound: x.bound,
            },
        ))
    }

    fn reduce(&mut self, x: Val) -> Option<Val> {
        let r = x.shape.len();
        if r == 0 {
            return None;
        }
        let mut dims: Vec<usize> = (0..r).filter(|_| self.rng.chance(0.5)).collect();
        if dims.is_empty() {
            dims.push(self.rng.below(r));
        }
        let (op, init) = *self.rng.pick(&[
            ("add", "0.000000e+00"),
            ("maximum", "0xFF800000"),
            ("minimum", "0x7F800000"),
        ]);
        let n: i64 = dims.iter().map(|&d| x.shape[d]).product();
        let shape: Vec<i64> = (0..r)
            .filter(|d| !dims.contains(d))
            .map(|d| x.shape[d])
            .collect();
        let cst = self.fresh();
        let _ = writeln!(
            self.body,
            "    {cst} = stablehlo.constant dense<{init}> : tensor<f32>"
        );
        let name = self.fresh();
        let line = format!(
            "{name} = stablehlo.reduce({} init: {cst}) applies stablehlo.{op} across dimensions = {} : ({}, tensor<f32>) -> {}",
            x.name,
            list(&dims),
            ty(&x.shape),
            ty(&shape)
        );
        let bound = if op == "add" {
            x.bound * n as f64
        } else {
            x.bound
        };
        Some(self.push(line, Val { name, shape, bound }))
    }

    /// `x` (lhs) times a new argument: contract one dim, maybe batch
    /// another, maybe add a free dim on the rhs.
    fn dot(&mut self, x: Val) -> Option<Val> {
        let r = x.shape.len();
        if r == 0 {
            return None;
        }
        let c = self.rng.below(r);
        let batch: Vec<usize> = if r >= 2 && self.rng.chance(0.4) {
            let b = (0..r).filter(|&d| d != c).collect::<Vec<_>>();
            vec![*self.rng.pick(&b)]
        } else {
            Vec::new()
        };
        let free: Vec<i64> = if self.rng.chance(0.8) {
            vec![*self.rng.pick(&SIZES)]
        } else {
            Vec::new()
        };
        let mut rhs_shape: Vec<i64> = batch.iter().map(|&b| x.shape[b]).collect();
        rhs_shape.push(x.shape[c]);
        rhs_shape.extend(&free);
        let mut out: Vec<i64> = batch.iter().map(|&b| x.shape[b]).collect();
        out.extend(
            (0..r)
                .filter(|d| *d != c && !batch.contains(d))
                .map(|d| x.shape[d]),
        );
        out.extend(&free);
        let k = x.shape[c];
        if out.len() > 3 || elems(&out) > MAX_ELEMS || elems(&rhs_shape) > MAX_ELEMS {
            return None;
        }
        if x.bound * k as f64 > 1e4 {
            return None;
        }
        let rhs = self.new_arg(rhs_shape.clone());
        let nb = batch.len();
        let batching = if batch.is_empty() {
            String::new()
        } else {
            format!(
                "batching_dims = {} x {}, ",
                list(&batch),
                list(&(0..nb).collect::<Vec<_>>())
            )
        };
        let name = self.fresh();
        let line = format!(
            "{name} = stablehlo.dot_general {}, {}, {batching}contracting_dims = [{c}] x [{nb}], precision = [DEFAULT, DEFAULT] : ({}, {}) -> {}",
            x.name,
            rhs.name,
            ty(&x.shape),
            ty(&rhs_shape),
            ty(&out)
        );
        Some(self.push(
            line,
            Val {
                name,
                shape: out,
                bound: x.bound * k as f64,
            },
        ))
    }

    fn constraint(&mut self, x: Val) -> Val {
        let s = self.sharding(&x.shape);
        let name = self.fresh();
        let line = format!(
            "{name} = sdy.sharding_constraint {} {s} : {}",
            x.name,
            ty(&x.shape)
        );
        self.push(line, Val { name, ..x })
    }

    fn op(&mut self) {
        let x = self.pick_value();
        let made = match self.rng.below(9) {
            0 | 1 => Some(self.unary(x)),
            2 => Some(self.binary(x)),
            3 => self.broadcast(x),
            4 => self.transpose(x),
            5 => self.reshape(x),
            6 => self.reduce(x),
            7 => self.dot(x),
            _ => Some(self.constraint(x)),
        };
        if made.is_none() {
            let x = self.pick_value();
            self.unary(x);
        }
    }

    fn program(seed: u64, size_one_axes: bool) -> String {
        let mut g = Gen::new(seed, size_one_axes);
        for _ in 0..1 + g.rng.below(2) {
            let rank = 1 + g.rng.below(3);
            let shape = g.random_shape(rank);
            let v = g.new_arg(shape);
            g.values.push(v);
        }
        let n_ops = 2 + g.rng.below(7);
        for _ in 0..n_ops {
            g.op();
        }
        let mut results = vec![g.values[g.values.len() - 1].clone()];
        if g.values.len() > 2 && g.rng.chance(0.4) {
            let other = g.values[g.rng.below(g.values.len() - 1)].clone();
            results.push(other);
        }
        let mut s = String::from("module @jit_random {\n");
        for m in &g.meshes {
            s.push_str(&m.text());
        }
        let args: Vec<String> = g
            .args
            .iter()
            .map(|(v, sh)| match sh {
                Some(sh) => format!(
                    "{}: {} {{sdy.sharding = #sdy.sharding{}}}",
                    v.name,
                    ty(&v.shape),
                    &sh[0..]
                ),
                None => format!("{}: {}", v.name, ty(&v.shape)),
            })
            .collect();
        let result_types: Vec<String> = results.iter().map(|v| ty(&v.shape)).collect();
        let names: Vec<String> = results.iter().map(|v| v.name.clone()).collect();
        let _ = writeln!(
            s,
            "  func.func public @main({}) -> ({}) {{",
            args.join(", "),
            result_types.join(", ")
        );
        s.push_str(&g.body);
        let _ = writeln!(
            s,
            "    return {} : {}\n  }}\n}}",
            names.join(", "),
            result_types.join(", ")
        );
        s
    }
}

/// The random program of `seed`. With `size_one_axes`, shardings may name
/// mesh axes of size 1 (propagation once mishandled them; see
/// `tests/executor_known_bugs.rs`).
pub fn program(seed: u64, size_one_axes: bool) -> String {
    Gen::program(seed, size_one_axes)
}

/// Whether the partitioned program reshapes a block that has padding.
pub fn has_padded_reshape(program: &PartitionedProgram) -> bool {
    let g = &program.global;
    let padded = |v: usize| {
        let val = &g.values[v];
        g.mesh_of(&val.sharding)
            .and_then(|m| TensorLayout::new(m, &val.sharding, &val.ty.shape).ok())
            .is_some_and(|l| l.is_padded())
    };
    g.steps.iter().any(|s| {
        matches!(s.kind, GStepKind::Compute(OpKind::Reshape))
            && s.operands.iter().chain(&s.results).any(|&v| padded(v))
    })
}
