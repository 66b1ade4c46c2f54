//! Where the threads of simulated devices meet to exchange blocks.
//!
//! Every collective instance has, per device group, a *slot*: each member
//! deposits a handle to its block (an `Arc`, so nothing is copied) and waits
//! until every member has deposited; then each member takes handles to all
//! the blocks and computes its own result from them, reading the other
//! members' memory directly. The last member to take removes the slot.
//! Slots are keyed by (collective instance, phase, group), so a device that
//! runs ahead into the next collective never meets a stale slot.
//!
//! When every member would compute the same result from the blocks
//! (all-gather, all-reduce), [`Rendezvous::exchange_build`] has the last
//! member to arrive build it once, outside the lock, and hand every member
//! a handle to it; the others sleep meanwhile.
//!
//! A point-to-point send (collective-permute) is a slot with one item that
//! the receiver removes.
//!
//! **Waiting.** A member that has to wait first yields its core for a
//! short while (`spin`), checking a flag, and only then sleeps on the
//! slot's condition variable: with a few device threads per core, the
//! peers it waits for run meanwhile, and the collective completes without a
//! sleep and a wake-up per member (a futex wake-up on a small VM costs
//! tens of µs; eight of them made a 1 KiB all-reduce take ~100 µs). Runs
//! with many more devices than cores do not spin (every yield would hand
//! the core to another waiter), see `CpuBackend::run_spmd`.
//!
//! **Failure.** A device that fails poisons the rendezvous: every member
//! that waits, or will wait, returns [`Poisoned`] naming the first device
//! that failed, so no thread hangs.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Identifies one exchange: a collective instance, a phase within it (a
/// collective may exchange more than once), and a group (or, for a send,
/// the receiving device).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SlotKey {
    pub instance: u64,
    pub phase: u32,
    pub group: i64,
}

/// The run was poisoned: device `failed` failed first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Poisoned {
    pub failed: i64,
}

struct Slot<T> {
    items: Vec<Option<T>>,
    deposited: usize,
    taken: usize,
    /// In an [`Rendezvous::exchange_build`]: a member is building the
    /// result ...
    building: bool,
    /// ... and this is what it built.
    built: Option<Result<T, String>>,
    /// Raised and signalled when the slot is complete (or the run fails):
    /// only the members of this exchange wake up, not every waiting
    /// device.
    ready: Arc<Signal>,
}

/// A slot's completion: a flag for members that spin, a condition
/// variable for members that sleep.
#[derive(Default)]
struct Signal {
    done: AtomicBool,
    cv: Condvar,
}

impl Signal {
    fn raise(&self) {
        self.done.store(true, Ordering::Release);
        self.cv.notify_all();
    }
}

impl<T> Slot<T> {
    fn new(size: usize) -> Slot<T> {
        Slot {
            items: (0..size).map(|_| None).collect(),
            deposited: 0,
            taken: 0,
            building: false,
            built: None,
            ready: Arc::new(Signal::default()),
        }
    }
}

struct State<T> {
    slots: HashMap<SlotKey, Slot<T>>,
    failed: Option<i64>,
}

/// The meeting point of one run's devices.
pub struct Rendezvous<T> {
    state: Mutex<State<T>>,
    /// Raised with `State::failed`, for members that spin.
    poisoned: AtomicBool,
    /// How long a member yields before it sleeps (see the module doc).
    spin: Duration,
}

impl<T: Clone> Default for Rendezvous<T> {
    fn default() -> Self {
        Rendezvous::new()
    }
}

impl<T: Clone> Rendezvous<T> {
    /// A rendezvous whose members sleep as soon as they have to wait.
    pub fn new() -> Rendezvous<T> {
        Rendezvous::with_spin(Duration::ZERO)
    }

    /// A rendezvous whose members yield for up to `spin` before they sleep.
    pub fn with_spin(spin: Duration) -> Rendezvous<T> {
        Rendezvous {
            state: Mutex::new(State {
                slots: HashMap::new(),
                failed: None,
            }),
            poisoned: AtomicBool::new(false),
            spin,
        }
    }

    /// Yield (without the lock) until `ready` is raised, the run fails,
    /// or the spin time is over.
    fn spin_until(&self, ready: &Signal) {
        if self.spin.is_zero() {
            return;
        }
        let start = Instant::now();
        while !ready.done.load(Ordering::Acquire) && !self.poisoned.load(Ordering::Acquire) {
            if start.elapsed() >= self.spin {
                return;
            }
            std::thread::yield_now();
        }
    }

