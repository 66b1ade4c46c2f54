//! Generators of integer programs: the bit and integer ops `jax.random`
//! and integer code emit (shifts with amounts in and out of range, and/or/
//! xor/not, popcnt, count_leading_zeros, remainder and division including
//! by zero, wrapping add/subtract/multiply, max/min), `convert` between
//! integer widths, same-width `bitcast_convert`, transposes, wrapping sums
//! and sharding constraints, on every integer type (i8..i64, ui8..ui64).
//! Integers must match exactly, so nothing here needs value bounds.
//!
//! Random inputs are small (0..8); every argument is first hashed
//! (`x * odd + c`, then `xor` with itself shifted) so the values use every
//! bit of their type.

use std::fmt::Write;

use super::gen::Gen;
use super::text::{elems, list, Mesh, MAX_ELEMS};

/// An integer value of the program being written.
#[derive(Clone)]
struct IntVal {
    name: String,
    shape: Vec<i64>,
    elem: &'static str,
}

const ELEMS: [&str; 8] = ["i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64"];

fn bits(elem: &str) -> u32 {
    elem.trim_start_matches(['u', 'i']).parse().unwrap_or(32)
}

fn signed(elem: &str) -> bool {
    !elem.starts_with('u')
}

/// The other integer type of the same width (`i32` <-> `ui32`).
fn same_width_other(elem: &str) -> &'static str {
    let other = if signed(elem) {
        format!("u{elem}")
    } else {
        elem[1..].to_string()
    };
    ELEMS.iter().copied().find(|e| *e == other).unwrap_or("i32")
}

fn ity(shape: &[i64], elem: &str) -> String {
    if shape.is_empty() {
        format!("tensor<{elem}>")
    } else {
        let d: Vec<String> = shape.iter().map(|x| x.to_string()).collect();
        format!("tensor<{}x{elem}>", d.join("x"))
    }
}

struct BitsGen {
    g: Gen,
    values: Vec<IntVal>,
    args: Vec<(IntVal, Option<String>)>,
}

impl BitsGen {
    fn line(&mut self, line: String) {
        let _ = writeln!(self.g.body, "    {line}");
    }

    fn push(&mut self, line: String, v: IntVal) -> IntVal {
        self.line(line);
        self.values.push(v.clone());
        v
    }

    /// A splat constant of `x`'s type: `broadcast_in_dim` of a scalar.
    fn splat(&mut self, value: u64, shape: &[i64], elem: &str) -> String {
        let c = self.g.fresh();
        let text = if signed(elem) {
            // The same bits as a signed number of the type's width.
            let w = bits(elem);
            let v = if w < 64 && value >= 1 << (w - 1) {
                value as i64 - (1i64 << w)
            } else {
                value as i64
            };
            v.to_string()
        } else {
            value.to_string()
        };
        self.line(format!(
            "{c} = stablehlo.constant dense<{text}> : {}",
            ity(&[], elem)
        ));
        let b = self.g.fresh();
        self.line(format!(
            "{b} = stablehlo.broadcast_in_dim {c}, dims = [] : ({}) -> {}",
            ity(&[], elem),
            ity(shape, elem)
        ));
        b
    }

    fn masked(&self, value: u64, elem: &str) -> u64 {
        let w = bits(elem);
        if w == 64 {
            value
        } else {
            value & ((1u64 << w) - 1)
        }
    }

    fn binary_line(&mut self, op: &str, a: &str, b: &str, shape: &[i64], elem: &str) -> String {
        let name = self.g.fresh();
        self.line(format!(
            "{name} = stablehlo.{op} {a}, {b} : {}",
            ity(shape, elem)
        ));
        name
    }

