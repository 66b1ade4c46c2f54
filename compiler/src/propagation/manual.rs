//! `sdy.manual_computation` in propagation. Shardy treats the op as a
//! data-flow op: operand `i` and the body's argument `i` share a sharding
//! (`in_shardings[i]`, the body seeing it without the manual axes), and so
//! do what the body returns and result `i` (`out_shardings[i]`); the open
//! dimensions of those shardings take the free axes propagation brings.
//!
//! Here the same happens in rounds, the body propagated as a function of
//! its own:
//! 1. the module is propagated around the op, whose results are seeded
//!    with its `out_shardings` (the body is left as written);
//! 2. each body is propagated as a function whose arguments are sharded
//!    as `in_shardings` (which took the operands' free axes through the
//!    edge) and whose results as `out_shardings` extended by the results'
//!    uses, manual axes removed; the body's ops take the result, and what
//!    the body's arguments and returns got extends the open dimensions of
//!    `in_shardings` / `out_shardings`;
//! 3. if that changed any `in_shardings`/`out_shardings`, the module is
//!    propagated again from its input with them (a few rounds at most).
//!
//! Around the op, operand `i` and `in_shardings[i]` are one data-flow
//! edge (`data_flow`), and result `i` starts from `out_shardings[i]`; the
//! body is not walked there. Not Shardy's single worklist over both
//! sides: what crosses the op's boundary does so between rounds.

use crate::diag::Diagnostic;
use crate::ir::copy::OpCopier;
use crate::ir::ops::manual_computation::{ManualComputation, BODY_MANUAL_AXES_ATTR};
use crate::ir::{Function, Module, NamedAttr, OpId, OpKind};
use crate::propagation::export::io_shardings::closed;
use crate::propagation::{Propagated, PropagationOptions};
use crate::sharding::{AxisRef, TensorSharding};

/// How many times the module is propagated at most.
const MAX_ROUNDS: usize = 3;

/// Propagate `module` with `outer` (the propagation of everything around
/// manual computations), then the manual computations' bodies, in rounds
/// until their in/out shardings settle.
pub fn with_bodies(
    module: &Module,
    opts: &PropagationOptions,
    outer: impl Fn(&Module, &PropagationOptions) -> Result<Propagated, Diagnostic>,
) -> Result<Propagated, Diagnostic> {
    let mut input = module.clone();
    seed_out_shardings(&mut input);
    if !has_manual_computation(module) {
        return outer(&input, opts);
    }
    // Bodies are copied from `input` into the propagated module, whose
    // identical meshes `outer` merged: merge them here too, so the
    // collectives' mesh-axes groups name meshes that still exist.
    crate::propagation::import::lift_inline_meshes(&mut input);
    let mut round = 0;
    loop {
        round += 1;
        let mut result = outer(&input, opts)?;
        let settled = propagate_bodies(&mut result.module, &input, opts)?;
        if !apply(&mut input, &settled) || round == MAX_ROUNDS {
            if opts.strategy == crate::propagation::Strategy::Full || opts.close {
                as_shardy_prints(&mut result.module);
            }
            return Ok(result);
        }
    }
}

/// The manual computations as Shardy's export leaves them (after the full
/// pipeline, or when closing shardings): `in_shardings`
/// and `out_shardings` closed, and the results' shardings only in
/// `out_shardings` (the per-result `sdy.sharding` the rounds seeded from
/// it is dropped; `values::sharding_of` reads `out_shardings` instead).
fn as_shardy_prints(module: &mut Module) {
    for f in &mut module.funcs {
        for id in f.all_ops() {
            let op = f.op_mut(id);
            if let OpKind::ManualComputation(mc) = &mut op.kind {
                for s in mc.in_shardings.iter_mut().chain(&mut mc.out_shardings) {
                    *s = closed(s);
                }
                op.shardings = None;
            }
        }
    }
}

fn has_manual_computation(m: &Module) -> bool {
    m.funcs.iter().any(|f| {
        f.all_ops()
            .iter()
            .any(|&id| matches!(f.op(id).kind, OpKind::ManualComputation(_)))
    })
}

/// Give every manual computation without an `sdy.sharding` its
/// `out_shardings` as the shardings of its results.
fn seed_out_shardings(module: &mut Module) {
    for f in &mut module.funcs {
        for id in f.all_ops() {
            let op = f.op_mut(id);
            if let OpKind::ManualComputation(mc) = &op.kind {
                if op.shardings.is_none() && !mc.out_shardings.is_empty() {
                    op.shardings = Some(mc.out_shardings.clone());
                }
            }
        }
    }
}

