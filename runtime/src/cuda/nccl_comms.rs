//! The NCCL communicators a device keeps between runs, one per group it
//! meets in, created on first use: the CUDA backend's devices key them by
//! member list, the MPI backend's GPU ranks by partition.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;

use cudarc::nccl::Comm;

use super::ffi::SendComm;

/// Communicators by the key that names their group.
pub struct NcclComms<K> {
    comms: HashMap<K, SendComm>,
}

impl<K> Default for NcclComms<K> {
    fn default() -> Self {
        NcclComms {
            comms: HashMap::new(),
        }
    }
}

impl<K: Hash + Eq> NcclComms<K> {
    /// The communicator of `key`, made by `create` the first time.
    pub fn get_or_create<Q, E>(
        &mut self,
        key: &Q,
        create: impl FnOnce() -> Result<Comm, E>,
    ) -> Result<&Comm, E>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        if !self.comms.contains_key(key) {
            let comm = create()?;
            self.comms.insert(key.to_owned(), SendComm(comm));
        }
        // Present: inserted just above if it was not.
        Ok(&self.comms[key].0)
    }
}
