//! `sdy.manual_computation`: what `jax.shard_map` lowers to. Its body is
//! written per device: along the `manual_axes` each operand is the local
//! block its `in_shardings` entry gives, and each value the body returns is
//! the local block of the result under `out_shardings`. Axes not in
//! `manual_axes` stay automatic: the body's values are global along them.
//!
//! ```text
//! %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {"y"}]>]
//!     out_shardings=[<@mesh, [{"x"}, {"y"}]>] manual_axes={"x", "y"}
//!     (%arg1: tensor<16x8xf32>) {
//!   ...
//!   sdy.return %r : tensor<16x8xf32>
//! } : (tensor<64x16xf32>) -> tensor<64x16xf32>
//! ```
//!
//! Propagation treats the op as a data-flow op (Shardy): the in/out
//! shardings are fixed on the operand and result edges; the op has no
//! factor rule. Manual computations nest: an inner one's operands are
//! already local along the outer one's manual axes.

use crate::ir::attr::Attr;
use crate::ir::ops::checks::type_list as list;
use crate::ir::ops::{
    Arity, DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RegionTypes, RuleShapes, SigForm,
};
use crate::ir::types::TensorType;
use crate::rules::rule::{OpShardingRule, RuleOptions};
use crate::sharding::{Mesh, MeshDef, MeshRef, TensorSharding};

#[derive(Debug, Clone, PartialEq)]
pub struct ManualComputation {
    pub in_shardings: Vec<TensorSharding>,
    pub out_shardings: Vec<TensorSharding>,
    pub manual_axes: Vec<String>,
}

impl DecodeOp for ManualComputation {
    const SPEC: OpSpec = OpSpec {
        operands: Arity::AtLeast(0),
        results: Arity::AtLeast(0),
        pretty: Some(&[
            Fmt::Punct("("),
            Fmt::Operands,
            Fmt::Punct(")"),
            Fmt::Shardings("in_shardings", "in_shardings"),
            Fmt::Shardings("out_shardings", "out_shardings"),
            Fmt::AxisNames("manual_axes", "manual_axes"),
            Fmt::ArgsRegion,
            Fmt::AttrDict,
            Fmt::Sig(SigForm::Functional),
        ]),
        ..OpSpec::new("sdy.manual_computation")
    };
    const REGIONS: Arity = Arity::Exactly(1);

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        let shardings = |d: &mut Decoder, name: &str| match d.take(name) {
            Some(Attr::Shardings(list)) => Ok(list),
            Some(other) => Err(DecodeError::attr(
                name,
                format!(
                    "expected #sdy.sharding_per_value<[...]>, found {}",
                    other.kind_name()
                ),
            )),
            None => Err(DecodeError::op(format!("needs attribute '{name}'"))),
        };
        let in_shardings = shardings(d, "in_shardings")?;
        let out_shardings = shardings(d, "out_shardings")?;
        let manual_axes = match d.take("manual_axes") {
            Some(Attr::ManualAxes(axes)) => axes,
            Some(other) => {
                return Err(DecodeError::attr(
                    "manual_axes",
                    format!(
                        "expected #sdy<manual_axes{{...}}>, found {}",
                        other.kind_name()
                    ),
                ))
            }
            None => return Err(DecodeError::op("needs attribute 'manual_axes'")),
        };
        Ok(ManualComputation {
            in_shardings,
            out_shardings,
            manual_axes,
        })
    }
}

/// The attribute of a function that stands for a manual computation's body
/// (propagation propagates bodies as functions of their own): the manual
/// axes around it, comma-separated.
pub const BODY_MANUAL_AXES_ATTR: &str = "meshrun.manual_axes";

impl ManualComputation {
    /// `s` without the manual axes: what the body sees of a value sharded
    /// `s` outside.
    pub fn body_sharding(&self, s: &TensorSharding) -> TensorSharding {
        let keep = |axes: &[crate::sharding::AxisRef]| {
            axes.iter()
                .filter(|a| !self.is_manual(&a.name))
                .cloned()
                .collect::<Vec<_>>()
        };
        TensorSharding {
            mesh: s.mesh.clone(),
            dims: s
                .dims
                .iter()
                .map(|d| crate::sharding::DimSharding {
                    axes: keep(&d.axes),
                    is_closed: d.is_closed,
                    priority: d.priority,
                })
                .collect(),
            replicated: keep(&s.replicated),
            unreduced: keep(&s.unreduced),
            unreduced_op: s.unreduced_op,
        }
    }

