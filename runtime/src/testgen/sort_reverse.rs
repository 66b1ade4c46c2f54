//! Generators of `sort` (one value, or values with an iota of indices as
//! `jnp.argsort` writes it), `chlo.top_k` and `reverse`.
//!
//! Indices (argsort, top_k's second result) come only from *arguments*,
//! for the reason `reduce_multi` gives for argmax: a value computed in
//! another order on a sharded run may differ in the last bit and then
//! break a near-tie the other way, which is no bug. Sorted values are
//! continuous in their inputs, so any value may be sorted.

use std::fmt::Write;

use super::gen::Gen;
use super::text::{list, ty, ty_of, Val};

impl Gen {
    /// `"stablehlo.sort"` of one value along a random dim, ascending or
    /// descending, stable or not.
    pub(super) fn sort_values(&mut self, x: Val) -> Option<Val> {
        let r = x.shape.len();
        if r == 0 {
            return None;
        }
        let dim = self.rng.below(r);
        let dir = *self.rng.pick(&["LT", "GT"]);
        let stable = self.rng.chance(0.5);
        let name = self.fresh();
        let t = ty(&x.shape);
        let _ = writeln!(
            self.body,
            "    {name} = \"stablehlo.sort\"({}) <{{dimension = {dim} : i64, is_stable = {stable}}}> ({{",
            x.name
        );
        let _ = writeln!(self.body, "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):");
        let _ = writeln!(
            self.body,
            "      %c = stablehlo.compare {dir}, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>"
        );
        let _ = writeln!(self.body, "      stablehlo.return %c : tensor<i1>");
        let line = format!("}}) : ({t}) -> {t}");
        Some(self.push(line, Val { name, ..x }))
    }

    /// `jnp.argsort` of an argument along a random dim: values and an iota
    /// sorted together by the values in total order, the indices converted
    /// to f32 so the program goes on with them.
    pub(super) fn argsort(&mut self) -> Option<Val> {
        let k = self.rng.below(self.args.len());
        let x = self.args[k].0.clone();
        let r = x.shape.len();
        if r == 0 {
            return None;
        }
        let dim = self.rng.below(r);
        let (iota, pair, out) = (self.fresh(), self.fresh(), self.fresh());
        let (xt, it) = (ty(&x.shape), ty_of(&x.shape, "i32"));
        let b = &mut self.body;
        let _ = writeln!(b, "    {iota} = stablehlo.iota dim = {dim} : {it}");
        let _ = writeln!(
            b,
            "    {pair}:2 = \"stablehlo.sort\"({}, {iota}) <{{dimension = {dim} : i64, is_stable = true}}> ({{",
            x.name
        );
        let _ = writeln!(
            b,
            "    ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):"
        );
        let _ = writeln!(
            b,
            "      %l = stablehlo.compare LT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>"
        );
        let _ = writeln!(b, "      stablehlo.return %l : tensor<i1>");
        let _ = writeln!(b, "    }}) : ({xt}, {it}) -> ({xt}, {it})");
        let line = format!("{out} = stablehlo.convert {pair}#1 : ({it}) -> {xt}");
        let bound = x.shape[dim] as f64;
        Some(self.push(
            line,
            Val {
                name: out,
                shape: x.shape,
                bound,
            },
        ))
    }

    /// `chlo.top_k` of a value along its last dim: the values, or (of an
    /// argument) the indices as f32.
    pub(super) fn top_k(&mut self, x: Val) -> Option<Val> {
        let n = *x.shape.last()?;
        let k = 1 + self.rng.below(n as usize) as i64;
        let mut shape = x.shape.clone();
        *shape.last_mut()? = k;
        let (pair, out) = (self.fresh(), self.fresh());
        let (xt, rt, it) = (ty(&x.shape), ty(&shape), ty_of(&shape, "i32"));
        let _ = writeln!(
            self.body,
            "    {pair}:2 = chlo.top_k({}, k = {k}) : {xt} -> ({rt}, {it})",
            x.name
        );
        let is_arg = self.args.iter().any(|(a, _)| a.name == x.name);
        if is_arg && self.rng.chance(0.5) {
            let line = format!("{out} = stablehlo.convert {pair}#1 : ({it}) -> {rt}");
            let bound = n as f64;
            return Some(self.push(
                line,
                Val {
                    name: out,
                    shape,
                    bound,
                },
            ));
        }
        // abs, not negate: `x + (-top_k(x))` summed over a row cancels to
        // rounding noise, which is no bug but fails a relative tolerance.
        let line = format!("{out} = stablehlo.abs {pair}#0 : {rt}");
        Some(self.push(
            line,
            Val {
                name: out,
                shape,
                bound: x.bound,
            },
        ))
    }

    /// `stablehlo.reverse` of a value along a random non-empty set of dims.
    pub(super) fn reverse(&mut self, x: Val) -> Option<Val> {
        let r = x.shape.len();
        if r == 0 {
            return None;
        }
        let mut dims: Vec<usize> = (0..r).filter(|_| self.rng.chance(0.5)).collect();
        if dims.is_empty() {
            dims.push(self.rng.below(r));
        }
        self.rng.shuffle(&mut dims);
        let name = self.fresh();
        let line = format!(
            "{name} = stablehlo.reverse {}, dims = {} : {}",
            x.name,
            list(&dims),
            ty(&x.shape)
        );
        Some(self.push(line, Val { name, ..x }))
    }
}
