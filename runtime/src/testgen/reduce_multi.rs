//! Generators of `reduce` with several inputs: `jnp.argmax` / `jnp.argmin`
//! (values and an iota of indices under JAX's comparator body), and a sum
//! and a maximum reduced by one op (one known reduction per input).
//!
//! argmax reduces an *argument*, not a computed value: a value computed in
//! another order on a sharded run can differ in the last bit, and a
//! near-tie would then pick another index, which is no bug. Arguments are
//! bitwise the same in both runs, and exact ties (broadcast arguments do
//! not occur, but rounding to f32 can repeat values) are settled by the
//! smaller index on both.

use std::fmt::Write;

use super::gen::Gen;
use super::text::{list, ty, ty_of, Val};

impl Gen {
    /// Random reduced dims of a rank-`r` value (at least one).
    fn reduced_dims(&mut self, r: usize) -> Vec<usize> {
        let mut dims: Vec<usize> = (0..r).filter(|_| self.rng.chance(0.4)).collect();
        if dims.is_empty() {
            dims.push(self.rng.below(r));
        }
        dims
    }

    /// `argmax` or `argmin` of an argument over random dims (the index
    /// counts along the first reduced dim, as JAX's iota does for one
    /// axis), converted to f32 so the program goes on with it.
    pub(super) fn argmax(&mut self) -> Option<Val> {
        let k = self.rng.below(self.args.len());
        let x = self.args[k].0.clone();
        let r = x.shape.len();
        if r == 0 {
            return None;
        }
        let dims = self.reduced_dims(r);
        let (dir, init) = *self.rng.pick(&[("GT", "0xFF800000"), ("LT", "0x7F800000")]);
        let shape: Vec<i64> = (0..r)
            .filter(|d| !dims.contains(d))
            .map(|d| x.shape[d])
            .collect();
        let (iota, cst, zero, pair, out) = (
            self.fresh(),
            self.fresh(),
            self.fresh(),
            self.fresh(),
            self.fresh(),
        );
        let (xt, it) = (ty(&x.shape), ty_of(&x.shape, "i32"));
        let (rt, rit) = (ty(&shape), ty_of(&shape, "i32"));
        let b = &mut self.body;
        let _ = writeln!(b, "    {iota} = stablehlo.iota dim = {} : {it}", dims[0]);
        let _ = writeln!(
            b,
            "    {cst} = stablehlo.constant dense<{init}> : tensor<f32>"
        );
        let _ = writeln!(b, "    {zero} = stablehlo.constant dense<0> : tensor<i32>");
        let _ = writeln!(
            b,
            "    {pair}:2 = stablehlo.reduce({} init: {cst}), ({iota} init: {zero}) across dimensions = {} : ({xt}, {it}, tensor<f32>, tensor<i32>) -> ({rt}, {rit})",
            x.name,
            list(&dims)
        );
        let _ = writeln!(
            b,
            "     reducer(%a: tensor<f32>, %c: tensor<f32>) (%b: tensor<i32>, %d: tensor<i32>)  {{"
        );
        for line in [
            format!("%p = stablehlo.compare {dir}, %a, %c, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>"),
            "%n = stablehlo.compare NE, %a, %a, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>".into(),
            "%q = stablehlo.or %p, %n : tensor<i1>".into(),
            "%e = stablehlo.compare EQ, %a, %c, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>".into(),
            "%l = stablehlo.compare LT, %b, %d, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>".into(),
            "%t = stablehlo.and %e, %l : tensor<i1>".into(),
            "%u = stablehlo.or %q, %t : tensor<i1>".into(),
            "%v = stablehlo.select %q, %a, %c : tensor<i1>, tensor<f32>".into(),
            "%w = stablehlo.select %u, %b, %d : tensor<i1>, tensor<i32>".into(),
            "stablehlo.return %v, %w : tensor<f32>, tensor<i32>".into(),
        ] {
            let _ = writeln!(b, "      {line}");
        }
        let _ = writeln!(b, "    }}");
        let line = format!("{out} = stablehlo.convert {pair}#1 : ({rit}) -> {rt}");
        let bound = dims.iter().map(|&d| x.shape[d]).max().unwrap_or(1) as f64;
        Some(self.push(
            line,
            Val {
                name: out,
                shape,
                bound,
            },
        ))
    }

    /// `sum(x * x) * max(y)` over the same dims by one two-input reduce
    /// whose body adds the first inputs and takes the maximum of the
    /// second. Squares, and a product rather than a sum of the two: a sum
    /// that cancels to a few ulps of its terms differs between a sharded
    /// run's order of summation and the reference's by more than the
    /// relative tolerance, which is no bug; a sum of squares never cancels.
    pub(super) fn sum_and_max(&mut self, x: Val) -> Option<Val> {
        let r = x.shape.len();
        if r == 0 {
            return None;
        }
        let y = self.values[..]
            .iter()
            .rev()
            .find(|v| v.shape == x.shape && v.name != x.name)
            .cloned()
            .unwrap_or_else(|| x.clone());
        let dims = self.reduced_dims(r);
        let n: i64 = dims.iter().map(|&d| x.shape[d]).product();
        let bound = x.bound * x.bound * n as f64 * y.bound;
        if bound > 1e4 {
            return None;
        }
        let shape: Vec<i64> = (0..r)
            .filter(|d| !dims.contains(d))
            .map(|d| x.shape[d])
            .collect();
        let (sq, zero, ninf, pair, out) = (
            self.fresh(),
            self.fresh(),
            self.fresh(),
            self.fresh(),
            self.fresh(),
        );
        let (xt, rt) = (ty(&x.shape), ty(&shape));
        let b = &mut self.body;
        let _ = writeln!(b, "    {sq} = stablehlo.multiply {0}, {0} : {xt}", x.name);
        let _ = writeln!(
            b,
            "    {zero} = stablehlo.constant dense<0.000000e+00> : tensor<f32>"
        );
        let _ = writeln!(
            b,
            "    {ninf} = stablehlo.constant dense<0xFF800000> : tensor<f32>"
        );
        let _ = writeln!(
            b,
            "    {pair}:2 = stablehlo.reduce({sq} init: {zero}), ({} init: {ninf}) across dimensions = {} : ({xt}, {xt}, tensor<f32>, tensor<f32>) -> ({rt}, {rt})",
            y.name,
            list(&dims)
        );
        let _ = writeln!(
            b,
            "     reducer(%a: tensor<f32>, %c: tensor<f32>) (%b: tensor<f32>, %d: tensor<f32>)  {{"
        );
        let _ = writeln!(b, "      %s = stablehlo.add %a, %c : tensor<f32>");
        let _ = writeln!(b, "      %m = stablehlo.maximum %b, %d : tensor<f32>");
        let _ = writeln!(
            b,
            "      stablehlo.return %s, %m : tensor<f32>, tensor<f32>"
        );
        let _ = writeln!(b, "    }}");
        let line = format!("{out} = stablehlo.multiply {pair}#0, {pair}#1 : {rt}");
        Some(self.push(
            line,
            Val {
                name: out,
                shape,
                bound,
            },
        ))
    }
}
