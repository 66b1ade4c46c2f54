//! Random sharded programs for differential tests: the generator of
//! `tests/differential.rs`, here so that other test suites (the MPI
//! backend's) run the same programs.
//!
//! [`program`] writes a random program as the MLIR text JAX prints: chains
//! of element-wise ops, `dot_general` (with batching and contracting dims),
//! `reshape`, `transpose`, `broadcast_in_dim` and `reduce` (add, max, min),
//! on random shapes that include non-divisible sizes (7, 13, 1), with
//! random shardings (some open, some by constraints) on a random mesh of
//! 1-3 axes of sizes 1-4, sometimes with a custom `device_ids` order and a
//! second mesh over the same devices in another order. Values stay in
//! ranges where f32 rounding cannot be amplified past a 1e-5 tolerance.
//!
//! Layout: `rng` (random choices), `text` (meshes, values, MLIR type
//! text), `gen` (the program being written: arguments, shardings, the op
//! mix), one file per family of op generators (`basic`: the ops above;
//! `window`: reduce_window, cumsum, max-pool gradients; `conv`: programs
//! around one random convolution, [`conv_program`]; `reduce_multi`: reduce
//! with two inputs, argmax/argmin and sum*max; `sort_reverse`: sort,
//! argsort, top_k, reverse; `structure`: counted loops and two-way conds
//! around random chains of these ops; `index`: programs around gathers,
//! scatters and dynamic slices, [`index_program`]; `manual`: programs
//! around shard_map collectives with mesh-axes replica groups and
//! unreduced values, [`manual_program`]).
//! A new family adds its file with `impl Gen` methods and its line in
//! `Gen::op`.

mod basic;
mod bits;
mod conv;
mod gen;
mod index;
mod manual;
mod reduce_multi;
mod rng;
mod sort_reverse;
mod structure;
mod text;
mod window;

use meshrun_compiler::ir::OpKind;
use meshrun_compiler::partition::global::GStepKind;
use meshrun_compiler::partition::PartitionedProgram;
use meshrun_compiler::sharding::layout::TensorLayout;

use gen::Gen;

pub use bits::bits_program;

/// A random program around one convolution (`conv.rs`).
pub fn conv_program(seed: u64) -> String {
    Gen::conv_program(seed)
}

/// A random program around one or two indexing ops (`index.rs`: gather,
/// scatter, dynamic_slice, dynamic_update_slice) and the bound of its
/// result's magnitude (see [`program_and_bounds`]).
pub fn index_program(seed: u64) -> (String, Vec<f64>) {
    Gen::index_program(seed)
}

/// A random program around `sdy.manual_computation`s whose collectives
/// name their groups by mesh axes, and values made unreduced by sharding
/// constraints (`manual.rs`), and the bounds of its results (see
/// [`program_and_bounds`]).
pub fn manual_program(seed: u64) -> (String, Vec<f64>) {
    Gen::manual_program(seed)
}

/// The random program of `seed`. With `size_one_axes`, shardings may name
/// mesh axes of size 1 (propagation once mishandled them; see
/// `tests/executor_known_bugs.rs`).
pub fn program(seed: u64, size_one_axes: bool) -> String {
    Gen::program(seed, size_one_axes).0
}

/// [`program`] and, per result, the generator's bound on its magnitude:
/// for a sum (reduce add, dot, a window sum) the bound of the sum of the
/// absolute values of its terms, which is what reassociating the sum (as
/// a sharded run does) can change it by, times f32's rounding; `bound`
/// of [`Val`](text::Val) says how each op propagates it.
pub fn program_and_bounds(seed: u64, size_one_axes: bool) -> (String, Vec<f64>) {
    Gen::program(seed, size_one_axes)
}

/// Whether the partitioned program reshapes a block that has padding.
pub fn has_padded_reshape(program: &PartitionedProgram) -> bool {
    let g = &program.global;
    let padded = |v: usize| {
        let val = &g.values[v];
        g.mesh_of(&val.sharding)
            .and_then(|m| TensorLayout::new(m, &val.sharding, &val.ty.shape).ok())
            .is_some_and(|l| l.is_padded())
    };
    g.steps.iter().any(|s| {
        matches!(
            s.kind,
            GStepKind::Compute(OpKind::Reshape(meshrun_compiler::ir::ops::reshape::Reshape))
        ) && s.operands.iter().chain(&s.results).any(|&v| padded(v))
    })
}