    /// A new argument, hashed so that its values fill the type.
    fn new_arg(&mut self) -> IntVal {
        let rank = 1 + self.g.rng.below(3);
        let shape = self.g.random_shape(rank);
        let elem = *self.g.rng.pick(&ELEMS);
        let arg = IntVal {
            name: format!("%arg{}", self.args.len()),
            shape: shape.clone(),
            elem,
        };
        let s = (!self.g.rng.chance(0.25)).then(|| self.g.sharding(&shape));
        self.args.push((arg.clone(), s));
        let odd = self.masked(0x9E37_79B9_7F4A_7C15, elem);
        let k = self.splat(odd, &shape, elem);
        let m = self.binary_line("multiply", &arg.name, &k, &shape, elem);
        let c = self.splat(self.masked(0xD1B5_4A32_D192_ED03, elem), &shape, elem);
        let h = self.binary_line("add", &m, &c, &shape, elem);
        let amount = self.splat(u64::from(bits(elem) / 2), &shape, elem);
        let s = self.binary_line("shift_right_logical", &h, &amount, &shape, elem);
        let name = self.binary_line("xor", &h, &s, &shape, elem);
        let v = IntVal { name, shape, elem };
        self.values.push(v.clone());
        v
    }

    fn pick_value(&mut self) -> IntVal {
        let k = self.values.len();
        let i = if self.g.rng.chance(0.6) {
            k - 1 - self.g.rng.below(k.min(3))
        } else {
            self.g.rng.below(k)
        };
        self.values[i].clone()
    }

    fn unary(&mut self, x: IntVal) -> IntVal {
        let mut ops = vec!["not", "popcnt", "count_leading_zeros", "negate"];
        if signed(x.elem) {
            ops.extend(["abs", "sign"]);
        }
        let op = *self.g.rng.pick(&ops);
        let name = self.g.fresh();
        let line = format!(
            "{name} = stablehlo.{op} {} : {}",
            x.name,
            ity(&x.shape, x.elem)
        );
        self.push(line, IntVal { name, ..x })
    }

    fn binary(&mut self, x: IntVal) -> IntVal {
        let same: Vec<IntVal> = self
            .values
            .iter()
            .filter(|v| v.shape == x.shape && v.elem == x.elem)
            .cloned()
            .collect();
        let y = self.g.rng.pick(&same).clone();
        let op = *self.g.rng.pick(&[
            "add",
            "subtract",
            "multiply",
            "and",
            "or",
            "xor",
            "maximum",
            "minimum",
            "remainder",
            "divide",
            "shift_left",
            "shift_right_logical",
            "shift_right_arithmetic",
        ]);
        let rhs = if op.starts_with("shift") {
            // Amounts 0..2w: half of them out of range.
            let mask = self.splat(u64::from(2 * bits(x.elem) - 1), &x.shape, x.elem);
            self.binary_line("and", &y.name, &mask, &x.shape, x.elem)
        } else if (op == "remainder" || op == "divide") && self.g.rng.chance(0.5) {
            // Small divisors, zero among them.
            let mask = self.splat(3, &x.shape, x.elem);
            self.binary_line("and", &y.name, &mask, &x.shape, x.elem)
        } else {
            y.name.clone()
        };
        let name = self.binary_line(op, &x.name, &rhs, &x.shape, x.elem);
        let v = IntVal { name, ..x };
        self.values.push(v.clone());
        v
    }

    fn convert(&mut self, x: IntVal) -> IntVal {
        let bitcast = self.g.rng.chance(0.4);
        let to = if bitcast {
            same_width_other(x.elem)
        } else {
            *self.g.rng.pick(&ELEMS)
        };
        let op = if bitcast {
            "bitcast_convert"
        } else {
            "convert"
        };
        let name = self.g.fresh();
        let line = format!(
            "{name} = stablehlo.{op} {} : ({}) -> {}",
            x.name,
            ity(&x.shape, x.elem),
            ity(&x.shape, to)
        );
        self.push(
            line,
            IntVal {
                name,
                shape: x.shape,
                elem: to,
            },
        )
    }

