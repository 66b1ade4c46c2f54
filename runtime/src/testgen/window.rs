//! Generators of `reduce_window` and `select_and_scatter`: random windows
//! (sizes 1-3, strides 1-3, padding 0-2 on either side, sometimes base or
//! window dilations; sometimes a SAME window along a dimension
//! constrained to even blocks: halo exchanges) reduced with add / max / min, `jnp.cumsum` along a
//! random axis, and the max-pool gradient (select_and_scatter of an
//! argument with the pooled values as its source).
//!
//! select_and_scatter selects from an *argument*: a value computed in
//! another order on a sharded run can differ in the last bit and then
//! select another element of a near-tie, which is no bug.

use super::gen::Gen;
use super::text::{ty, Val};

/// `[[lo, hi], ...]` as a rank-2 dense attribute.
fn padding(p: &[(i64, i64)]) -> String {
    let rows: Vec<String> = p.iter().map(|(a, b)| format!("[{a}, {b}]")).collect();
    format!("dense<[{}]> : tensor<{}x2xi64>", rows.join(", "), p.len())
}

fn array(v: &[i64]) -> String {
    let items: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    format!("array<i64: {}>", items.join(", "))
}

/// A random window over a value of `shape`: (sizes, strides, base
/// dilations, window dilations, padding), and its result shape; `None` if
/// it has no windows.
type RandomWindow = (Vec<i64>, Vec<i64>, Vec<i64>, Vec<i64>, Vec<(i64, i64)>);

fn windows(shape: &[i64], w: &RandomWindow) -> Option<Vec<i64>> {
    let (dims, strides, base, wdil, pad) = w;
    (0..shape.len())
        .map(|d| {
            let dilated = if shape[d] == 0 {
                0
            } else {
                (shape[d] - 1) * base[d] + 1
            };
            let padded = dilated + pad[d].0 + pad[d].1;
            let span = (dims[d] - 1) * wdil[d] + 1;
            (padded >= span && padded > 0).then(|| (padded - span) / strides[d] + 1)
        })
        .collect()
}

impl Gen {
    /// Dilations only with `dilate`; without, padding is narrower than
    /// the window, so no window is all padding (max / min would give the
    /// init, an infinity; select_and_scatter's is unspecified).
    fn random_window(&mut self, r: usize, dilate: bool) -> RandomWindow {
        let mut w: RandomWindow = (vec![], vec![], vec![], vec![], vec![]);
        for _ in 0..r {
            let plain = self.rng.chance(0.4);
            w.0.push(if plain {
                1
            } else {
                1 + self.rng.below(3) as i64
            });
            w.1.push(if plain {
                1
            } else {
                1 + self.rng.below(3) as i64
            });
            let dil = dilate && self.rng.chance(0.2);
            w.2.push(if dil { 2 } else { 1 });
            let wdil = dilate && self.rng.chance(0.2);
            w.3.push(if wdil { 2 } else { 1 });
            let size = *w.0.last().unwrap_or(&1);
            let widest = if dilate { 3 } else { size as usize };
            w.4.push(if plain {
                (0, 0)
            } else {
                (self.rng.below(widest) as i64, self.rng.below(widest) as i64)
            });
        }
        w
    }

    /// `reduce_window` of `x` over a random window, or `jnp.cumsum`.
    pub(super) fn reduce_window(&mut self, x: Val) -> Option<Val> {
        let r = x.shape.len();
        if r == 0 {
            return None;
        }
        let (w, op, init) = if self.rng.chance(0.3) {
            let axis = self.rng.below(r);
            let mut w = self.random_window(r, false);
            for d in 0..r {
                w.0[d] = if d == axis { x.shape[d] } else { 1 };
                w.1[d] = 1;
                w.4[d] = if d == axis {
                    (x.shape[d] - 1, 0)
                } else {
                    (0, 0)
                };
            }
            (w, "add", "0.000000e+00")
        } else {
            let (op, init) = *self.rng.pick(&[
                ("add", "0.000000e+00"),
                ("maximum", "0xFF800000"),
                ("minimum", "0x7F800000"),
            ]);
            (self.random_window(r, op == "add"), op, init)
        };
        let mut x = x;
        let mut w = w;
        if op != "add" || self.rng.chance(0.5) {
            if let Some(v) = self.halo_window(x.clone(), &mut w) {
                x = v;
            }
        }
        let shape = windows(&x.shape, &w)?;
        let n: i64 = w.0.iter().product();
        let (cst, name) = (self.fresh(), self.fresh());
        let line = format!(
            "{cst} = stablehlo.constant dense<{init}> : tensor<f32>\n    {name} = \"stablehlo.reduce_window\"({}, {cst}) <{{base_dilations = {}, padding = {}, window_dilations = {}, window_dimensions = {}, window_strides = {}}}> ({{\n    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n      %s = stablehlo.{op} %a, %b : tensor<f32>\n      stablehlo.return %s : tensor<f32>\n    }}) : ({}, tensor<f32>) -> {}",
            x.name,
            array(&w.2),
            padding(&w.4),
            array(&w.3),
            array(&w.0),
            array(&w.1),
            ty(&x.shape),
            ty(&shape),
        );
        let bound = if op == "add" {
            x.bound * n as f64
        } else {
            x.bound
        };
        Some(self.push(line, Val { name, shape, bound }))
    }

