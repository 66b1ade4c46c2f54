//! Results one simulated device made that its replicas take instead of
//! computing them again.
//!
//! Simulated devices share one memory, and replicated blocks are one
//! buffer: an input every device of a data-parallel group holds is
//! uploaded once (`Backend::upload_shared`), an all-reduce's sum is built
//! once and handed to every member. Every replica then ran the same
//! kernels on the same buffers: each of the 4 data-parallel replicas of
//! an 8-device training step updated the same weights with the same
//! summed gradient. A device that reaches a top-level unit whose operands
//! are the very buffers another device ran it on takes that device's
//! results: the same kernels on the same inputs with the same threads
//! (one per device) give the same bits. The first device to reach such a
//! unit claims it, and replicas with the same blocks wait for it instead
//! of computing it at the same time.
//!
//! One slot per top-level unit holds, per set of operand blocks, weak
//! handles on the operands (so that their addresses cannot name other
//! blocks while they serve as the key) and on the results: no block lives
//! longer for it (but constants, which the executor keeps:
//! `Device::share_kept`). A replica whose device already let go of the
//! results computes them again. Every device passes every top-level unit once per
//! run (control flow is replicated), so the slot is emptied when the last
//! device has passed. Which units are shared is the executor's choice
//! (`exec_blocks`): local computations from their operands alone.

use std::sync::{Condvar, Mutex, MutexGuard};

use crate::backend::ShareHandle;

/// A unit made from one set of blocks (one group of replicas').
enum State {
    /// A device is computing it; replicas with the same blocks wait.
    Computing,
    Done {
        /// Held so that no other buffer takes their addresses meanwhile.
        _operands: Vec<ShareHandle>,
        results: Vec<ShareHandle>,
    },
}

/// Per set of operand keys, its state (a unit has one per group of
/// replicas: the two halves of a model axis hold different blocks), and
/// how many devices passed the unit.
struct Shared {
    by_keys: Vec<(Vec<usize>, State)>,
    passed: usize,
}

impl Shared {
    fn find(&self, keys: &[usize]) -> Option<usize> {
        self.by_keys.iter().position(|(k, _)| k.as_slice() == keys)
    }

    /// Count one device past the unit; after the last, let go of it all.
    fn pass(&mut self, devices: usize) {
        self.passed += 1;
        if self.passed >= devices {
            self.by_keys.clear();
        }
    }

    /// Record `state` for `keys`.
    fn set(&mut self, keys: &[usize], state: State) {
        match self.find(keys) {
            Some(i) => self.by_keys[i].1 = state,
            None => self.by_keys.push((keys.to_vec(), state)),
        }
    }
}

struct Slot {
    state: Mutex<Shared>,
    ready: Condvar,
}

impl Slot {
    fn lock(&self) -> MutexGuard<'_, Shared> {
        // Plain data: a device that panicked while holding the lock left
        // it whole.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One run's shared results (see the module doc).
pub(crate) struct ReplicaResults {
    slots: Vec<Slot>,
    devices: usize,
}

/// What a device does at a shared unit.
pub(crate) enum Begin<'a, B> {
    /// A replica's results; this device is counted past the unit.
    Hit(Vec<B>),
    /// Compute it, then [`Claim::done`]: replicas may be waiting for it.
    Compute(Claim<'a>),
}

/// A device computes a unit its replicas wait for. Dropped without
/// [`Claim::done`] (the device failed), it lets them go to compute it
/// themselves.
pub(crate) struct Claim<'a> {
    slot: &'a Slot,
    keys: Vec<usize>,
    devices: usize,
    done: bool,
}

impl Claim<'_> {
    /// Handles on the operands and results, for the replicas waiting and
    /// those to come; this device is counted past the unit.
    pub fn done(mut self, operands: Vec<ShareHandle>, results: Vec<ShareHandle>) {
        let mut st = self.slot.lock();
        st.set(
            &self.keys,
            State::Done {
                _operands: operands,
                results,
            },
        );
        st.pass(self.devices);
        self.done = true;
        self.slot.ready.notify_all();
    }
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        if !self.done {
            let mut st = self.slot.lock();
            if let Some(i) = st.find(&self.keys) {
                if matches!(st.by_keys[i].1, State::Computing) {
                    st.by_keys.remove(i);
                }
            }
            self.slot.ready.notify_all();
        }
    }
}

impl ReplicaResults {
    /// Slots for `units` top-level units on `devices` devices.
    pub fn new(units: usize, devices: usize) -> ReplicaResults {
        ReplicaResults {
            slots: (0..units)
                .map(|_| Slot {
                    state: Mutex::new(Shared {
                        by_keys: Vec::new(),
                        passed: 0,
                    }),
                    ready: Condvar::new(),
                })
                .collect(),
            devices,
        }
    }

