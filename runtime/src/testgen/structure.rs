//! Structure around random ops: a counted `stablehlo.while` (as
//! `lax.fori_loop` lowers) whose body is a random chain of ops on the
//! loop-carried value, and a two-way `stablehlo.case` (as `lax.cond`
//! lowers) on a predicate computed from sharded data, each branch a random
//! chain. Region bodies may read values from around them, as JAX's do.

use std::fmt::Write;

use super::gen::Gen;
use super::text::{ty, Val};

/// How deep loops and conds nest.
const MAX_DEPTH: usize = 2;

impl Gen {
    /// A loop or a cond around `x`, or `None` when nested too deep.
    pub(super) fn structured(&mut self, x: Val) -> Option<Val> {
        if self.depth >= MAX_DEPTH {
            return None;
        }
        Some(if self.rng.chance(0.5) {
            self.counted_loop(x)
        } else {
            self.two_way_cond(x)
        })
    }

    /// Random ops written into a region of their own: the region's text
    /// and a value of `want`'s shape made last (`want` itself when none
    /// was). Values made inside are out of scope afterwards.
    fn region_chain(&mut self, start: Vec<Val>, want: &Val) -> (String, Val) {
        let saved_body = std::mem::take(&mut self.body);
        let saved_len = self.values.len();
        self.values.extend(start);
        self.depth += 1;
        for _ in 0..1 + self.rng.below(4) {
            self.op();
        }
        self.depth -= 1;
        let last = self.values[saved_len..]
            .iter()
            .rev()
            .find(|v| v.shape == want.shape)
            .cloned()
            .unwrap_or_else(|| want.clone());
        self.values.truncate(saved_len);
        let text = std::mem::replace(&mut self.body, saved_body);
        (text, last)
    }

    /// `fori_loop(0, n, body, x)`: the body's chain ends in `tanh`, so
    /// the carried value stays within a bound the body's ops were chosen
    /// for on every iteration.
    fn counted_loop(&mut self, x: Val) -> Val {
        let trips = 1 + self.rng.below(3);
        let (counter, carried, result) = (self.fresh(), self.fresh(), self.fresh());
        let start = self.fresh();
        let limit = self.fresh();
        let pred = self.fresh();
        let one = self.fresh();
        let next = self.fresh();
        let h = Val {
            name: carried.clone(),
            shape: x.shape.clone(),
            bound: x.bound.max(1.0),
        };
        let (body, last) = self.region_chain(vec![h.clone()], &h);
        let squashed = self.fresh();
        let t = ty(&x.shape);
        let mut s = String::new();
        let _ = writeln!(s, "    {start} = stablehlo.constant dense<0> : tensor<i32>");
        let _ = writeln!(
            s,
            "    {result}:2 = stablehlo.while({counter} = {start}, {carried} = {}) : tensor<i32>, {t}",
            x.name
        );
        let _ = writeln!(s, "     cond {{");
        let _ = writeln!(
            s,
            "      {limit} = stablehlo.constant dense<{trips}> : tensor<i32>"
        );
        let _ = writeln!(
            s,
            "      {pred} = stablehlo.compare LT, {counter}, {limit}, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>"
        );
        let _ = writeln!(s, "      stablehlo.return {pred} : tensor<i1>");
        let _ = writeln!(s, "    }} do {{");
        s.push_str(&body);
        let _ = writeln!(s, "      {squashed} = stablehlo.tanh {} : {t}", last.name);
        let _ = writeln!(s, "      {one} = stablehlo.constant dense<1> : tensor<i32>");
        let _ = writeln!(
            s,
            "      {next} = stablehlo.add {counter}, {one} : tensor<i32>"
        );
        let _ = writeln!(
            s,
            "      stablehlo.return {next}, {squashed} : tensor<i32>, {t}"
        );
        let _ = writeln!(s, "    }}");
        self.body.push_str(&s);
        let v = Val {
            name: format!("{result}#1"),
            shape: x.shape,
            bound: h.bound,
        };
        self.values.push(v.clone());
        v
    }

    /// `lax.cond(sum(x) < c, ...)` with `c` far from any sum the bounds
    /// allow (so rounding never flips it): the predicate is computed from
    /// `x`'s blocks and must be made whole before the branch is chosen.
    fn two_way_cond(&mut self, x: Val) -> Val {
        let (zero, sum, limit, pred, index, result) = (
            self.fresh(),
            self.fresh(),
            self.fresh(),
            self.fresh(),
            self.fresh(),
            self.fresh(),
        );
        let far = if self.rng.chance(0.5) {
            "1.0e+30"
        } else {
            "-1.0e+30"
        };
        let dims: Vec<String> = (0..x.shape.len()).map(|d| d.to_string()).collect();
        let t = ty(&x.shape);
        let mut s = String::new();
        let sum = if x.shape.is_empty() {
            x.name.clone()
        } else {
            let _ = writeln!(
                s,
                "    {zero} = stablehlo.constant dense<0.0> : tensor<f32>"
            );
            let _ = writeln!(
                s,
                "    {sum} = stablehlo.reduce({} init: {zero}) applies stablehlo.add across dimensions = [{}] : ({t}, tensor<f32>) -> tensor<f32>",
                x.name,
                dims.join(", ")
            );
            sum
        };
        let _ = writeln!(
            s,
            "    {limit} = stablehlo.constant dense<{far}> : tensor<f32>"
        );
        let _ = writeln!(
            s,
            "    {pred} = stablehlo.compare LT, {sum}, {limit}, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>"
        );
        let _ = writeln!(
            s,
            "    {index} = stablehlo.convert {pred} : (tensor<i1>) -> tensor<i32>"
        );
        self.body.push_str(&s);
        let (first, a) = self.region_chain(Vec::new(), &x);
        let (second, b) = self.region_chain(Vec::new(), &x);
        let mut s = String::new();
        let _ = writeln!(s, "    {result} = \"stablehlo.case\"({index}) ({{");
        s.push_str(&first);
        let _ = writeln!(s, "      stablehlo.return {} : {t}", a.name);
        let _ = writeln!(s, "    }}, {{");
        s.push_str(&second);
        let _ = writeln!(s, "      stablehlo.return {} : {t}", b.name);
        let _ = writeln!(s, "    }}) : (tensor<i32>) -> {t}");
        self.body.push_str(&s);
        let v = Val {
            name: result,
            shape: x.shape,
            bound: a.bound.max(b.bound),
        };
        self.values.push(v.clone());
        v
    }
}