    fn transpose(&mut self, x: IntVal) -> Option<IntVal> {
        if x.shape.len() < 2 {
            return None;
        }
        let mut perm: Vec<usize> = (0..x.shape.len()).collect();
        self.g.rng.shuffle(&mut perm);
        let shape: Vec<i64> = perm.iter().map(|&p| x.shape[p]).collect();
        let name = self.g.fresh();
        let line = format!(
            "{name} = stablehlo.transpose {}, dims = {} : ({}) -> {}",
            x.name,
            list(&perm),
            ity(&x.shape, x.elem),
            ity(&shape, x.elem)
        );
        Some(self.push(
            line,
            IntVal {
                name,
                shape,
                elem: x.elem,
            },
        ))
    }

    /// A wrapping sum, an or or a max over one dim: exact in any order.
    fn reduce(&mut self, x: IntVal) -> Option<IntVal> {
        let r = x.shape.len();
        if r == 0 {
            return None;
        }
        let dims: Vec<usize> = vec![self.g.rng.below(r)];
        let op = *self.g.rng.pick(&["add", "or", "maximum"]);
        // Every op starts from its identity: max from the type's minimum.
        let init = if op == "maximum" && signed(x.elem) {
            format!("-{}", 1u64 << (bits(x.elem) - 1))
        } else {
            "0".to_string()
        };
        let cst = self.g.fresh();
        self.line(format!(
            "{cst} = stablehlo.constant dense<{init}> : {}",
            ity(&[], x.elem)
        ));
        let shape: Vec<i64> = (0..r)
            .filter(|d| !dims.contains(d))
            .map(|d| x.shape[d])
            .collect();
        let name = self.g.fresh();
        let line = format!(
            "{name} = stablehlo.reduce({} init: {cst}) applies stablehlo.{op} across dimensions = {} : ({}, {}) -> {}",
            x.name,
            list(&dims),
            ity(&x.shape, x.elem),
            ity(&[], x.elem),
            ity(&shape, x.elem)
        );
        Some(self.push(
            line,
            IntVal {
                name,
                shape,
                elem: x.elem,
            },
        ))
    }

    fn constraint(&mut self, x: IntVal) -> IntVal {
        let s = self.g.sharding(&x.shape);
        let name = self.g.fresh();
        let line = format!(
            "{name} = sdy.sharding_constraint {} {s} : {}",
            x.name,
            ity(&x.shape, x.elem)
        );
        self.push(line, IntVal { name, ..x })
    }

    fn op(&mut self) {
        let x = self.pick_value();
        let made = match self.g.rng.below(8) {
            0 => Some(self.unary(x)),
            1..=3 => Some(self.binary(x)),
            4 => Some(self.convert(x)),
            5 => self.transpose(x),
            6 => self.reduce(x),
            _ => Some(self.constraint(x)),
        };
        if made.is_none() {
            let x = self.pick_value();
            self.unary(x);
        }
    }
}

/// The random integer program of `seed` (see the module comment).
pub fn bits_program(seed: u64) -> String {
    let mut b = BitsGen {
        g: Gen::new(seed, false),
        values: Vec::new(),
        args: Vec::new(),
    };
    for _ in 0..1 + b.g.rng.below(2) {
        b.new_arg();
    }
    for _ in 0..3 + b.g.rng.below(8) {
        b.op();
    }
    let last = b.values[b.values.len() - 1].clone();
    debug_assert!(elems(&last.shape) <= MAX_ELEMS);
    let mut s = String::from("module @jit_random_bits {\n");
    for m in &b.g.meshes {
        s.push_str(&Mesh::text(m));
    }
    let args: Vec<String> = b
        .args
        .iter()
        .map(|(v, sh)| match sh {
            Some(sh) => format!(
                "{}: {} {{sdy.sharding = #sdy.sharding{sh}}}",
                v.name,
                ity(&v.shape, v.elem)
            ),
            None => format!("{}: {}", v.name, ity(&v.shape, v.elem)),
        })
        .collect();
    let result = ity(&last.shape, last.elem);
    let _ = writeln!(
        s,
        "  func.func public @main({}) -> ({result}) {{",
        args.join(", ")
    );
    s.push_str(&b.g.body);
    let _ = writeln!(s, "    return {} : {result}\n  }}\n}}", last.name);
    s
}