    /// `outside` (a sharding as written on the op) with its free axes
    /// taken from `free` (manual axes in `free` are ignored): each
    /// dimension keeps `outside`'s manual axes first, and whether it is
    /// closed and its priority. The manual axes fix the body's types, so
    /// what propagation brings never changes them.
    pub fn with_free_axes(
        &self,
        outside: &TensorSharding,
        free: &TensorSharding,
    ) -> TensorSharding {
        if outside.dims.len() != free.dims.len() {
            return outside.clone();
        }
        let manual = |axes: &[crate::sharding::AxisRef]| {
            axes.iter()
                .filter(|a| self.is_manual(&a.name))
                .cloned()
                .collect::<Vec<_>>()
        };
        let join = |m: &[crate::sharding::AxisRef], f: &[crate::sharding::AxisRef]| {
            let mut out = manual(m);
            out.extend(f.iter().filter(|a| !self.is_manual(&a.name)).cloned());
            out
        };
        TensorSharding {
            mesh: outside.mesh.clone(),
            dims: outside
                .dims
                .iter()
                .zip(&free.dims)
                .map(|(o, f)| crate::sharding::DimSharding {
                    axes: join(&o.axes, &f.axes),
                    is_closed: o.is_closed,
                    priority: o.priority,
                })
                .collect(),
            replicated: join(&outside.replicated, &free.replicated),
            unreduced: join(&outside.unreduced, &free.unreduced),
            unreduced_op: outside.unreduced_op,
        }
    }

    /// Whether `axis` (a full axis or a sub-axis of one) is manual here.
    pub fn is_manual(&self, axis: &str) -> bool {
        self.manual_axes.iter().any(|a| a == axis)
    }

    /// The mesh the op's shardings name (the first one; all must agree).
    pub fn mesh_ref(&self) -> Option<&MeshRef> {
        self.in_shardings
            .iter()
            .chain(&self.out_shardings)
            .map(|s| &s.mesh)
            .next()
    }

    /// The body's type of a tensor of type `global` sharded `s`: each
    /// dimension divided by the sizes of its manual axes (which must lead
    /// the dimension's axes and divide it).
    pub fn local_type(
        &self,
        s: &TensorSharding,
        global: &TensorType,
        mesh: &Mesh,
    ) -> Result<TensorType, String> {
        if s.dims.len() != global.rank() {
            return Err(format!(
                "sharding doesn't match tensor rank: {} != {}",
                s.dims.len(),
                global.rank()
            ));
        }
        let mut shape = global.shape.clone();
        for (d, dim) in s.dims.iter().enumerate() {
            let mut manual = 1i64;
            let mut free_seen = false;
            for a in &dim.axes {
                if self.is_manual(&a.name) {
                    if free_seen {
                        return Err(format!(
                            "dimension {d}: manual axis {a} comes after a free axis"
                        ));
                    }
                    let size = a
                        .size(mesh)
                        .ok_or_else(|| format!("unknown axis {a} in dimension {d}"))?;
                    manual = manual.saturating_mul(size);
                } else {
                    free_seen = true;
                }
            }
            if shape[d] % manual != 0 {
                return Err(format!(
                    "dimension size {} is not divisible by the manual axes size {manual}",
                    shape[d]
                ));
            }
            shape[d] /= manual;
        }
        Ok(TensorType::new(shape, global.elem))
    }