/// The outermost manual computations of `f` (nested ones are propagated
/// with their enclosing body), in walk order.
fn outermost(f: &Function) -> Vec<OpId> {
    let mut out = Vec::new();
    let mut stack: Vec<OpId> = f.body.iter().rev().copied().collect();
    while let Some(id) = stack.pop() {
        let op = f.op(id);
        if matches!(op.kind, OpKind::ManualComputation(_)) {
            out.push(id);
            continue;
        }
        for r in op.regions.iter().rev() {
            stack.extend(r.body.iter().rev());
        }
    }
    out
}

/// `given` with the free axes of `arrived` appended to its open
/// dimensions, where `arrived` (seen outside, or inside the body without
/// the manual axes) extends what `given` names; axes used elsewhere in the
/// sharding, and manual ones, are not taken.
fn extend_open(
    given: &TensorSharding,
    arrived: Option<&TensorSharding>,
    mc: &ManualComputation,
) -> TensorSharding {
    let mut out = given.clone();
    let Some(arrived) = arrived else {
        return out;
    };
    if arrived.dims.len() != given.dims.len() {
        return out;
    }
    let arrived = mc.with_free_axes(given, arrived);
    let mut used: Vec<AxisRef> = given
        .dims
        .iter()
        .flat_map(|d| d.axes.iter().cloned())
        .chain(given.replicated.iter().cloned())
        .collect();
    for (dim, have) in out.dims.iter_mut().zip(&arrived.dims) {
        if dim.is_closed || !have.axes.starts_with(&dim.axes) {
            continue;
        }
        for a in &have.axes[dim.axes.len()..] {
            if mc.is_manual(&a.name) || used.contains(a) {
                break;
            }
            used.push(a.clone());
            dim.axes.push(a.clone());
        }
    }
    out
}

/// The settled `(in_shardings, out_shardings)` of every outermost manual
/// computation, per function.
type Settled = Vec<Vec<(Vec<TensorSharding>, Vec<TensorSharding>)>>;

/// Propagate the body of every outermost manual computation of `module`
/// (already propagated around them) and put the result in place. The
/// bodies are taken as written in `input` (the propagation around them
/// may have rewritten them without knowing how their arguments lie).
fn propagate_bodies(
    module: &mut Module,
    input: &Module,
    opts: &PropagationOptions,
) -> Result<Settled, Diagnostic> {
    let meshes = module.meshes.clone();
    // What the propagation around the bodies made of the calls inside them
    // is replaced by the bodies' own propagation below.
    let stale = called_only_in_bodies(module);
    let mut callees = Callees {
        written: &input.funcs,
        known: module
            .funcs
            .iter()
            .filter(|g| !stale.contains(&g.name))
            .cloned()
            .collect(),
        added: Vec::new(),
    };
    let mut settled = Vec::with_capacity(module.funcs.len());
    for (f, src) in module.funcs.iter_mut().zip(&input.funcs) {
        let mut per_func = Vec::new();
        for (id, src_id) in outermost(f).into_iter().zip(outermost(src)) {
            let ctx = BodyContext {
                meshes: &meshes,
                opts,
            };
            per_func.push(propagate_body(f, id, src, src_id, &ctx, &mut callees)?);
        }
        settled.push(per_func);
    }
    module.funcs.retain(|g| !stale.contains(&g.name));
    module.funcs.extend(callees.added);
    Ok(settled)
}

/// The functions called (directly or through others) from the bodies of
/// outermost manual computations and from nowhere else.
fn called_only_in_bodies(module: &Module) -> Vec<String> {
    let mut inside = Vec::new();
    let mut outside = Vec::new();
    for f in &module.funcs {
        let bodies: Vec<OpId> = outermost(f);
        let mut in_body = std::collections::HashSet::new();
        let mut todo: Vec<OpId> = bodies
            .iter()
            .flat_map(|&id| f.op(id).regions.iter().flat_map(|r| r.body.clone()))
            .collect();
        while let Some(id) = todo.pop() {
            if in_body.insert(id) {
                todo.extend(f.op(id).regions.iter().flat_map(|r| r.body.clone()));
            }
        }
        for id in f.all_ops() {
            if let Some(callee) = f.op(id).kind.callee() {
                if in_body.contains(&id) {
                    inside.push(callee.to_string());
                } else {
                    outside.push(callee.to_string());
                }
            }
        }
    }
    let closure = |mut names: Vec<String>| {
        let mut seen = Vec::new();
        while let Some(n) = names.pop() {
            if seen.contains(&n) {
                continue;
            }
            if let Some(g) = module.funcs.iter().find(|g| g.name == n) {
                names.extend(called(g));
            }
            seen.push(n);
        }
        seen
    };
    let outside = closure(outside);
    closure(inside)
        .into_iter()
        .filter(|n| !outside.contains(n))
        .collect()
}