    /// Sometimes (a third of the calls) `x` constrained to one axis on a
    /// random dimension that the axis divides, and `w` made a SAME window
    /// there (stride 1, or 2 where the blocks stay even; no dilation): a
    /// window dimension sharded into even blocks (halo exchange).
    fn halo_window(&mut self, x: Val, w: &mut RandomWindow) -> Option<Val> {
        if !self.rng.chance(0.35) || x.shape.is_empty() {
            return None;
        }
        let d = self.rng.below(x.shape.len());
        let (s, n) = self.sharding_on(x.shape.len(), d)?;
        let size = x.shape[d];
        if size % n != 0 {
            return None;
        }
        let stride = if size % (2 * n) == 0 && self.rng.chance(0.5) {
            2
        } else {
            1
        };
        let k = 1 + self.rng.below(3) as i64;
        let out = size / stride;
        let total = (out - 1) * stride + k - size;
        let low = total.div_euclid(2);
        w.0[d] = k;
        w.1[d] = stride;
        w.2[d] = 1;
        w.3[d] = 1;
        w.4[d] = (low, total - low);
        let name = self.fresh();
        let line = format!(
            "{name} = sdy.sharding_constraint {} {s} : {}",
            x.name,
            ty(&x.shape)
        );
        Some(self.push(line, Val { name, ..x }))
    }

    /// The max-pool gradient of an argument: select_and_scatter (GE, add)
    /// of the argument with its max-pooled values as the source.
    pub(super) fn max_pool_grad(&mut self) -> Option<Val> {
        let k = self.rng.below(self.args.len());
        let x = self.args[k].0.clone();
        let r = x.shape.len();
        if r == 0 {
            return None;
        }
        let w = self.random_window(r, false);
        let shape = windows(&x.shape, &w)?;
        let (neg, pooled, zero, name) = (self.fresh(), self.fresh(), self.fresh(), self.fresh());
        let (xt, st) = (ty(&x.shape), ty(&shape));
        let attrs = format!(
            "padding = {}, window_dimensions = {}, window_strides = {}",
            padding(&w.4),
            array(&w.0),
            array(&w.1)
        );
        let line = format!(
            "{neg} = stablehlo.constant dense<0xFF800000> : tensor<f32>\n    {pooled} = \"stablehlo.reduce_window\"({}, {neg}) <{{{attrs}}}> ({{\n    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n      %s = stablehlo.maximum %a, %b : tensor<f32>\n      stablehlo.return %s : tensor<f32>\n    }}) : ({xt}, tensor<f32>) -> {st}\n    {zero} = stablehlo.constant dense<0.000000e+00> : tensor<f32>\n    {name} = \"stablehlo.select_and_scatter\"({}, {pooled}, {zero}) <{{{attrs}}}> ({{\n    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n      %p = stablehlo.compare GE, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n      stablehlo.return %p : tensor<i1>\n    }}, {{\n    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n      %s = stablehlo.add %a, %b : tensor<f32>\n      stablehlo.return %s : tensor<f32>\n    }}) : ({xt}, {st}, tensor<f32>) -> {xt}",
            x.name, x.name,
        );
        // Every position gathers at most one source value per window
        // that contains it.
        let per: i64 = w.0.iter().product();
        Some(self.push(
            line,
            Val {
                name,
                shape: x.shape.clone(),
                bound: x.bound * per as f64,
            },
        ))
    }
}
