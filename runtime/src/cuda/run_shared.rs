//! What the mesh devices of one CUDA run share: the rendezvous their
//! collectives meet in (and the items they swap there), the placement,
//! the NCCL ids, the host-fallback count. The backend makes it, each
//! device holds it, the collectives use it.

use std::collections::HashMap;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};

use cudarc::nccl::Id;

use super::buffer::CudaBuffer;
use super::placement::Placement;
use crate::cpu::rendezvous::Rendezvous;

/// What devices swap in the run's rendezvous.
#[derive(Clone)]
pub(crate) enum Item {
    /// A member's block (phase 0).
    Block(CudaBuffer),
    /// What a GPU's leader received for its GPU: blocks by group rank
    /// (phase 1).
    Received(Arc<Vec<(usize, CudaBuffer)>>),
    /// A member with nothing to hand over (phase 1).
    Nothing,
}

/// NCCL unique ids by communicator member list, shared by the devices of
/// one seating (an id may seed only one communicator).
pub(crate) type NcclIds = Arc<Mutex<HashMap<Vec<i64>, Id>>>;

/// What the devices of one run share.
pub(crate) struct RunShared {
    pub(crate) rendezvous: Rendezvous<Item>,
    pub(crate) placement: Placement,
    pub(crate) nccl_ids: NcclIds,
    pub(crate) fallbacks: Arc<AtomicUsize>,
}
