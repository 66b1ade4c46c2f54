//! One MPI communicator per distinct device group, made with
//! `MPI_Comm_split` the first time a collective over that grouping runs and
//! kept for the rest of the process.
//!
//! A collective's groups partition the run's devices. Every rank calls
//! [`group_comm`] at the same collective of the same program, so every rank
//! looks up the same partitions in the same order: a partition seen for the
//! first time is split on every rank at once (`MPI_Comm_split` is
//! collective over the world), with the member's group as the color and its
//! rank in the group as the key, so a communicator's ranks are the group's
//! ranks. Groups of one device need no communicator.
//!
//! The cache lives in the thread that drives MPI (MPI handles are not
//! `Send`; meshrun makes every MPI call from the thread that initialized
//! it) and is emptied by [`clear`] before `MPI_Finalize`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use mpi::topology::{Color, Communicator, SimpleCommunicator};

thread_local! {
    /// Group communicators by partition (groups of world ranks, by rank).
    static GROUPS: RefCell<HashMap<Vec<Vec<usize>>, Rc<SimpleCommunicator>>> =
        RefCell::new(HashMap::new());
}

/// Where one rank stands in a partition of the world into groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Membership {
    /// The number of the group holding this rank.
    pub group: usize,
    /// This rank's place in its group.
    pub rank: usize,
    pub group_size: usize,
}

/// This rank's group and place in `partition` (groups of world ranks).
/// Every group must have the same size and `me` must be in exactly one.
pub fn membership(partition: &[Vec<usize>], me: usize) -> Result<Membership, String> {
    let size = partition.first().map_or(0, Vec::len);
    let mut found = None;
    for (g, members) in partition.iter().enumerate() {
        if members.len() != size || size == 0 {
            return Err(format!("groups of different sizes in {partition:?}"));
        }
        for (rank, &r) in members.iter().enumerate() {
            if r == me {
                if found.is_some() {
                    return Err(format!("rank {me} is in two groups of {partition:?}"));
                }
                found = Some(Membership {
                    group: g,
                    rank,
                    group_size: size,
                });
            }
        }
    }
    found.ok_or_else(|| format!("rank {me} is in no group of {partition:?}"))
}

/// The communicator of this rank's group in `partition`, split from the
/// world on first use (`None` for groups of one). `Rc` because it is shared
/// with the cache.
pub fn group_comm(
    partition: &[Vec<usize>],
    me: usize,
) -> Result<Option<Rc<SimpleCommunicator>>, String> {
    let m = membership(partition, me)?;
    if m.group_size == 1 {
        return Ok(None);
    }
    if let Some(c) = GROUPS.with(|g| g.borrow().get(partition).cloned()) {
        return Ok(Some(c));
    }
    let color = i32::try_from(m.group).map_err(|_| "too many groups".to_string())?;
    let key = i32::try_from(m.rank).map_err(|_| "group too large".to_string())?;
    let comm = SimpleCommunicator::world()
        .split_by_color_with_key(Color::with_value(color), key)
        .ok_or_else(|| "MPI_Comm_split gave no communicator".to_string())?;
    if comm.size() as usize != m.group_size || comm.rank() as usize != m.rank {
        return Err(format!(
            "MPI_Comm_split made a communicator of {} ranks with this one at {}; the group has {} with it at {}",
            comm.size(),
            comm.rank(),
            m.group_size,
            m.rank
        ));
    }
    let comm = Rc::new(comm);
    GROUPS.with(|g| g.borrow_mut().insert(partition.to_vec(), comm.clone()));
    Ok(Some(comm))
}

/// How many group communicators this thread holds (tests check that a
/// partition is split once).
pub fn cached() -> usize {
    GROUPS.with(|g| g.borrow().len())
}

/// Free every group communicator (`MPI_Comm_free`); must happen before
/// `MPI_Finalize`.
pub fn clear() {
    GROUPS.with(|g| g.borrow_mut().clear());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn membership_finds_group_and_rank() {
        let p = vec![vec![0, 2], vec![1, 3]];
        assert_eq!(
            membership(&p, 3).unwrap(),
            Membership {
                group: 1,
                rank: 1,
                group_size: 2
            }
        );
        assert!(membership(&p, 4).unwrap_err().contains("no group"));
        assert!(membership(&[vec![0, 1], vec![1, 2]], 1)
            .unwrap_err()
            .contains("two groups"));
        assert!(membership(&[vec![0, 1], vec![2]], 0)
            .unwrap_err()
            .contains("different sizes"));
    }
}
