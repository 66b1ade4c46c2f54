//! meshrun runtime: devices, buffers, collectives, the executor and its
//! backends. (Filled in by the CPU-runtime work; see ARCHITECTURE.md.)
//!
//! - [`reference`] — the one-device reference interpreter every sharded run
//!   is checked against.
//! - [`npy`] — `.npy` files to and from host tensors.
//! - [`error`] — `RuntimeError`.

pub mod error;
pub mod npy;
pub mod reference;

pub use error::RuntimeError;
