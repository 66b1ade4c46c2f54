//! A sharding that has passed [`validate_sharding`] against a mesh for a
//! tensor of a given rank, as a type: stages that need a valid sharding
//! take a [`ValidSharding`] instead of checking a [`TensorSharding`] again.
//!
//! The only way to make one is [`ValidSharding::new`], which runs the check;
//! the fields are private, so holding a `ValidSharding` is the proof. It
//! borrows the sharding and the mesh it was checked against, so neither
//! can change while the proof is held.

use std::fmt;
use std::ops::Deref;

use crate::sharding::mesh::Mesh;
use crate::sharding::tensor::TensorSharding;
use crate::sharding::validate::{validate_sharding, ShardingError};

/// `sharding`, checked against `mesh` for a tensor of rank `rank`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValidSharding<'a> {
    sharding: &'a TensorSharding,
    mesh: &'a Mesh,
    rank: usize,
}

impl<'a> ValidSharding<'a> {
    /// Checks `sharding` against `mesh` for a tensor of rank `rank`; the
    /// error is [`validate_sharding`]'s. The mesh itself is not checked
    /// (see [`crate::sharding::validate::validate_mesh`]).
    pub fn new(
        sharding: &'a TensorSharding,
        mesh: &'a Mesh,
        rank: usize,
    ) -> Result<ValidSharding<'a>, ShardingError> {
        validate_sharding(sharding, mesh, rank)?;
        Ok(ValidSharding {
            sharding,
            mesh,
            rank,
        })
    }

    pub fn sharding(&self) -> &'a TensorSharding {
        self.sharding
    }

    /// The mesh the sharding was checked against.
    pub fn mesh(&self) -> &'a Mesh {
        self.mesh
    }

    /// The tensor rank the sharding was checked for.
    pub fn rank(&self) -> usize {
        self.rank
    }
}

impl Deref for ValidSharding<'_> {
    type Target = TensorSharding;

    fn deref(&self) -> &TensorSharding {
        self.sharding
    }
}

impl fmt::Display for ValidSharding<'_> {
    /// As the sharding itself prints.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.sharding, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sharding::tensor::{AxisRef, DimSharding};

    fn mesh() -> Mesh {
        Mesh::new(&[("x", 2), ("y", 4)])
    }

    #[test]
    fn a_valid_sharding_keeps_what_it_was_checked_against() {
        let m = mesh();
        let s = TensorSharding::new(
            "mesh",
            vec![
                DimSharding::closed(vec![AxisRef::full("x")]),
                DimSharding::replicated(),
            ],
        );
        let v = ValidSharding::new(&s, &m, 2).expect("valid");
        assert!(std::ptr::eq(v.sharding(), &s));
        assert!(std::ptr::eq(v.mesh(), &m));
        assert_eq!(v.rank(), 2);
        // Deref and Display are the sharding's.
        assert_eq!(v.dims.len(), 2);
        assert_eq!(v.to_string(), s.to_string());
    }

    #[test]
    fn an_invalid_sharding_gives_validate_shardings_error() {
        let m = mesh();
        let s = TensorSharding::new(
            "mesh",
            vec![
                DimSharding::closed(vec![AxisRef::full("x")]),
                DimSharding::closed(vec![AxisRef::full("x")]),
            ],
        );
        assert_eq!(
            ValidSharding::new(&s, &m, 2).unwrap_err(),
            validate_sharding(&s, &m, 2).unwrap_err()
        );
        assert_eq!(
            ValidSharding::new(&s, &m, 3).unwrap_err(),
            ShardingError::RankMismatch { dims: 2, rank: 3 }
        );
    }
}
