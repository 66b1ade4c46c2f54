//! Generators of the first op mix: element-wise ops (reduce_precision
//! included), broadcast, transpose, reshape, reduce, dot_general and
//! sharding constraints.

use std::fmt::Write;

use super::gen::Gen;
use super::text::{elems, list, ty, Val, MAX_ELEMS, SIZES};

impl Gen {
    pub(super) fn unary(&mut self, x: Val) -> Val {
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

    /// `lax.reduce_precision` of an *argument* to bf16, f16 or an fp8
    /// format. Only arguments, for the reason `sort_reverse` gives for
    /// indices: rounding to a coarse format is a step function, and a
    /// value computed in another order on a sharded run may lie one f32
    /// ulp across a step, one bf16 ulp away, which is no bug.
    pub(super) fn reduce_precision(&mut self) -> Val {
        let k = self.rng.below(self.args.len());
        let x = self.args[k].0.clone();
        let (e, m) = *self.rng.pick(&[(8, 7), (5, 10), (4, 3), (5, 2)]);
        let name = self.fresh();
        let line = format!(
            "{name} = stablehlo.reduce_precision {}, format = e{e}m{m} : {}",
            x.name,
            ty(&x.shape)
        );
        // Rounding up grows a value by at most half an ulp: 1/8 for e5m2.
        let bound = x.bound * 1.125;
        self.push(line, Val { name, bound, ..x })
    }

    pub(super) fn binary(&mut self, x: Val) -> Val {
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

    pub(super) fn broadcast(&mut self, x: Val) -> Option<Val> {
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

    pub(super) fn transpose(&mut self, x: Val) -> Option<Val> {
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

    pub(super) fn reshape(&mut self, x: Val) -> Option<Val> {
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

    pub(super) fn reduce(&mut self, x: Val) -> Option<Val> {
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
    pub(super) fn dot(&mut self, x: Val) -> Option<Val> {
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

    pub(super) fn constraint(&mut self, x: Val) -> Val {
        let s = self.sharding(&x.shape);
        let name = self.fresh();
        let line = format!(
            "{name} = sdy.sharding_constraint {} {s} : {}",
            x.name,
            ty(&x.shape)
        );
        self.push(line, Val { name, ..x })
    }
}
