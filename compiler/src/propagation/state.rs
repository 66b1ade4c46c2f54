//! The sharding of every value of a function while it is propagated, kept
//! apart from the IR so that the op arenas stay untouched until the end.
//!
//! A value's sharding is its argument's `sdy.sharding`, its op's per-result
//! sharding, or, for `sdy.sharding_constraint` / `sdy.reshard`, the op's own
//! sharding. Function results have their own slot (the `sdy.sharding` of
//! the result), distinct from the returned value's.

use crate::ir::{Function, OpKind, Value, ValueDef};
use crate::sharding::{DimSharding, Mesh, MeshDef, MeshRef, TensorSharding};

use super::data_flow;
use super::provenance::{FuncProvenance, Origin, Slot};
use super::values;
use crate::ir::ops::reshard::Reshard;
use crate::ir::ops::sharding_constraint::ShardingConstraint;

/// Mesh lookup by reference.
#[derive(Debug, Clone, Copy)]
pub struct Meshes<'m> {
    pub defs: &'m [MeshDef],
}

impl<'m> Meshes<'m> {
    pub fn resolve<'a>(&'a self, r: &'a MeshRef) -> Option<&'a Mesh>
    where
        'm: 'a,
    {
        match r {
            MeshRef::Symbol(name) => self.defs.iter().find(|d| &d.name == name).map(|d| &d.mesh),
            MeshRef::Inline(m) => Some(m),
        }
    }

    /// The mesh every given sharding uses (Shardy's `getCommonMeshName`):
    /// `None` when no tensor has a sharding or two use different meshes.
    /// An empty mesh (no axes, no devices) is compatible with any other
    /// mesh; a maximal one (no axes, one device) is a mesh of its own.
    pub fn common<'a>(
        &self,
        shardings: impl IntoIterator<Item = Option<&'a TensorSharding>>,
    ) -> Option<CommonMesh<'m>> {
        let mut found: Option<CommonMesh<'m>> = None;
        for s in shardings.into_iter().flatten() {
            let this = match &s.mesh {
                MeshRef::Symbol(name) => {
                    CommonMesh::Def(self.defs.iter().find(|d| &d.name == name)?)
                }
                MeshRef::Inline(m) => CommonMesh::Inline(m.clone()),
            };
            match &found {
                None => found = Some(this),
                Some(f) if f.same_as(&this) || f.mesh() == this.mesh() => {}
                Some(f) if f.mesh().is_empty() => found = Some(this),
                Some(_) if this.mesh().is_empty() => {}
                Some(_) => return None,
            }
        }
        found
    }
}

/// The mesh an op propagates on.
#[derive(Debug, Clone)]
pub enum CommonMesh<'m> {
    Def(&'m MeshDef),
    Inline(Mesh),
}

impl CommonMesh<'_> {
    /// The same module mesh (cheap check before comparing definitions).
    fn same_as(&self, other: &CommonMesh) -> bool {
        matches!((self, other), (CommonMesh::Def(a), CommonMesh::Def(b)) if std::ptr::eq(*a, *b))
    }

    pub fn mesh(&self) -> &Mesh {
        match self {
            CommonMesh::Def(d) => &d.mesh,
            CommonMesh::Inline(m) => m,
        }
    }

    /// How new shardings refer to the mesh.
    pub fn mesh_ref(&self) -> MeshRef {
        match self {
            CommonMesh::Def(d) => MeshRef::Symbol(d.name.clone()),
            CommonMesh::Inline(m) => MeshRef::Inline(m.clone()),
        }
    }
}

/// The current sharding of every value and result of one function.
#[derive(Debug, Clone)]
pub struct FuncState {
    /// Indexed by value; only a value's owner (see [`FuncState::owner`])
    /// holds its entry.
    pub values: Vec<Option<TensorSharding>>,
    pub results: Vec<Option<TensorSharding>>,
    pub provenance: FuncProvenance,
    /// The value that holds each value's sharding: itself, or the
    /// data-flow edge owner of a `while`'s block argument.
    owners: Vec<Value>,
}

impl FuncState {
    /// The shardings `f` is annotated with, each recorded as written by the
    /// user.
    pub fn load(f: &Function) -> FuncState {
        FuncState::load_with(f, &[])
    }

