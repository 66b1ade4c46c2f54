//! How large a program the partitioner takes on. It builds tables with an
//! entry per device (device lists, collective groups, per-device offsets)
//! and remap tables with an entry per device and element of the remapped
//! dimension; these bounds keep them to a few hundred MB, so an absurd
//! size is an error naming it instead of an allocation that aborts.

use crate::diag::{DiagKind, Diagnostic, SrcPos};
use crate::sharding::Mesh;

/// The most devices a mesh of a partitioned program may have.
pub const MAX_DEVICES: i64 = 1 << 16;

/// The most entries (devices × local elements along the dimension, plus
/// devices × block shifts) one remap may plan.
pub const MAX_REMAP_ENTRIES: i64 = 1 << 24;

/// The most rounds (source-block shifts, one collective-permute each) a
/// reshard's remap may take: a remap that fetches from more blocks than
/// this (a gather of a dimension split 256 ways) becomes whole-block
/// collectives instead, whose count does not grow with the mesh; the
/// program, and the time to plan it, stay linear in the device count.
pub const MAX_RESHARD_REMAP_ROUNDS: i64 = 16;

/// An error unless `mesh` (`what`: `mesh @name` or `the inline mesh of
/// ...`, written at `pos`) has at most [`MAX_DEVICES`] devices.
pub fn check_mesh_devices(what: &str, mesh: &Mesh, pos: SrcPos) -> Result<(), Diagnostic> {
    let devices = mesh
        .axes
        .iter()
        .try_fold(1i64, |n, a| n.checked_mul(a.size.max(0)));
    match devices {
        Some(n) if n <= MAX_DEVICES => Ok(()),
        _ => Err(Diagnostic::new(
            DiagKind::Unsupported,
            pos,
            format!(
                "{what} has {} devices; the partitioner handles at most {MAX_DEVICES}",
                describe_count(mesh)
            ),
        )),
    }
}

/// The device count of `mesh` in words, also when it overflows `i64`.
fn describe_count(mesh: &Mesh) -> String {
    let n = mesh
        .axes
        .iter()
        .try_fold(1u128, |n, a| n.checked_mul(a.size.max(0) as u128));
    match n {
        Some(n) => n.to_string(),
        None => "more than 2^128".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meshes_up_to_the_limit_pass_and_larger_ones_say_both_counts() {
        let ok = Mesh::new(&[("x", 256), ("y", 256)]);
        assert!(check_mesh_devices("mesh @m", &ok, SrcPos::UNKNOWN).is_ok());
        let big = Mesh::new(&[("x", 999_999_999_998)]);
        let e = check_mesh_devices("mesh @m", &big, SrcPos::UNKNOWN).unwrap_err();
        assert_eq!(
            e.message,
            "mesh @m has 999999999998 devices; the partitioner handles at most 65536"
        );
        let huge = Mesh::new(&[("x", i64::MAX), ("y", i64::MAX), ("z", 8)]);
        let e = check_mesh_devices("mesh @m", &huge, SrcPos::UNKNOWN).unwrap_err();
        assert!(
            e.message.starts_with("mesh @m has more than 2^128 devices"),
            "{}",
            e.message
        );
    }
}