    /// The checks that need the module's meshes: the manual axes exist, all
    /// shardings use one mesh, and the body's argument and result types are
    /// the local types the shardings give.
    pub fn check_local_types(
        &self,
        meshes: &[MeshDef],
        operands: &[TensorType],
        results: &[TensorType],
        body: &RegionTypes,
    ) -> Result<(), String> {
        let Some(mesh_ref) = self.mesh_ref() else {
            if let Some(a) = self.manual_axes.first() {
                return Err(format!(
                    "manual axis \"{a}\" needs a mesh, but no sharding names one"
                ));
            }
            return Ok(());
        };
        let mesh = match mesh_ref {
            MeshRef::Inline(m) => m.clone(),
            MeshRef::Symbol(name) => meshes
                .iter()
                .find(|m| &m.name == name)
                .map(|m| m.mesh.clone())
                .ok_or_else(|| format!("unknown mesh @{name}"))?,
        };
        for s in self.in_shardings.iter().chain(&self.out_shardings) {
            if &s.mesh != mesh_ref {
                return Err(format!(
                    "all in and out shardings must use one mesh ({mesh_ref} and {})",
                    s.mesh
                ));
            }
        }
        for (i, a) in self.manual_axes.iter().enumerate() {
            if mesh.axis(a).is_none() {
                return Err(format!("manual axis \"{a}\" is not in mesh {mesh_ref}"));
            }
            if self.manual_axes[..i].contains(a) {
                return Err(format!("manual axis \"{a}\" is listed twice"));
            }
        }
        let sides = [
            ("operand", &self.in_shardings, operands, &body.args),
            ("result", &self.out_shardings, results, &body.returns),
        ];
        for (side, shardings, globals, locals) in sides {
            for (i, ((s, g), l)) in shardings.iter().zip(globals).zip(locals).enumerate() {
                let want = self
                    .local_type(s, g, &mesh)
                    .map_err(|e| format!("{side} {i}: {e}"))?;
                if &want != l {
                    return Err(format!(
                        "{side} {i}: the body's local type must be {want} ({g} sharded {s} \
                         along the manual axes), not {l}"
                    ));
                }
            }
        }
        Ok(())
    }
}

impl OpDef for ManualComputation {
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        vec![
            ("in_shardings", Attr::Shardings(self.in_shardings.clone())),
            ("manual_axes", Attr::ManualAxes(self.manual_axes.clone())),
            ("out_shardings", Attr::Shardings(self.out_shardings.clone())),
        ]
    }

    fn infer(&self, _operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        Err("the result types are stated by the program".into())
    }

    fn inferable(&self) -> bool {
        false
    }

    fn terminator(&self) -> &'static str {
        "sdy.return"
    }

    fn takes_regions(&self) -> bool {
        true
    }

    fn check_with_regions(
        &self,
        operands: &[TensorType],
        results: &[TensorType],
        regions: &[RegionTypes],
    ) -> Result<(), String> {
        let [body] = regions else {
            return Err(format!("has one region (the body), not {}", regions.len()));
        };
        if self.in_shardings.len() != operands.len() {
            return Err(format!(
                "operand shardings don't match number of values: {} shardings vs {} values",
                self.in_shardings.len(),
                operands.len()
            ));
        }
        if self.out_shardings.len() != results.len() {
            return Err(format!(
                "result shardings don't match number of values: {} shardings vs {} values",
                self.out_shardings.len(),
                results.len()
            ));
        }
        if body.args.len() != operands.len() {
            return Err(format!(
                "the body takes {} argument(s) ({}) for {} operand(s)",
                body.args.len(),
                list(&body.args),
                operands.len()
            ));
        }
        if body.returns.len() != results.len() {
            return Err(format!(
                "the body returns {} value(s) ({}) for {} result(s)",
                body.returns.len(),
                list(&body.returns),
                results.len()
            ));
        }
        for (side, shardings, types) in [
            ("operand", &self.in_shardings, operands),
            ("result", &self.out_shardings, results),
        ] {
            for (i, (s, t)) in shardings.iter().zip(types).enumerate() {
                if s.dims.len() != t.rank() {
                    return Err(format!(
                        "{side} {i}: sharding doesn't match tensor rank: {} != {}",
                        s.dims.len(),
                        t.rank()
                    ));
                }
                if t.elem != body_type(side, i, body).map_or(t.elem, |b| b.elem) {
                    return Err(format!(
                        "{side} {i}: the body's element type differs from {t}"
                    ));
                }
            }
        }
        Ok(())
    }

    fn check_in_module(
        &self,
        meshes: &[MeshDef],
        operands: &[TensorType],
        results: &[TensorType],
        regions: &[RegionTypes],
    ) -> Result<(), String> {
        match regions {
            [body] => self.check_local_types(meshes, operands, results, body),
            _ => Ok(()),
        }
    }

    fn rule(
        &self,
        _shapes: &RuleShapes,
        _options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        Ok(None)
    }
}

fn body_type<'a>(side: &str, i: usize, body: &'a RegionTypes) -> Option<&'a TensorType> {
    if side == "operand" {
        body.args.get(i)
    } else {
        body.returns.get(i)
    }
}
