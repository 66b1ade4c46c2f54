//! The IR: modules of functions whose bodies are SSA ops over tensors.
//!
//! Modules, functions, values and ops.
//!
//! Cranelift-style: a function owns two arenas (`values`, `ops`) indexed by
//! small `Copy` ids, plus `body`, the ops in program order. Ids are only
//! meaningful within their function.

pub mod attr;
pub mod copy;
pub mod infer;
pub mod inline;
pub mod literal;
pub mod op_rules;
pub mod ops;
pub mod types;
pub mod verify;
pub mod widen;

pub use infer::{check_result_types, infer_result_types};
pub use literal::{DenseLiteral, Scalar};
pub use ops::{
    BinaryOp, CompareDirection, CompareType, ConstantDialect, DotDims, OpKind, ReduceKind, UnaryOp,
};
pub use types::{ElemType, TensorType};
pub use verify::shardings::validate_module_shardings;
pub use verify::{function_errors, module_errors, verify_function, verify_module};

use crate::diag::SrcPos;
use crate::sharding::{Mesh, MeshDef, MeshRef, TensorSharding};

/// An SSA value of a function: an argument or an op result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Value(pub u32);

/// An op of a function (index into `Function::ops`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OpId(pub u32);

impl Value {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl OpId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Where a value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueDef {
    /// Function argument number `n`.
    Arg(u32),
    /// Result number `index` of `op`.
    Result { op: OpId, index: u32 },
    /// Block argument `index` of region `region` of `op` (a `while`'s
    /// loop-carried value, a manual computation's local operand).
    RegionArg { op: OpId, region: u32, index: u32 },
}

#[derive(Debug, Clone, PartialEq)]
pub struct ValueData {
    pub ty: TensorType,
    pub def: ValueDef,
}

/// An attribute meshrun keeps but does not interpret (`jax.result_info`,
/// `mhlo.layout_mode`, `sdy.sharding_rule`, module attributes, ...). `value`
/// is the attribute's source text, re-emitted verbatim; `None` is a unit
/// attribute (a bare name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedAttr {
    pub name: String,
    pub value: Option<String>,
}

impl NamedAttr {
    pub fn new(name: impl Into<String>, value: Option<String>) -> Self {
        NamedAttr {
            name: name.into(),
            value,
        }
    }
}

/// Find an attribute by name.
pub fn find_attr<'a>(attrs: &'a [NamedAttr], name: &str) -> Option<&'a NamedAttr> {
    attrs.iter().find(|a| a.name == name)
}

/// A region of a structured op (a `while`'s cond and body, a `case`
/// branch, a manual computation's body): one block. Its arguments, ops and
/// returned values live in the enclosing function's arenas, so ops inside
/// may use values defined before the op outside it (JAX's `case` branches
/// do), and every pass sees one value space per function, as in MLIR.
/// Region ops are not in [`Function::body`]; they run when the op runs
/// them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Region {
    /// Block arguments (`ValueDef::RegionArg`).
    pub args: Vec<Value>,
    /// The region's ops in program order.
    pub body: Vec<OpId>,
    /// Operands of the terminator (`stablehlo.return`, `sdy.return`).
    pub returns: Vec<Value>,
    pub return_pos: SrcPos,
}

#[derive(Debug, Clone, PartialEq)]
pub struct OpData {
    pub kind: OpKind,
    pub operands: Vec<Value>,
    pub results: Vec<Value>,
    /// Structural regions (empty for most ops); scalar bodies are
    /// [`Computation`]s in the op kind instead.
    pub regions: Vec<Region>,
    /// `sdy.sharding = #sdy.sharding_per_value<[...]>`: one per result.
    pub shardings: Option<Vec<TensorSharding>>,
    /// Other attributes, kept verbatim.
    pub attrs: Vec<NamedAttr>,
    pub pos: SrcPos,
}

impl OpData {
    /// Whether the op has no results and one rank-0 sharding: not a
    /// value's sharding but where the op runs (Shardy keeps `sdy.sharding`
    /// on a side-effecting custom call without results, maximal meshes
    /// included).
    pub fn is_placement_only(&self) -> bool {
        self.results.is_empty()
            && self
                .shardings
                .as_ref()
                .is_some_and(|s| s.len() == 1 && s[0].dims.is_empty())
    }
}

/// Attributes of a function argument or result.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParamAttrs {
    /// `sdy.sharding = #sdy.sharding<...>`.
    pub sharding: Option<TensorSharding>,
    /// Other attributes, kept verbatim.
    pub attrs: Vec<NamedAttr>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visibility {
    /// No keyword in the text (`func.func @main`).
    Default,
    Public,
    Private,
}