struct BodyContext<'a> {
    meshes: &'a [crate::sharding::MeshDef],
    opts: &'a PropagationOptions,
}

/// The functions a body's calls may name: as written (propagated with the
/// body, in its local shapes), and those the module has or gets, so that
/// what a body's propagation exports joins the module once (Shardy keeps
/// calls inside manual computations as calls, its callees with the
/// shardings found in local shapes).
struct Callees<'a> {
    written: &'a [Function],
    known: Vec<Function>,
    added: Vec<Function>,
}

/// The callees of the calls in `f` (nested regions included).
fn called(f: &Function) -> Vec<String> {
    f.all_ops()
        .into_iter()
        .filter_map(|id| f.op(id).kind.callee().map(str::to_string))
        .collect()
}

/// `start`'s callees and theirs, from `funcs`.
fn reachable<'f>(funcs: &'f [Function], start: &Function) -> Vec<&'f Function> {
    let mut out: Vec<&Function> = Vec::new();
    let mut todo = called(start);
    while let Some(name) = todo.pop() {
        if out.iter().any(|g| g.name == name) {
            continue;
        }
        if let Some(g) = funcs.iter().find(|g| g.name == name) {
            todo.extend(called(g));
            out.push(g);
        }
    }
    out
}

/// Rename the callees of the calls among `ops` and in their regions.
fn rename_calls(f: &mut Function, ops: &[OpId], names: &std::collections::HashMap<String, String>) {
    let mut todo = ops.to_vec();
    while let Some(id) = todo.pop() {
        let op = f.op_mut(id);
        if let Some(callee) = op.kind.callee_mut() {
            if let Some(n) = names.get(callee) {
                *callee = n.clone();
            }
        }
        for r in &op.regions {
            todo.extend(r.body.iter().copied());
        }
    }
}

impl Callees<'_> {
    /// Add the functions `body` (propagated in `inner`) calls to the
    /// module: one that equals a function it has keeps that one's name,
    /// another gets its own name if free, else `name_0`, `name_1`, ...
    /// The old name -> new name of each.
    fn adopt(
        &mut self,
        inner: &Module,
        body: &Function,
    ) -> std::collections::HashMap<String, String> {
        let mut names = std::collections::HashMap::new();
        let first_new = self.added.len();
        let wanted: Vec<Function> = reachable(&inner.funcs, body).into_iter().cloned().collect();
        for g in &wanted {
            let same = self.known.iter().chain(&self.added).find(|k| {
                let mut h = g.clone();
                h.name = k.name.clone();
                **k == h
            });
            let name = match same {
                Some(k) => k.name.clone(),
                None => {
                    let taken = |n: &str| self.known.iter().chain(&self.added).any(|k| k.name == n);
                    let mut name = g.name.clone();
                    let mut i = 0;
                    while taken(&name) {
                        name = format!("{}_{i}", g.name);
                        i += 1;
                    }
                    let mut h = g.clone();
                    h.name = name.clone();
                    self.added.push(h);
                    name
                }
            };
            names.insert(g.name.clone(), name);
        }
        for h in &mut self.added[first_new..] {
            let ops = h.body.clone();
            rename_calls(h, &ops, &names);
        }
        names
    }
}