    /// The state; a thread that panicked while holding the lock cannot
    /// have left it inconsistent (every update is a few plain stores), so
    /// a poisoned mutex is used as is.
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wait<'a>(ready: &Signal, guard: MutexGuard<'a, State<T>>) -> MutexGuard<'a, State<T>> {
        ready.cv.wait(guard).unwrap_or_else(|e| e.into_inner())
    }

    /// Deposit `item` as member `rank` of a group of `size` and return
    /// every member's item, by rank, once all have deposited.
    pub fn exchange(
        &self,
        key: SlotKey,
        rank: usize,
        size: usize,
        item: T,
    ) -> Result<Vec<T>, Poisoned> {
        let mut st = self.lock();
        if let Some(failed) = st.failed {
            return Err(Poisoned { failed });
        }
        let slot = st.slots.entry(key).or_insert_with(|| Slot::new(size));
        if rank < slot.items.len() && slot.items[rank].is_none() {
            slot.items[rank] = Some(item);
            slot.deposited += 1;
        }
        if slot.deposited >= size {
            slot.ready.raise();
        }
        let ready = slot.ready.clone();
        if !ready.done.load(Ordering::Acquire) {
            drop(st);
            self.spin_until(&ready);
            st = self.lock();
        }
        loop {
            if let Some(failed) = st.failed {
                return Err(Poisoned { failed });
            }
            let mut taken = None;
            if let Some(slot) = st.slots.get_mut(&key) {
                if slot.deposited >= size {
                    slot.taken += 1;
                    taken = Some((
                        slot.items.iter().flatten().cloned().collect::<Vec<T>>(),
                        slot.taken >= size,
                    ));
                }
            }
            if let Some((items, last)) = taken {
                if last {
                    st.slots.remove(&key);
                }
                return Ok(items);
            }
            st = Self::wait(&ready, st);
        }
    }

    /// Deposit `item` as member `rank` of a group of `size`; the last
    /// member to deposit calls `build` on every member's item (by rank),
    /// and every member returns what it built. `build` runs without the
    /// lock, so the others sleep meanwhile. Its error, if any, is every
    /// member's result; if the builder never publishes (it panicked), the
    /// run is poisoned and the others return [`Poisoned`].
    pub fn exchange_build(
        &self,
        key: SlotKey,
        rank: usize,
        size: usize,
        item: T,
        build: impl FnOnce(&[T]) -> Result<T, String>,
    ) -> Result<Result<T, String>, Poisoned> {
        let mut st = self.lock();
        if let Some(failed) = st.failed {
            return Err(Poisoned { failed });
        }
        let slot = st.slots.entry(key).or_insert_with(|| Slot::new(size));
        if rank < slot.items.len() && slot.items[rank].is_none() && !slot.building {
            slot.items[rank] = Some(item);
            slot.deposited += 1;
        }
        if slot.deposited >= size && !slot.building {
            slot.building = true;
            // The builder holds the items; the slot lets go of them.
            let items: Vec<T> = slot.items.iter_mut().filter_map(Option::take).collect();
            drop(st);
            let built = build(&items);
            drop(items);
            return self.publish(key, size, built);
        }
        let ready = slot.ready.clone();
        drop(st);
        self.spin_until(&ready);
        st = self.lock();
        loop {
            if let Some(failed) = st.failed {
                return Err(Poisoned { failed });
            }
            let mut taken = None;
            if let Some(slot) = st.slots.get_mut(&key) {
                if let Some(built) = &slot.built {
                    slot.taken += 1;
                    taken = Some((built.clone(), slot.taken >= size));
                }
            }
            if let Some((built, last)) = taken {
                if last {
                    st.slots.remove(&key);
                }
                return Ok(built);
            }
            st = Self::wait(&ready, st);
        }
    }

    /// The builder of `key` leaves `built` for the other members and wakes
    /// them.
    fn publish(
        &self,
        key: SlotKey,
        size: usize,
        built: Result<T, String>,
    ) -> Result<Result<T, String>, Poisoned> {
        let mut st = self.lock();
        if let Some(failed) = st.failed {
            return Err(Poisoned { failed });
        }
        // Only a poisoning removes a slot before every member has taken
        // from it, and that was checked above.
        let Some(slot) = st.slots.get_mut(&key) else {
            return Ok(Err(format!(
                "the exchange of collective {} lost its slot",
                key.instance
            )));
        };
        slot.taken += 1;
        if slot.taken >= size {
            st.slots.remove(&key);
        } else {
            slot.built = Some(built.clone());
            slot.ready.raise();
        }
        Ok(built)
    }

    /// Leave `item` for the one receiver of `key`.
    pub fn send(&self, key: SlotKey, item: T) -> Result<(), Poisoned> {
        let mut st = self.lock();
        if let Some(failed) = st.failed {
            return Err(Poisoned { failed });
        }
        let slot = st.slots.entry(key).or_insert_with(|| Slot::new(1));
        if let Some(first) = slot.items.first_mut() {
            *first = Some(item);
            slot.deposited = 1;
        }
        slot.ready.raise();
        Ok(())
    }

    /// Wait for the item sent under `key` and take it.
    pub fn recv(&self, key: SlotKey) -> Result<T, Poisoned> {
        let mut st = self.lock();
        let mut spun = false;
        loop {
            if let Some(failed) = st.failed {
                return Err(Poisoned { failed });
            }
            // The receiver may come first: it makes the slot and waits on
            // it.
            let slot = st.slots.entry(key).or_insert_with(|| Slot::new(1));
            if let Some(item) = slot.items.first_mut().and_then(Option::take) {
                st.slots.remove(&key);
                return Ok(item);
            }
            let ready = slot.ready.clone();
            if spun {
                st = Self::wait(&ready, st);
            } else {
                drop(st);
                self.spin_until(&ready);
                spun = true;
                st = self.lock();
            }
        }
    }

    /// Mark the run as failed because of `device` (the first call wins) and
    /// wake every waiting member.
    pub fn poison(&self, device: i64) {
        let mut st = self.lock();
        if st.failed.is_none() {
            st.failed = Some(device);
        }
        self.poisoned.store(true, Ordering::Release);
        for slot in st.slots.values() {
            slot.ready.raise();
        }
        st.slots.clear();
    }

    /// The device that failed first, if any.
    pub fn failed(&self) -> Option<i64> {
        self.lock().failed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn key(instance: u64) -> SlotKey {
        SlotKey {
            instance,
            phase: 0,
            group: 0,
        }
    }

    #[test]
    fn members_get_every_item_by_rank() {
        let r = Rendezvous::<usize>::new();
        let got: Vec<Vec<usize>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|rank| {
                    let r = &r;
                    s.spawn(move || r.exchange(key(7), rank, 4, rank * 10).unwrap())
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for g in got {
            assert_eq!(g, vec![0, 10, 20, 30]);
        }
        assert!(
            r.lock().slots.is_empty(),
            "the last member removes the slot"
        );
    }

    #[test]
    fn one_member_builds_and_every_member_gets_it() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let r = Rendezvous::<Arc<Vec<usize>>>::new();
        let builds = AtomicUsize::new(0);
        let got: Vec<Arc<Vec<usize>>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..5)
                .map(|rank| {
                    let (r, builds) = (&r, &builds);
                    s.spawn(move || {
                        r.exchange_build(key(3), rank, 5, Arc::new(vec![rank * 2]), |items| {
                            builds.fetch_add(1, Ordering::SeqCst);
                            Ok(Arc::new(items.iter().map(|v| v[0]).collect()))
                        })
                        .unwrap()
                        .unwrap()
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(builds.load(Ordering::SeqCst), 1);
        assert_eq!(*got[0], vec![0, 2, 4, 6, 8]);
        assert!(
            got.iter().all(|g| Arc::ptr_eq(g, &got[0])),
            "one shared result"
        );
        assert!(r.lock().slots.is_empty(), "the last taker removes the slot");
    }

    #[test]
    fn a_build_error_is_every_members_error() {
        let r = Rendezvous::<u8>::new();
        let got: Vec<_> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..3)
                .map(|rank| {
                    let r = &r;
                    s.spawn(move || r.exchange_build(key(4), rank, 3, 0, |_| Err("bad".into())))
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(
            got.iter().all(|g| g == &Ok(Err("bad".to_string()))),
            "{got:?}"
        );
    }

    #[test]
    fn poison_wakes_members_waiting_for_a_build() {
        let r = Rendezvous::<u8>::new();
        let start = Instant::now();
        std::thread::scope(|s| {
            // One member waits for the result; the other builds it, but
            // the run is poisoned (device 6 failed) before it publishes.
            let r = &r;
            let build = move |_: &[u8]| {
                r.poison(6);
                Ok(1)
            };
            let a = s.spawn(move || r.exchange_build(key(2), 0, 2, 0, build));
            let b = s.spawn(move || r.exchange_build(key(2), 1, 2, 0, build));
            assert_eq!(a.join().unwrap(), Err(Poisoned { failed: 6 }));
            assert_eq!(b.join().unwrap(), Err(Poisoned { failed: 6 }));
        });
        // A member that never gets its builder (the last one failed before
        // arriving) wakes too.
        let r = Rendezvous::<u8>::new();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| r.exchange_build(key(8), 0, 2, 0, |_| Ok(1)));
            std::thread::sleep(Duration::from_millis(30));
            r.poison(1);
            assert_eq!(waiter.join().unwrap(), Err(Poisoned { failed: 1 }));
        });
        assert!(start.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn send_then_recv() {
        let r = Rendezvous::<&str>::new();
        r.send(key(1), "block").unwrap();
        assert_eq!(r.recv(key(1)).unwrap(), "block");
    }

    #[test]
    fn poison_wakes_waiters() {
        let r = Rendezvous::<u8>::new();
        let start = Instant::now();
        std::thread::scope(|s| {
            let h = s.spawn(|| r.exchange(key(0), 0, 2, 1));
            let g = s.spawn(|| r.recv(key(5)));
            std::thread::sleep(Duration::from_millis(50));
            r.poison(3);
            r.poison(4);
            assert_eq!(h.join().unwrap(), Err(Poisoned { failed: 3 }));
            assert_eq!(g.join().unwrap(), Err(Poisoned { failed: 3 }));
        });
        assert!(start.elapsed() < Duration::from_secs(5));
        assert_eq!(r.exchange(key(9), 0, 1, 0), Err(Poisoned { failed: 3 }));
    }
}