impl Visibility {
    pub fn keyword(self) -> Option<&'static str> {
        match self {
            Visibility::Default => None,
            Visibility::Public => Some("public"),
            Visibility::Private => Some("private"),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Function {
    pub name: String,
    pub visibility: Visibility,
    /// Argument values, in order (`ValueDef::Arg(i)` for `args[i]`).
    pub args: Vec<Value>,
    pub arg_attrs: Vec<ParamAttrs>,
    pub result_types: Vec<TensorType>,
    pub result_attrs: Vec<ParamAttrs>,
    /// Function-level `attributes {...}`, kept verbatim.
    pub attrs: Vec<NamedAttr>,
    pub values: Vec<ValueData>,
    pub ops: Vec<OpData>,
    /// Ops in program order.
    pub body: Vec<OpId>,
    /// Operands of the terminating `return`.
    pub returns: Vec<Value>,
    pub pos: SrcPos,
    pub return_pos: SrcPos,
}

impl Function {
    /// An empty function with the given argument types.
    pub fn new(name: impl Into<String>, arg_types: Vec<TensorType>) -> Function {
        let mut f = Function {
            name: name.into(),
            visibility: Visibility::Default,
            args: Vec::new(),
            arg_attrs: Vec::new(),
            result_types: Vec::new(),
            result_attrs: Vec::new(),
            attrs: Vec::new(),
            values: Vec::new(),
            ops: Vec::new(),
            body: Vec::new(),
            returns: Vec::new(),
            pos: SrcPos::UNKNOWN,
            return_pos: SrcPos::UNKNOWN,
        };
        for (i, ty) in arg_types.into_iter().enumerate() {
            let v = f.new_value(ty, ValueDef::Arg(i as u32));
            f.args.push(v);
            f.arg_attrs.push(ParamAttrs::default());
        }
        f
    }

    /// A new block argument of region `region` of `op` (which may be
    /// created after its regions, as the parser does: fix the `op` with
    /// [`Function::set_region_owner`]).
    pub fn new_region_arg(&mut self, ty: TensorType, op: OpId, region: u32, index: u32) -> Value {
        self.new_value(ty, ValueDef::RegionArg { op, region, index })
    }

    /// Attach `regions` to `op`, pointing their arguments at it.
    pub fn set_regions(&mut self, op: OpId, regions: Vec<Region>) {
        for (r, region) in regions.iter().enumerate() {
            for (i, a) in region.args.iter().enumerate() {
                self.values[a.index()].def = ValueDef::RegionArg {
                    op,
                    region: r as u32,
                    index: i as u32,
                };
            }
        }
        self.ops[op.index()].regions = regions;
    }

    /// Every op of the function in program order, including the ops of
    /// regions (each after the op that owns the region, regions in order).
    pub fn all_ops(&self) -> Vec<OpId> {
        let mut out = Vec::with_capacity(self.ops.len());
        let mut stack: Vec<std::slice::Iter<'_, OpId>> = vec![self.body.iter()];
        while let Some(top) = stack.last_mut() {
            match top.next() {
                None => {
                    stack.pop();
                }
                Some(&id) => {
                    out.push(id);
                    if let Some(op) = self.ops.get(id.index()) {
                        for r in op.regions.iter().rev() {
                            stack.push(r.body.iter());
                        }
                    }
                }
            }
        }
        out
    }

    fn new_value(&mut self, ty: TensorType, def: ValueDef) -> Value {
        self.values.push(ValueData { ty, def });
        Value(self.values.len() as u32 - 1)
    }

    /// Create an op with results of `result_types` and append it to the body.
    pub fn push_op(
        &mut self,
        kind: OpKind,
        operands: Vec<Value>,
        result_types: Vec<TensorType>,
    ) -> OpId {
        let id = self.create_op(kind, operands, result_types);
        self.body.push(id);
        id
    }

    /// Create an op without placing it in the body (see `body` for order).
    pub fn create_op(
        &mut self,
        kind: OpKind,
        operands: Vec<Value>,
        result_types: Vec<TensorType>,
    ) -> OpId {
        let id = OpId(self.ops.len() as u32);
        let results = result_types
            .into_iter()
            .enumerate()
            .map(|(i, ty)| {
                self.new_value(
                    ty,
                    ValueDef::Result {
                        op: id,
                        index: i as u32,
                    },
                )
            })
            .collect();
        self.ops.push(OpData {
            kind,
            operands,
            results,
            regions: Vec::new(),
            shardings: None,
            attrs: Vec::new(),
            pos: SrcPos::UNKNOWN,
        });
        id
    }

    /// Set the function's results (the `return` operands) and their types.
    pub fn set_returns(&mut self, values: Vec<Value>) {
        self.result_types = values.iter().map(|v| self.ty(*v).clone()).collect();
        self.result_attrs = vec![ParamAttrs::default(); values.len()];
        self.returns = values;
    }

    pub fn op(&self, id: OpId) -> &OpData {
        &self.ops[id.index()]
    }

    pub fn op_mut(&mut self, id: OpId) -> &mut OpData {
        &mut self.ops[id.index()]
    }

    pub fn value(&self, v: Value) -> &ValueData {
        &self.values[v.index()]
    }

    pub fn ty(&self, v: Value) -> &TensorType {
        &self.values[v.index()].ty
    }

    /// The first result of an op (most ops have exactly one).
    pub fn result(&self, id: OpId) -> Value {
        self.ops[id.index()].results[0]
    }

    /// Replace every use of a value (op operands and returns) by
    /// `map[value]` where one is given.
    pub fn replace_uses(&mut self, map: &[Option<Value>]) {
        let sub = |v: &mut Value| {
            if let Some(Some(new)) = map.get(v.index()) {
                *v = *new;
            }
        };
        for op in &mut self.ops {
            op.operands.iter_mut().for_each(sub);
            for r in &mut op.regions {
                r.returns.iter_mut().for_each(sub);
            }
        }
        self.returns.iter_mut().for_each(sub);
    }

    /// Ops in program order with their ids.
    pub fn ops_in_order(&self) -> impl Iterator<Item = (OpId, &OpData)> {
        self.body.iter().map(move |&id| (id, &self.ops[id.index()]))
    }

    /// The sharding a value is annotated with, if any: the argument's
    /// `sdy.sharding`, the defining op's per-value sharding, or the sharding
    /// a `sharding_constraint`/`reshard` op gives its result.
    pub fn sharding_of(&self, v: Value) -> Option<&TensorSharding> {
        match self.value(v).def {
            ValueDef::Arg(i) => self.arg_attrs[i as usize].sharding.as_ref(),
            ValueDef::Result { op, index } => {
                let op = &self.ops[op.index()];
                let explicit = op.shardings.as_ref().and_then(|s| s.get(index as usize));
                // A constraint or reshard states its result's sharding as an
                // attribute of the op itself.
                explicit.or(op.kind.def().and_then(|d| d.value_sharding()))
            }
            ValueDef::RegionArg { .. } => None,
        }
    }
}

/// A scalar body of an op (a reduce's combiner, a sort's comparator, a
/// scatter's update): a region that computes only on its block arguments,
/// which are rank-0 tensors. It is stored in the op's attributes as a
/// function of its own (XLA's "computations"), so an op that carries one is
/// self-contained: passes and kernels see it without the enclosing
/// function, and a device program can carry it as is.
#[derive(Debug, Clone)]
pub struct Computation(pub Box<Function>);

/// Two bodies are equal when they compute the same way: the name the
/// parser gave the scratch function (after its op) does not matter.
impl PartialEq for Computation {
    fn eq(&self, other: &Computation) -> bool {
        let (a, b) = (self.func(), other.func());
        a.args == b.args
            && a.values == b.values
            && a.ops == b.ops
            && a.body == b.body
            && a.returns == b.returns
            && a.result_types == b.result_types
    }
}

impl Computation {
    pub fn new(f: Function) -> Computation {
        Computation(Box::new(f))
    }

    pub fn func(&self) -> &Function {
        &self.0
    }

    /// The types of the block arguments.
    pub fn arg_types(&self) -> Vec<TensorType> {
        self.0.args.iter().map(|&a| self.0.ty(a).clone()).collect()
    }

    /// The types of the values the body returns.
    pub fn return_types(&self) -> Vec<TensorType> {
        self.0
            .returns
            .iter()
            .map(|&r| self.0.ty(r).clone())
            .collect()
    }

    /// If the body is exactly one op of `kind`'s family applied to the
    /// block arguments `(a, b)` in order and returned, that op's kind: the
    /// common `stablehlo.add` / `maximum` / ... combiner.
    pub fn single_binary_op(&self) -> Option<crate::ir::BinaryOp> {
        let f = self.func();
        let [id] = f.body.as_slice() else {
            return None;
        };
        let op = f.op(*id);
        match (&op.kind, f.args.as_slice(), f.returns.as_slice()) {
            (OpKind::Binary(b), [a0, a1], [r])
                if op.operands == [*a0, *a1] && op.results == [*r] =>
            {
                Some(*b)
            }
            _ => None,
        }
    }

    /// A body with `2n` block arguments `(a_0..a_n, b_0..b_n)` of the
    /// rank-0 types `elems` (twice) returning `op(a_k, b_k)` for every `k`:
    /// the body of a reduce that combines each input on its own.
    pub fn per_input(op: crate::ir::BinaryOp, elems: &[crate::ir::ElemType]) -> Computation {
        let scalars: Vec<TensorType> = elems.iter().map(|&e| TensorType::scalar(e)).collect();
        let mut f = Function::new("body", [scalars.clone(), scalars.clone()].concat());
        let n = elems.len();
        let mut results = Vec::with_capacity(n);
        for (k, ty) in scalars.into_iter().enumerate() {
            let (a, b) = (f.args[k], f.args[n + k]);
            let id = f.push_op(OpKind::Binary(op), vec![a, b], vec![ty]);
            results.push(f.result(id));
        }
        f.set_returns(results);
        Computation::new(f)
    }

    /// If the body combines each of its `n` inputs on its own with one
    /// binary op (`return op_k(a_k, b_k)` for the `2n` block arguments
    /// `(a_0..a_n, b_0..b_n)`; commutative ops in either order), those ops: the
    /// fast path of reduce-like ops (`add`, `maximum`, ... bodies).
    pub fn per_input_binary_ops(&self) -> Option<Vec<crate::ir::BinaryOp>> {
        let f = self.func();
        let n = f.returns.len();
        if n == 0 || f.args.len() != 2 * n || f.body.len() != n {
            return None;
        }
        let mut ops = Vec::with_capacity(n);
        for (k, &r) in f.returns.iter().enumerate() {
            let ValueDef::Result { op, index: 0 } = f.value(r).def else {
                return None;
            };
            let data = f.op(op);
            let OpKind::Binary(b) = data.kind else {
                return None;
            };
            let (a, c) = (f.args[k], f.args[n + k]);
            use crate::ir::BinaryOp as B;
            let commutative = matches!(
                b,
                B::Add | B::Multiply | B::Maximum | B::Minimum | B::And | B::Or | B::Xor
            );
            if data.operands != [a, c] && !(commutative && data.operands == [c, a]) {
                return None;
            }
            ops.push(b);
        }
        Some(ops)
    }
}

/// A module: meshes, functions, and module attributes kept verbatim.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Module {
    /// `module @name` (without the `@`).
    pub name: Option<String>,
    pub attrs: Vec<NamedAttr>,
    pub meshes: Vec<MeshDef>,
    pub funcs: Vec<Function>,
}

impl Module {
    /// Visit every sharding written in the module, with the position of
    /// what holds it: function arguments and results, op results, and the
    /// shardings op kinds carry (constraints, reshards, manual
    /// computations' in/out shardings, named computations' block
    /// arguments). Shardy's `transformShardings` walks the same set; a pass
    /// that rewrites meshes or axes must see them all, or the module it
    /// leaves names a mesh it no longer defines.
    pub fn for_each_sharding_mut(&mut self, mut visit: impl FnMut(&mut TensorSharding, SrcPos)) {
        for f in &mut self.funcs {
            let pos = f.pos;
            for attrs in f.arg_attrs.iter_mut().chain(f.result_attrs.iter_mut()) {
                if let Some(s) = &mut attrs.sharding {
                    visit(s, pos);
                }
            }
            for op in &mut f.ops {
                let pos = op.pos;
                for s in op.shardings.iter_mut().flatten() {
                    visit(s, pos);
                }
                match &mut op.kind {
                    OpKind::ShardingConstraint(c) => visit(&mut c.sharding, pos),
                    OpKind::Reshard(r) => visit(&mut r.sharding, pos),
                    OpKind::ManualComputation(m) => {
                        for s in m.in_shardings.iter_mut().chain(m.out_shardings.iter_mut()) {
                            visit(s, pos);
                        }
                    }
                    OpKind::NamedComputation(n) => {
                        for s in n.in_shardings.iter_mut().flatten().flatten() {
                            visit(s, pos);
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    pub fn func(&self, name: &str) -> Option<&Function> {
        self.funcs.iter().find(|f| f.name == name)
    }

    pub fn func_mut(&mut self, name: &str) -> Option<&mut Function> {
        self.funcs.iter_mut().find(|f| f.name == name)
    }

    /// The mesh a sharding refers to: the module mesh of that name, or the
    /// inline one.
    pub fn resolve_mesh<'a>(&'a self, r: &'a MeshRef) -> Option<&'a Mesh> {
        match r {
            MeshRef::Symbol(name) => self.mesh(name).map(|d| &d.mesh),
            MeshRef::Inline(mesh) => Some(mesh),
        }
    }

    pub fn mesh(&self, name: &str) -> Option<&MeshDef> {
        self.meshes.iter().find(|m| m.name == name)
    }

    /// The entry function: `main` if present, else the first public one,
    /// else the first function.
    pub fn entry(&self) -> Option<&Function> {
        self.func("main")
            .or_else(|| {
                self.funcs
                    .iter()
                    .find(|f| f.visibility != crate::ir::Visibility::Private)
            })
            .or_else(|| self.funcs.first())
    }
}