    /// `load`, with the origins of shardings the import passes set
    /// (`seeds`); every other axis is recorded as written by the user.
    pub fn load_with(f: &Function, seeds: &[(Value, Origin)]) -> FuncState {
        let owners = data_flow::owners(f, &data_flow::edges(f));
        let values = (0..f.values.len())
            .map(|i| {
                let v = Value(i as u32);
                if owners[i] != v {
                    return None;
                }
                values::sharding_of(f, v).cloned()
            })
            .collect();
        let results = (0..f.returns.len())
            .map(|i| f.result_attrs.get(i).and_then(|a| a.sharding.clone()))
            .collect();
        let mut state = FuncState {
            provenance: FuncProvenance::new(f.values.len(), f.returns.len()),
            values,
            results,
            owners,
        };
        for (v, origin) in seeds {
            if let Some(Some(s)) = state.values.get(v.index()) {
                state.provenance.seed(Slot::Value(*v), s, origin.clone());
            }
        }
        for (i, s) in state.values.iter().enumerate() {
            if let Some(s) = s {
                state
                    .provenance
                    .seed(Slot::Value(Value(i as u32)), s, Origin::Annotated);
            }
        }
        for (i, s) in state.results.iter().enumerate() {
            if let Some(s) = s {
                state.provenance.seed(Slot::Result(i), s, Origin::Annotated);
            }
        }
        state
    }

    /// The slot that holds `slot`'s sharding.
    pub fn owner(&self, slot: Slot) -> Slot {
        match slot {
            Slot::Value(v) => Slot::Value(self.owners.get(v.index()).copied().unwrap_or(v)),
            other => other,
        }
    }

    pub fn get(&self, slot: Slot) -> Option<&TensorSharding> {
        match self.owner(slot) {
            Slot::Value(v) => self.values.get(v.index()).and_then(Option::as_ref),
            Slot::Result(i) => self.results.get(i).and_then(Option::as_ref),
        }
    }

    pub fn set(&mut self, slot: Slot, sharding: Option<TensorSharding>) {
        let place = match self.owner(slot) {
            Slot::Value(v) => self.values.get_mut(v.index()),
            Slot::Result(i) => self.results.get_mut(i),
        };
        if let Some(place) = place {
            *place = sharding;
        }
    }

    /// Write the shardings back into `f`: arguments, op results (an op gets
    /// `sdy.sharding` when any result has one), constraint and reshard
    /// shardings, and function results.
    pub fn store(&self, f: &mut Function) {
        for (i, &v) in f.args.iter().enumerate() {
            if let Some(attrs) = f.arg_attrs.get_mut(i) {
                attrs.sharding = self.values.get(v.index()).cloned().flatten();
            }
        }
        let ranks: Vec<usize> = f.values.iter().map(|d| d.ty.rank()).collect();
        for id in f.all_ops() {
            let op = f.op_mut(id);
            if let OpKind::NamedComputation(nc) = &mut op.kind {
                let args = op.regions.first().map_or(&[][..], |r| r.args.as_slice());
                let shardings: Vec<Option<TensorSharding>> = args
                    .iter()
                    .map(|a| self.values.get(a.index()).cloned().flatten())
                    .collect();
                nc.in_shardings = shardings.iter().any(Option::is_some).then_some(shardings);
            }
            if let OpKind::ManualComputation(mc) = &mut op.kind {
                let args = op.regions.first().map_or(&[][..], |r| r.args.as_slice());
                for (i, a) in args.iter().enumerate() {
                    let got = self.values.get(a.index()).and_then(Option::as_ref);
                    let new = match (got, mc.in_shardings.get(i)) {
                        (Some(s), Some(old)) => mc.with_free_axes(old, s),
                        _ => continue,
                    };
                    mc.in_shardings[i] = new;
                }
            }
            let shardings: Vec<Option<TensorSharding>> = op
                .results
                .iter()
                .map(|v| self.values.get(v.index()).cloned().flatten())
                .collect();
            match &mut op.kind {
                OpKind::ShardingConstraint(ShardingConstraint { sharding })
                | OpKind::Reshard(Reshard { sharding }) => {
                    if let Some(Some(s)) = shardings.first() {
                        *sharding = s.clone();
                    }
                }
                _ => {
                    // Like Shardy's `setSharding` on one result of a
                    // multi-result op: the others become fully open.
                    if let Some(mesh) = shardings.iter().flatten().next().map(|s| s.mesh.clone()) {
                        let filled = shardings
                            .into_iter()
                            .zip(&op.results)
                            .map(|(s, v)| {
                                s.unwrap_or_else(|| TensorSharding {
                                    mesh: mesh.clone(),
                                    dims: vec![
                                        DimSharding::open(vec![]);
                                        ranks.get(v.index()).copied().unwrap_or(0)
                                    ],
                                    replicated: vec![],
                                    unreduced: vec![],
                                    unreduced_op: Default::default(),
                                })
                            })
                            .collect();
                        op.shardings = Some(filled);
                    }
                }
            }
        }
        for (i, s) in self.results.iter().enumerate() {
            if let Some(attrs) = f.result_attrs.get_mut(i) {
                attrs.sharding = s.clone();
            }
        }
    }
}

/// Where a value is defined.
pub fn defining_op(f: &Function, v: Value) -> Option<crate::ir::OpId> {
    match f.values.get(v.index())?.def {
        ValueDef::Result { op, .. } => Some(op),
        ValueDef::Arg(_) | ValueDef::RegionArg { .. } => None,
    }
}