    /// A device reaches `unit` with operands keyed `keys`: the results a
    /// replica made from the same blocks (`upgrade` turns a handle back
    /// into a buffer), waiting for a replica computing them; else this
    /// device claims the unit and computes it. `None`: no such unit.
    pub fn begin<B>(
        &self,
        unit: usize,
        keys: &[usize],
        upgrade: impl Fn(&ShareHandle) -> Option<B>,
    ) -> Option<Begin<'_, B>> {
        let slot = self.slots.get(unit)?;
        let mut st = slot.lock();
        loop {
            match st.find(keys).map(|i| &st.by_keys[i].1) {
                Some(State::Done { results, .. }) => {
                    let alive: Option<Vec<B>> = results.iter().map(&upgrade).collect();
                    if let Some(results) = alive {
                        st.pass(self.devices);
                        return Some(Begin::Hit(results));
                    }
                    // Its device let go of them already: make them again.
                    break;
                }
                Some(State::Computing) => {
                    st = slot.ready.wait(st).unwrap_or_else(|e| e.into_inner());
                }
                None => break,
            }
        }
        st.set(keys, State::Computing);
        Some(Begin::Compute(Claim {
            slot,
            keys: keys.to_vec(),
            devices: self.devices,
            done: false,
        }))
    }

    /// This device passed `unit` without sharing it (its operands have
    /// no keys).
    pub fn passed(&self, unit: usize) {
        if let Some(slot) = self.slots.get(unit) {
            slot.lock().pass(self.devices);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Weak};

    fn handle(b: &Arc<u32>) -> ShareHandle {
        ShareHandle(Box::new(Arc::downgrade(b)))
    }

    fn upgrade(h: &ShareHandle) -> Option<Arc<u32>> {
        h.0.downcast_ref::<Weak<u32>>()?.upgrade()
    }

    fn hit(b: Option<Begin<'_, Arc<u32>>>) -> Option<Vec<Arc<u32>>> {
        match b? {
            Begin::Hit(r) => Some(r),
            Begin::Compute(_) => None,
        }
    }

    fn claim(b: Option<Begin<'_, Arc<u32>>>) -> Claim<'_> {
        match b {
            Some(Begin::Compute(c)) => c,
            _ => panic!("expected to compute"),
        }
    }

    #[test]
    fn replicas_take_the_first_result_while_it_lives() {
        let r = ReplicaResults::new(2, 4);
        let (x, y) = (Arc::new(1), Arc::new(2));
        claim(r.begin(0, &[7], upgrade)).done(vec![handle(&x)], vec![handle(&y)]);
        assert_eq!(Arc::strong_count(&x), 1, "only a weak handle is kept");
        let got = hit(r.begin(0, &[7], upgrade)).expect("a replica takes it");
        assert!(Arc::ptr_eq(&got[0], &y));
        // Other blocks: computed, and kept apart.
        let z = Arc::new(3);
        claim(r.begin(0, &[8], upgrade)).done(Vec::new(), vec![handle(&z)]);
        drop((got, y));
        // The results were let go: the next replica makes them again.
        let c = claim(r.begin(0, &[7], upgrade));
        drop(c);
        assert!(hit(r.begin(0, &[8], upgrade)).is_some());
        // Out of range: no slot. Passing counts.
        assert!(r.begin::<Arc<u32>>(5, &[1], upgrade).is_none());
        r.passed(1);
    }

    #[test]
    fn replicas_wait_for_the_claim_and_an_abandoned_claim_lets_them_go() {
        let r = ReplicaResults::new(1, 4);
        let made = std::sync::atomic::AtomicUsize::new(0);
        let keep = Arc::new(42u32);
        let got: Vec<u32> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| match r.begin(0, &[1], upgrade) {
                        Some(Begin::Hit(v)) => *v[0],
                        Some(Begin::Compute(c)) => {
                            made.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                            std::thread::sleep(std::time::Duration::from_millis(20));
                            c.done(Vec::new(), vec![handle(&keep)]);
                            *keep
                        }
                        None => panic!("a slot"),
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(got, vec![42; 4]);
        assert_eq!(made.into_inner(), 1, "one device computed, three waited");
        // A claim dropped undone: the next device claims it in turn.
        let r = ReplicaResults::new(1, 2);
        drop(claim(r.begin(0, &[1], upgrade)));
        drop(claim(r.begin(0, &[1], upgrade)));
    }
}
