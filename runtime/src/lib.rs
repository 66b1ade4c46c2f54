//! meshrun runtime: devices, buffers, collectives, the executor and its
//! backends. (Filled in by the CPU-runtime work; see ARCHITECTURE.md.)
