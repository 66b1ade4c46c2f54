//! Provenance: for every value, which op and factor (and from which tensor)
//! gave each axis of its sharding. `meshrun propagate --explain VALUE`
//! prints it.
//!
//! An entry is recorded whenever an axis appears in a dimension of a value's
//! sharding; entries of axes that later disappear (a non-divisible
//! argument shrunk at export) are dropped, so the record always describes
//! the final sharding.

use std::fmt;

use crate::ir::{OpId, Value};
use crate::sharding::{AxisRef, TensorSharding};

/// A value of a function, or one of the function's results (whose sharding
/// is kept apart from the returned value's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Slot {
    Value(Value),
    Result(usize),
}

/// Why an axis is in a sharding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Written in the input program.
    Annotated,
    /// A fully closed `sdy.sharding_constraint` (whose result is `from`)
    /// applied to its input at import.
    Constraint { from: Slot },
    /// Propagated through `op` along `factor`; `from` is the operand or
    /// result that already had the axis, if one did.
    Op {
        op: OpId,
        factor: usize,
        from: Option<Slot>,
        stage: usize,
    },
    /// Copied from another member of the value's sharding group.
    Group { from: Slot },
    /// Exchanged between a function result and the value it returns.
    FuncResult { index: usize, stage: usize },
    /// In a function propagation kept as a callee: came from the caller,
    /// through the call's operands or results (`export::calls`).
    Caller,
}

/// One axis of one dimension and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AxisOrigin {
    pub dim: usize,
    pub axis: AxisRef,
    pub origin: Origin,
}

/// The provenance of every value and result of one function.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FuncProvenance {
    pub values: Vec<Vec<AxisOrigin>>,
    pub results: Vec<Vec<AxisOrigin>>,
}

impl FuncProvenance {
    pub fn new(num_values: usize, num_results: usize) -> FuncProvenance {
        FuncProvenance {
            values: vec![Vec::new(); num_values],
            results: vec![Vec::new(); num_results],
        }
    }

    pub fn get(&self, slot: Slot) -> &[AxisOrigin] {
        let list = match slot {
            Slot::Value(v) => self.values.get(v.index()),
            Slot::Result(i) => self.results.get(i),
        };
        list.map_or(&[], Vec::as_slice)
    }

    fn get_mut(&mut self, slot: Slot) -> Option<&mut Vec<AxisOrigin>> {
        match slot {
            Slot::Value(v) => self.values.get_mut(v.index()),
            Slot::Result(i) => self.results.get_mut(i),
        }
    }

    /// Record that `slot` now has sharding `new`: axes no longer in their
    /// dimension are forgotten, axes without an entry get
    /// `origin_of(dim, axis)`.
    pub fn record(
        &mut self,
        slot: Slot,
        new: Option<&TensorSharding>,
        mut origin_of: impl FnMut(usize, &AxisRef) -> Origin,
    ) {
        let Some(list) = self.get_mut(slot) else {
            return;
        };
        let has = |s: Option<&TensorSharding>, dim: usize, axis: &AxisRef| {
            s.and_then(|s| s.dims.get(dim))
                .is_some_and(|d| d.axes.contains(axis))
        };
        list.retain(|e| has(new, e.dim, &e.axis));
        let Some(new) = new else {
            return;
        };
        for (dim, d) in new.dims.iter().enumerate() {
            for axis in &d.axes {
                let known = list.iter().any(|e| e.dim == dim && &e.axis == axis);
                if !known {
                    let origin = origin_of(dim, axis);
                    list.push(AxisOrigin {
                        dim,
                        axis: axis.clone(),
                        origin,
                    });
                }
            }
        }
    }

    /// Entries for every axis of `sharding` that has none yet, marked
    /// `origin` (used for the shardings a program starts with).
    pub fn seed(&mut self, slot: Slot, sharding: &TensorSharding, origin: Origin) {
        let Some(list) = self.get_mut(slot) else {
            return;
        };
        for (dim, d) in sharding.dims.iter().enumerate() {
            for axis in &d.axes {
                if !list.iter().any(|e| e.dim == dim && &e.axis == axis) {
                    list.push(AxisOrigin {
                        dim,
                        axis: axis.clone(),
                        origin: origin.clone(),
                    });
                }
            }
        }
    }

    /// Move every entry to the new value numbering `map` (old index → new
    /// value), dropping values that no longer exist.
    pub fn renumber(&mut self, map: &[Option<Value>], num_values: usize) {
        let mut values = vec![Vec::new(); num_values];
        for (old, list) in self.values.drain(..).enumerate() {
            if let Some(Some(new)) = map.get(old) {
                if let Some(slot) = values.get_mut(new.index()) {
                    *slot = list;
                }
            }
        }
        self.values = values;
        let remap = |slot: &mut Option<Slot>| {
            if let Some(Slot::Value(v)) = slot {
                *slot = map.get(v.index()).copied().flatten().map(Slot::Value);
            }
        };
        for e in self
            .values
            .iter_mut()
            .chain(self.results.iter_mut())
            .flatten()
        {
            match &mut e.origin {
                Origin::Op { from, .. } => remap(from),
                Origin::Group { from } | Origin::Constraint { from } => {
                    let mut s = Some(*from);
                    remap(&mut s);
                    if let Some(s) = s {
                        *from = s;
                    }
                }
                _ => {}
            }
        }
    }
}

impl fmt::Display for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Slot::Value(v) => write!(f, "value #{}", v.0),
            Slot::Result(i) => write!(f, "result{i}"),
        }
    }
}
