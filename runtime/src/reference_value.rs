//! How the reference interpreter holds a value: on each device that runs
//! it (a lane; the unsharded program has one), a [`Slot`], which borrows
//! the caller's input or shares a computed tensor, so that identity ops,
//! call arguments and replicated blocks do not copy.

use std::ops::Deref;
use std::rc::Rc;

use meshrun_compiler::ir::TensorType;
use meshrun_kernels::HostTensor;

/// One value on every device: `None` on devices that do not hold it
/// (those outside the branch or loop that defines it).
pub(crate) type Lanes<'a> = Vec<Option<Slot<'a>>>;

/// A value on one device: a caller's input (borrowed) or a computed
/// tensor (shared).
#[derive(Clone)]
pub(crate) enum Slot<'a> {
    Input(&'a HostTensor),
    Computed(Rc<HostTensor>),
}

impl Deref for Slot<'_> {
    type Target = HostTensor;
    fn deref(&self) -> &HostTensor {
        match self {
            Slot::Input(t) => t,
            Slot::Computed(t) => t,
        }
    }
}

impl Slot<'_> {
    pub(crate) fn new(t: HostTensor) -> Self {
        Slot::Computed(Rc::new(t))
    }

    /// The tensor, copied only while something else still shares it.
    pub(crate) fn into_owned(self) -> HostTensor {
        match self {
            Slot::Input(t) => t.clone(),
            Slot::Computed(rc) => Rc::try_unwrap(rc).unwrap_or_else(|rc| (*rc).clone()),
        }
    }
}

/// Whether `t` has exactly the type `ty` (shape and element type).
pub(crate) fn matches_type(t: &HostTensor, ty: &TensorType) -> bool {
    t.elem_type() == ty.elem
        && t.shape().len() == ty.shape.len()
        && t.shape()
            .iter()
            .zip(&ty.shape)
            .all(|(&a, &b)| a as i64 == b)
}