fn propagate_body(
    f: &mut Function,
    id: OpId,
    src: &Function,
    src_id: OpId,
    ctx: &BodyContext,
    callees: &mut Callees,
) -> Result<(Vec<TensorSharding>, Vec<TensorSharding>), Diagnostic> {
    let (meshes, opts) = (ctx.meshes, ctx.opts);
    let op = f.op(id).clone();
    let OpKind::ManualComputation(mc) = &op.kind else {
        unreachable!("outermost() lists manual computations only");
    };
    let (Some(target), Some(region)) = (op.regions.first(), src.op(src_id).regions.first()) else {
        return Ok((mc.in_shardings.clone(), mc.out_shardings.clone()));
    };
    // The operands reached in_shardings through their data-flow edges in
    // the propagation around the op; its uses reached its results.
    let given_in = mc.in_shardings.clone();
    let given_out: Vec<TensorSharding> = mc
        .out_shardings
        .iter()
        .zip(&op.results)
        .map(|(s, &v)| extend_open(s, f.sharding_of(v), mc))
        .collect();

    // The body as a function of its own.
    let arg_types = region.args.iter().map(|&a| src.ty(a).clone()).collect();
    let mut body = Function::new(format!("{}.body", f.name), arg_types);
    // Every axis manual where the body stands: those of the computations
    // around it (a nested body's function carries them) and its own, so a
    // `partition_id` inside (`lax.axis_index` in a partial-manual
    // shard_map) sees all of them.
    let mut manual: Vec<String> = f
        .attrs
        .iter()
        .filter(|a| a.name == BODY_MANUAL_AXES_ATTR)
        .filter_map(|a| a.value.as_deref())
        .flat_map(|v| v.split(',').filter(|a| !a.is_empty()).map(str::to_string))
        .collect();
    manual.extend(mc.manual_axes.iter().cloned());
    body.attrs.push(NamedAttr::new(
        BODY_MANUAL_AXES_ATTR,
        Some(manual.join(",")),
    ));
    for (k, s) in given_in.iter().enumerate() {
        let s = mc.body_sharding(s);
        if s.dims.iter().any(|d| !d.axes.is_empty()) {
            body.arg_attrs[k].sharding = Some(s);
        }
    }
    let mut copier = OpCopier::new(src);
    for (&a, &b) in region.args.iter().zip(&body.args.clone()) {
        copier.map[a.index()] = Some(b);
    }
    for &inner in &region.body {
        let nid = copier
            .copy_op(&mut body, inner)
            .map_err(|v| undefined(&op, v))?;
        body.body.push(nid);
    }
    body.returns = region
        .returns
        .iter()
        .map(|&v| copier.lookup(v))
        .collect::<Result<_, _>>()
        .map_err(|v| undefined(&op, v))?;
    body.result_types = body.returns.iter().map(|&v| body.ty(v).clone()).collect();
    body.result_attrs = vec![Default::default(); body.returns.len()];
    for (k, s) in given_out.iter().enumerate() {
        let s = mc.body_sharding(s);
        if s.dims.iter().any(|d| !d.axes.is_empty()) {
            body.result_attrs[k].sharding = Some(s);
        }
    }
    let mut funcs: Vec<Function> = reachable(callees.written, &body)
        .into_iter()
        .cloned()
        .collect();
    funcs.insert(0, body);
    let inner = Module {
        name: None,
        attrs: Vec::new(),
        meshes: meshes.to_vec(),
        funcs,
    };
    let propagated = crate::propagation::propagate(&inner, opts)?;
    let body = &propagated.funcs[0];
    let renamed = callees.adopt(&propagated, body);

    // What the body's arguments and returns got extends the open
    // dimensions of in_shardings and out_shardings.
    let in_shardings: Vec<TensorSharding> = given_in
        .iter()
        .zip(&body.args)
        .map(|(s, &v)| extend_open(s, body.sharding_of(v), mc))
        .collect();
    let out_shardings: Vec<TensorSharding> = given_out
        .iter()
        .zip(&body.returns)
        .map(|(s, &v)| extend_open(s, body.sharding_of(v), mc))
        .collect();

    // The propagated body replaces the one written.
    let mut back = OpCopier::new(body);
    for (&b, &a) in body.args.iter().zip(&target.args) {
        back.map[b.index()] = Some(a);
    }
    let mut new_body = Vec::with_capacity(body.body.len());
    for &inner in &body.body {
        let nid = back.copy_op(f, inner).map_err(|v| undefined(&op, v))?;
        new_body.push(nid);
    }
    let returns = body
        .returns
        .iter()
        .map(|&v| back.lookup(v))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|v| undefined(&op, v))?;
    let op_mut = f.op_mut(id);
    op_mut.regions[0].body = new_body;
    op_mut.regions[0].returns = returns;
    let ops = op_mut.regions[0].body.clone();
    if let OpKind::ManualComputation(m) = &mut op_mut.kind {
        m.in_shardings = in_shardings.clone();
        m.out_shardings = out_shardings.clone();
    }
    rename_calls(f, &ops, &renamed);
    Ok((in_shardings, out_shardings))
}

fn undefined(op: &crate::ir::OpData, v: crate::ir::Value) -> Diagnostic {
    Diagnostic::new(
        crate::diag::DiagKind::UndefinedName,
        op.pos,
        format!(
            "{}: its body uses value #{} from outside (bodies are isolated)",
            op.kind.name(),
            v.0
        ),
    )
}

/// Set the settled shardings on the manual computations of the input
/// module (same functions, same walk order); whether anything changed.
fn apply(module: &mut Module, settled: &Settled) -> bool {
    let mut changed = false;
    for (f, per_func) in module.funcs.iter_mut().zip(settled) {
        for (id, (ins, outs)) in outermost(f).into_iter().zip(per_func) {
            let op = f.op_mut(id);
            if let OpKind::ManualComputation(mc) = &mut op.kind {
                if &mc.in_shardings != ins || &mc.out_shardings != outs {
                    changed = true;
                    mc.in_shardings = ins.clone();
                    mc.out_shardings = outs.clone();
                    op.shardings = Some(outs.clone());
                }
            }
        }
    }
    changed
}
