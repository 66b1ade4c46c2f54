//! The MPI calls behind the collectives, on byte buffers: gather every
//! member's bytes (`MPI_Allgather`/`MPI_Allgatherv`), swap per-member
//! pieces (`MPI_Alltoallv`), and one point-to-point exchange for
//! collective-permute (`MPI_Isend` + `MPI_Recv`).
//!
//! Counts are checked before any call: MPI counts are C `int`s, so one
//! collective moves at most 2 GiB per buffer, and a larger one is an error
//! here, not a wrapped count inside MPI.
//!
//! Every buffer handed to MPI lives on the heap, even an empty one. An
//! empty Rust slice points at the dangling address 0x1, which is Open
//! MPI's `MPI_IN_PLACE`: an empty receive buffer makes `MPI_Alltoallv`
//! fail with `MPI_ERR_ARG`, and an empty send buffer would be read as "in
//! place". Local blocks of zero elements are real (a window op on a
//! dimension smaller than the mesh axis), so the buffers are made here.

use mpi::datatype::{Partition, PartitionMut};
use mpi::traits::*;

fn count(n: usize) -> Result<i32, String> {
    i32::try_from(n)
        .map_err(|_| format!("a buffer of {n} bytes is larger than one MPI message can be (2 GiB)"))
}

/// A heap buffer of `len` zero bytes whose pointer is never dangling (see
/// the module comment); use `&mut buf[..len]`.
fn recv_buffer(len: usize) -> Vec<u8> {
    vec![0u8; len.max(1)]
}

/// `bytes` copied into a heap buffer whose pointer is never dangling; use
/// `&buf[..bytes.len()]`.
fn send_buffer(bytes: &[u8]) -> Vec<u8> {
    let mut buf = Vec::with_capacity(bytes.len().max(1));
    buf.extend_from_slice(bytes);
    buf
}

/// Counts and displacements (exclusive prefix sums) as MPI wants them.
fn layout(lengths: &[usize]) -> Result<(Vec<i32>, Vec<i32>), String> {
    let total: usize = lengths.iter().sum();
    count(total)?;
    let counts = lengths
        .iter()
        .map(|&n| count(n))
        .collect::<Result<Vec<_>, _>>()?;
    let mut displs = Vec::with_capacity(lengths.len());
    let mut at = 0i32;
    for &c in &counts {
        displs.push(at);
        at += c;
    }
    Ok((counts, displs))
}

/// Every member's `mine` (all of the same length), concatenated by rank.
pub fn all_gather<C: Communicator>(comm: &C, mine: &[u8]) -> Result<Vec<u8>, String> {
    let size = comm.size() as usize;
    let total = mine
        .len()
        .checked_mul(size)
        .ok_or("an all-gather too large to count")?;
    count(total)?;
    let send = send_buffer(mine);
    let mut recv = recv_buffer(total);
    comm.all_gather_into(&send[..mine.len()], &mut recv[..total]);
    recv.truncate(total);
    Ok(recv)
}

/// Every member's `mine`, of lengths `lengths` (by rank, known to all),
/// concatenated by rank.
pub fn all_gather_var<C: Communicator>(
    comm: &C,
    mine: &[u8],
    lengths: &[usize],
) -> Result<Vec<u8>, String> {
    let me = comm.rank() as usize;
    if lengths.len() != comm.size() as usize || lengths.get(me) != Some(&mine.len()) {
        return Err(format!(
            "all-gather of {} bytes from rank {me} with lengths {lengths:?}",
            mine.len()
        ));
    }
    let (counts, displs) = layout(lengths)?;
    let total: usize = lengths.iter().sum();
    let send = send_buffer(mine);
    let mut recv = recv_buffer(total);
    {
        let mut part = PartitionMut::new(&mut recv[..total], counts, displs);
        comm.all_gather_varcount_into(&send[..mine.len()], &mut part);
    }
    recv.truncate(total);
    Ok(recv)
}

/// Send `pieces[j]` to member `j` and receive from each member `m` a piece
/// of `recv_lengths[m]` bytes (the caller knows what every member sends
/// it); the received pieces by rank.
pub fn all_to_all<C: Communicator>(
    comm: &C,
    pieces: &[Vec<u8>],
    recv_lengths: &[usize],
) -> Result<Vec<Vec<u8>>, String> {
    let size = comm.size() as usize;
    if pieces.len() != size || recv_lengths.len() != size {
        return Err(format!(
            "all-to-all with {} pieces and {} lengths in a group of {size}",
            pieces.len(),
            recv_lengths.len()
        ));
    }
    let send_lengths: Vec<usize> = pieces.iter().map(Vec::len).collect();
    let (scounts, sdispls) = layout(&send_lengths)?;
    let (rcounts, rdispls) = layout(recv_lengths)?;
    let sent: usize = send_lengths.iter().sum();
    let mut send = send_buffer(&[]);
    for piece in pieces {
        send.extend_from_slice(piece);
    }
    let total: usize = recv_lengths.iter().sum();
    let mut recv = recv_buffer(total);
    {
        let out = Partition::new(&send[..sent], scounts, sdispls);
        let mut back = PartitionMut::new(&mut recv[..total], rcounts, rdispls);
        comm.all_to_all_varcount_into(&out, &mut back);
    }
    let mut received = Vec::with_capacity(size);
    let mut at = 0;
    for &n in recv_lengths {
        received.push(recv[at..at + n].to_vec());
        at += n;
    }
    Ok(received)
}

/// Send `mine` to world rank `to` (if any) and receive a buffer of
/// `recv_len` bytes from world rank `from` (if any), both with `tag`. The
/// send is posted first and does not block, so every rank of a permutation
/// can send before it receives.
pub fn send_recv<C: Communicator>(
    comm: &C,
    mine: &[u8],
    to: Option<usize>,
    from: Option<usize>,
    recv_len: usize,
    tag: i32,
) -> Result<Option<Vec<u8>>, String> {
    count(mine.len())?;
    count(recv_len)?;
    let rank_of = |r: usize| i32::try_from(r).map_err(|_| format!("rank {r} out of range"));
    let to = to.map(rank_of).transpose()?;
    let from = from.map(rank_of).transpose()?;
    mpi::request::scope(|scope| {
        let sent = to.map(|t| {
            comm.process_at_rank(t)
                .immediate_send_with_tag(scope, mine, tag)
        });
        let received = from.map(|f| {
            let (buf, _status) = comm.process_at_rank(f).receive_vec_with_tag::<u8>(tag);
            buf
        });
        if let Some(req) = sent {
            req.wait();
        }
        match received {
            Some(buf) if buf.len() != recv_len => Err(format!(
                "received {} bytes from rank {}, expected {recv_len}",
                buf.len(),
                from.unwrap_or(-1)
            )),
            other => Ok(other),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Open MPI's `MPI_IN_PLACE` is the address 1, where every empty Rust
    /// slice of bytes points; no buffer given to MPI may be there.
    #[test]
    fn empty_buffers_are_not_at_mpi_in_place() {
        let in_place = 1usize;
        let empty = Vec::<u8>::new();
        assert_eq!(empty.as_ptr() as usize, in_place);
        let recv = recv_buffer(0);
        assert_ne!(recv[..0].as_ptr() as usize, in_place);
        let send = send_buffer(&[]);
        assert_ne!(send[..0].as_ptr() as usize, in_place);
        assert_eq!(send_buffer(&[1, 2, 3]), vec![1, 2, 3]);
        assert_eq!(recv_buffer(4), vec![0; 4]);
    }
}
