//! The program being written: meshes, arguments, shardings, the op mix.

use std::fmt::Write;

use super::rng::Rng;
use super::text::{elems, ty, Mesh, Val, MAX_ELEMS, SIZES};
use meshrun_compiler::splitmix::SplitMix64;

pub(super) struct Gen {
    pub(super) rng: Rng,
    /// Whether shardings may name axes of size 1 (propagation mishandles
    /// them; see `tests/differential.rs`).
    pub(super) size_one_axes: bool,
    pub(super) meshes: Vec<Mesh>,
    pub(super) args: Vec<(Val, Option<String>)>,
    pub(super) body: String,
    pub(super) values: Vec<Val>,
    pub(super) next: usize,
    /// How many loops and conds the op being written is inside.
    pub(super) depth: usize,
    /// Whether `op` may write loops and conds (`program`'s mix; the other
    /// generators keep their own streams).
    pub(super) with_structure: bool,
}

impl Gen {
    pub(super) fn new(seed: u64, size_one_axes: bool) -> Gen {
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
            depth: 0,
            with_structure: false,
        }
    }

    /// A random sharding of a rank-`rank` tensor on a random mesh (each
    /// axis used at most once), in `<@mesh, [...]>` form; some dims open.
    pub(super) fn sharding(&mut self, shape: &[i64]) -> String {
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

    /// A sharding of a rank-`rank` tensor on the first mesh with one of
    /// its axes of size > 1 (chosen at random) on `dim` and nothing else,
    /// and that axis' size; `None` when the mesh has no such axis.
    pub(super) fn sharding_on(&mut self, rank: usize, dim: usize) -> Option<(String, i64)> {
        let mesh = self.meshes[0].clone();
        let axes: Vec<&(String, i64)> = mesh.axes.iter().filter(|a| a.1 > 1).collect();
        if axes.is_empty() {
            return None;
        }
        let (axis, n) = (*self.rng.pick(&axes)).clone();
        let dims: Vec<String> = (0..rank)
            .map(|d| {
                if d == dim {
                    format!("{{\"{axis}\"}}")
                } else {
                    "{}".to_string()
                }
            })
            .collect();
        Some((format!("<@{}, [{}]>", mesh.name, dims.join(", ")), n))
    }

    pub(super) fn random_shape(&mut self, rank: usize) -> Vec<i64> {
        loop {
            let s: Vec<i64> = (0..rank).map(|_| *self.rng.pick(&SIZES)).collect();
            if elems(&s) <= MAX_ELEMS {
                return s;
            }
        }
    }

    pub(super) fn new_arg(&mut self, shape: Vec<i64>) -> Val {
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

    pub(super) fn fresh(&mut self) -> String {
        self.next += 1;
        format!("%v{}", self.next)
    }

    pub(super) fn push(&mut self, line: String, v: Val) -> Val {
        let _ = writeln!(self.body, "    {line}");
        self.values.push(v.clone());
        v
    }

    pub(super) fn pick_value(&mut self) -> Val {
        let k = self.values.len();
        // Prefer recent values, so programs are chains rather than fans.
        let i = if self.rng.chance(0.6) {
            k - 1 - self.rng.below(k.min(3))
        } else {
            self.rng.below(k)
        };
        self.values[i].clone()
    }

    pub(super) fn op(&mut self) {
        let x = self.pick_value();
        if self.with_structure && self.rng.chance(0.1) && self.structured(x.clone()).is_some() {
            return;
        }
        let made = match self.rng.below(18) {
            0 | 1 => Some(self.unary(x)),
            2 => Some(self.binary(x)),
            3 => self.broadcast(x),
            4 => self.transpose(x),
            5 => self.reshape(x),
            6 => self.reduce(x),
            7 => self.dot(x),
            8 => Some(self.constraint(x)),
            9 => self.reduce_window(x),
            10 => self.max_pool_grad(),
            11 => self.argmax(),
            12 => self.sum_and_max(x),
            13 => self.sort_values(x),
            14 => self.argsort(),
            15 => self.top_k(x),
            16 => Some(self.reduce_precision()),
            _ => self.reverse(x),
        };
        if made.is_none() {
            let x = self.pick_value();
            self.unary(x);
        }
    }

    /// A generator with one or two random arguments of rank 1-3, the
    /// start of every program family.
    pub(super) fn with_args(seed: u64, size_one_axes: bool) -> Gen {
        let mut g = Gen::new(seed, size_one_axes);
        for _ in 0..1 + g.rng.below(2) {
            let rank = 1 + g.rng.below(3);
            let shape = g.random_shape(rank);
            let v = g.new_arg(shape);
            g.values.push(v);
        }
        g
    }

    pub(super) fn program(seed: u64, size_one_axes: bool) -> (String, Vec<f64>) {
        let mut g = Gen::with_args(seed, size_one_axes);
        g.with_structure = true;
        let n_ops = 2 + g.rng.below(7);
        for _ in 0..n_ops {
            g.op();
        }
        let mut results = vec![g.values[g.values.len() - 1].clone()];
        if g.values.len() > 2 && g.rng.chance(0.4) {
            let other = g.values[g.rng.below(g.values.len() - 1)].clone();
            results.push(other);
        }
        let bounds = results.iter().map(|v| v.bound).collect();
        (g.module_text(&results), bounds)
    }

    /// The module: meshes, `@main` with the arguments and their
    /// shardings, the body, returning `results`.
    pub(super) fn module_text(&self, results: &[Val]) -> String {
        let g = self;
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
