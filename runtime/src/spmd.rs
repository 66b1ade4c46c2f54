//! The SPMD driver the backends share: one thread per device, each
//! device's panic turned into its error, and one answer for the run, all
//! results or the failure that came first.
//!
//! The backends differ in what a device is and where its thread comes
//! from (the CPU backend's persistent pool, a fresh thread bound to a GPU,
//! the MPI rank's own thread); how a run fails is the same for all.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::error::RuntimeError;

/// Where a run's device threads come from.
pub(crate) enum Threads<'a> {
    /// A rayon pool's workers, one per device (persistent: spawning a
    /// thread costs ~150 µs on small machines).
    Pool(&'a rayon::ThreadPool),
    /// A new thread per device, named `{name}-{id}`.
    Spawned(&'static str),
}

/// Run `run_one` for each of `devices`, each on its own thread of
/// `threads`; all results in device order, or the first failure (see
/// [`first_failure`]; `failed` says, once every thread is done, which
/// device failed first). `run_one` must make its peers stop when it
/// fails (poison their rendezvous): they may be waiting for it in a
/// collective. A thread that cannot start makes `poison` stop the others.
pub(crate) fn run_per_device<R: Send>(
    devices: &[i64],
    threads: Threads<'_>,
    run_one: &(dyn Fn(i64) -> Result<R, RuntimeError> + Sync),
    poison: &(dyn Fn(i64) + Sync),
    failed: &dyn Fn() -> Option<i64>,
) -> Result<Vec<R>, RuntimeError> {
    let results: Vec<Result<R, RuntimeError>> = match threads {
        Threads::Pool(pool) => {
            let mut results: Vec<Option<Result<R, RuntimeError>>> =
                (0..devices.len()).map(|_| None).collect();
            pool.scope(|s| {
                for (slot, &id) in results.iter_mut().zip(devices) {
                    s.spawn(move |_| *slot = Some(run_one(id)));
                }
            });
            results
                .into_iter()
                .zip(devices)
                .map(|(r, &id)| {
                    r.unwrap_or_else(|| {
                        Err(RuntimeError::Program(format!("device {id} did not run")))
                    })
                })
                .collect()
        }
        Threads::Spawned(name) => std::thread::scope(|s| {
            let handles: Vec<_> = devices
                .iter()
                .map(|&id| {
                    std::thread::Builder::new()
                        .name(format!("{name}-{id}"))
                        .spawn_scoped(s, move || run_one(id))
                })
                .collect();
            for (h, &id) in handles.iter().zip(devices) {
                if h.is_err() {
                    poison(id);
                }
            }
            handles
                .into_iter()
                .zip(devices)
                .map(|(h, &id)| match h {
                    Err(e) => Err(RuntimeError::Program(format!(
                        "cannot start the thread of device {id}: {e}"
                    ))),
                    Ok(h) => h.join().unwrap_or_else(|payload| {
                        Err(RuntimeError::DevicePanic {
                            device: id,
                            message: panic_message(payload.as_ref()),
                        })
                    }),
                })
                .collect()
        }),
    };
    first_failure(devices, results, failed())
}

/// Device `id`'s part of a run, `body`, with a panic in it turned into
/// the device's error (the run then fails with it instead of aborting the
/// process).
pub(crate) fn catch_device_panic<R>(
    id: i64,
    body: impl FnOnce() -> Result<R, RuntimeError>,
) -> Result<R, RuntimeError> {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| {
        Err(RuntimeError::DevicePanic {
            device: id,
            message: panic_message(payload.as_ref()),
        })
    })
}

/// The message of a panic payload.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".into()
    }
}

/// All results, or the error of the device that failed first (`failed`,
/// as recorded by the run's rendezvous), else the first error in device
/// order.
fn first_failure<R>(
    devices: &[i64],
    results: Vec<Result<R, RuntimeError>>,
    failed: Option<i64>,
) -> Result<Vec<R>, RuntimeError> {
    if results.iter().all(Result::is_ok) {
        return Ok(results.into_iter().flatten().collect());
    }
    let mut first = None;
    for (r, &id) in results.into_iter().zip(devices) {
        if let Err(e) = r {
            if Some(id) == failed {
                return Err(e);
            }
            first.get_or_insert(e);
        }
    }
    Err(first.unwrap_or_else(|| RuntimeError::Program("a device failed".into())))
}
