//! GPUs under MPI: which GPU a rank uses, and the NCCL unique id that
//! bootstraps an NCCL communicator over MPI.
//!
//! - **Which GPU.** A rank uses GPU number *local rank* among the GPUs its
//!   process sees, the local rank being its place among the ranks of its
//!   node: `OMPI_COMM_WORLD_LOCAL_RANK` (Open MPI), else `MPI_LOCALRANKID`
//!   (MPICH/Hydra), else `SLURM_LOCALID` (srun). More ranks on a node than
//!   GPUs is an error, never two ranks silently sharing a GPU. (A process
//!   pinned to one GPU by `CUDA_VISIBLE_DEVICES` uses that one:
//!   [`super::cuda_rank::rank_gpu`].)
//! - **NCCL.** The rank 0 of an MPI communicator creates the NCCL unique
//!   id (`ncclGetUniqueId`) and broadcasts it over that communicator in a
//!   checked frame (below); every rank then joins with
//!   `ncclCommInitRank(size, id, rank)`
//!   ([`super::cuda_rank_device`] does this once per device group).
//!
//! The frame: 16 bytes of magic `meshrun-ncclid\0\0`, a little-endian
//! `u32` version (1), a `u32` communicator size, the 128 id bytes, and an
//! FNV-1a `u64` of everything before it. A rank 0 that cannot create an id
//! broadcasts an all-zero frame, so the others fail with that reason
//! instead of waiting; a frame from another build or another job (wrong
//! size, magic, version, communicator size or checksum) is refused.
//!
//! **Tested without a GPU:** the rank → GPU mapping, the frame, and the
//! broadcast itself (under `mpirun`, with made-up id bytes). **Untested
//! (no NCCL here):** [`new_nccl_id`], the call into NCCL.

use mpi::traits::*;

use super::MpiBackend;
use crate::error::RuntimeError;

/// Bytes of an NCCL unique id (`NCCL_UNIQUE_ID_BYTES`).
pub const NCCL_ID_BYTES: usize = 128;

const MAGIC: [u8; 16] = *b"meshrun-ncclid\0\0";
const VERSION: u32 = 1;

/// Bytes of a framed id.
pub const FRAME_BYTES: usize = 16 + 4 + 4 + NCCL_ID_BYTES + 8;

/// Where to read the local rank, in order.
pub const LOCAL_RANK_ENV: [&str; 3] = [
    "OMPI_COMM_WORLD_LOCAL_RANK",
    "MPI_LOCALRANKID",
    "SLURM_LOCALID",
];

/// This rank's place on its node, from the launcher's environment
/// (`lookup` is `std::env::var` outside tests).
pub fn local_rank(lookup: impl Fn(&str) -> Option<String>) -> Result<usize, String> {
    for var in LOCAL_RANK_ENV {
        if let Some(v) = lookup(var) {
            return v
                .trim()
                .parse()
                .map_err(|_| format!("{var}={v:?} is not a local rank"));
        }
    }
    Err(format!(
        "cannot tell which GPU this rank should use: none of {} is set (launch with mpirun or srun)",
        LOCAL_RANK_ENV.join(", ")
    ))
}

/// The GPU (ordinal among the visible ones) of the rank at `local_rank` on
/// a node whose processes see `visible_gpus` GPUs.
pub fn gpu_for_local_rank(local_rank: usize, visible_gpus: usize) -> Result<usize, String> {
    if local_rank < visible_gpus {
        return Ok(local_rank);
    }
    Err(format!(
        "local rank {local_rank} needs GPU {local_rank} but this node shows {visible_gpus} GPU(s): launch at most {visible_gpus} rank(s) per node (one GPU per rank)"
    ))
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// `id` framed for a world of `world_size` ranks.
pub fn encode_id_frame(id: &[u8; NCCL_ID_BYTES], world_size: u32) -> [u8; FRAME_BYTES] {
    let mut f = [0u8; FRAME_BYTES];
    f[..16].copy_from_slice(&MAGIC);
    f[16..20].copy_from_slice(&VERSION.to_le_bytes());
    f[20..24].copy_from_slice(&world_size.to_le_bytes());
    f[24..24 + NCCL_ID_BYTES].copy_from_slice(id);
    let sum = fnv1a(&f[..FRAME_BYTES - 8]);
    f[FRAME_BYTES - 8..].copy_from_slice(&sum.to_le_bytes());
    f
}

/// The id in `frame`, which must be a frame for `world_size` ranks.
pub fn decode_id_frame(frame: &[u8], world_size: u32) -> Result<[u8; NCCL_ID_BYTES], String> {
    if frame.len() != FRAME_BYTES {
        return Err(format!(
            "an NCCL id frame of {} bytes (expected {FRAME_BYTES})",
            frame.len()
        ));
    }
    if frame.iter().all(|&b| b == 0) {
        return Err("rank 0 could not create the NCCL unique id".into());
    }
    if frame[..16] != MAGIC {
        return Err("not an NCCL id frame of meshrun (bad magic)".into());
    }
    let word =
        |at: usize| u32::from_le_bytes([frame[at], frame[at + 1], frame[at + 2], frame[at + 3]]);
    if word(16) != VERSION {
        return Err(format!(
            "NCCL id frame version {} (expected {VERSION})",
            word(16)
        ));
    }
    if word(20) != world_size {
        return Err(format!(
            "the NCCL id is for a world of {} ranks, this one has {world_size}",
            word(20)
        ));
    }
    let mut sum = [0u8; 8];
    sum.copy_from_slice(&frame[FRAME_BYTES - 8..]);
    if u64::from_le_bytes(sum) != fnv1a(&frame[..FRAME_BYTES - 8]) {
        return Err("the NCCL id frame is corrupt (checksum)".into());
    }
    let mut id = [0u8; NCCL_ID_BYTES];
    id.copy_from_slice(&frame[24..24 + NCCL_ID_BYTES]);
    Ok(id)
}

/// Rank 0 of the world makes an id with `make`; every rank gets it
/// (collective over the world). A failure of `make` reaches every rank as
/// an error.
pub fn broadcast_id(
    backend: &MpiBackend,
    make: impl FnOnce() -> Result<[u8; NCCL_ID_BYTES], String>,
) -> Result<[u8; NCCL_ID_BYTES], RuntimeError> {
    broadcast_id_over(&backend.world(), make)
}

/// Rank 0 of `comm` makes an id with `make`; every rank of `comm` gets it
/// (collective over `comm`: one NCCL communicator per device group is
/// bootstrapped over the group's MPI communicator). A failure of `make`
/// reaches every rank as an error.
pub fn broadcast_id_over<C: Communicator>(
    comm: &C,
    make: impl FnOnce() -> Result<[u8; NCCL_ID_BYTES], String>,
) -> Result<[u8; NCCL_ID_BYTES], RuntimeError> {
    let size =
        u32::try_from(comm.size()).map_err(|_| RuntimeError::Program("too many ranks".into()))?;
    let mut frame = [0u8; FRAME_BYTES];
    let mut root_error = None;
    if comm.rank() == 0 {
        match make() {
            Ok(id) => frame = encode_id_frame(&id, size),
            Err(e) => root_error = Some(e),
        }
    }
    comm.process_at_rank(0).broadcast_into(&mut frame[..]);
    if let Some(e) = root_error {
        return Err(RuntimeError::Program(format!("NCCL unique id: {e}")));
    }
    decode_id_frame(&frame, size).map_err(RuntimeError::Program)
}

/// A fresh NCCL unique id (`ncclGetUniqueId`) as bytes, or why NCCL cannot
/// make one (checked first: cudarc panics when libnccl cannot be loaded).
/// Needs NCCL, not a GPU; untested here (no NCCL).
#[cfg(feature = "cuda")]
pub fn new_nccl_id() -> Result<[u8; NCCL_ID_BYTES], String> {
    crate::cuda::probe::nccl()?;
    let id = cudarc::nccl::Id::new().map_err(|e| format!("ncclGetUniqueId: {e:?}"))?;
    let mut bytes = [0u8; NCCL_ID_BYTES];
    for (b, &c) in bytes.iter_mut().zip(id.internal()) {
        *b = c as u8;
    }
    Ok(bytes)
}

/// The NCCL id whose bytes [`new_nccl_id`] made.
#[cfg(feature = "cuda")]
pub fn nccl_id_from_bytes(bytes: &[u8; NCCL_ID_BYTES]) -> cudarc::nccl::Id {
    let mut internal = [0 as std::ffi::c_char; NCCL_ID_BYTES];
    for (c, &b) in internal.iter_mut().zip(bytes) {
        *c = b as std::ffi::c_char;
    }
    cudarc::nccl::Id::uninit(internal)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::mpi::test_env::env;

    #[test]
    fn local_rank_prefers_open_mpi_then_mpich_then_slurm() {
        let all = [
            ("SLURM_LOCALID", "3"),
            ("MPI_LOCALRANKID", "2"),
            ("OMPI_COMM_WORLD_LOCAL_RANK", "1"),
        ];
        assert_eq!(local_rank(env(&all)), Ok(1));
        assert_eq!(local_rank(env(&all[..2])), Ok(2));
        assert_eq!(local_rank(env(&all[..1])), Ok(3));
        assert!(local_rank(env(&[]))
            .unwrap_err()
            .contains("OMPI_COMM_WORLD_LOCAL_RANK"));
        assert!(local_rank(env(&[("SLURM_LOCALID", "x")])).is_err());
    }

    #[test]
    fn one_gpu_per_rank() {
        assert_eq!(gpu_for_local_rank(0, 8), Ok(0));
        assert_eq!(gpu_for_local_rank(7, 8), Ok(7));
        let e = gpu_for_local_rank(8, 8).unwrap_err();
        assert!(e.contains("at most 8 rank(s) per node"), "{e}");
        assert!(gpu_for_local_rank(0, 0).is_err());
    }

    #[test]
    fn frames_round_trip_and_refuse_damage() {
        let mut id = [0u8; NCCL_ID_BYTES];
        for (i, b) in id.iter_mut().enumerate() {
            *b = (i * 7 + 1) as u8;
        }
        let f = encode_id_frame(&id, 16);
        assert_eq!(decode_id_frame(&f, 16), Ok(id));
        assert!(decode_id_frame(&f, 8).unwrap_err().contains("16 ranks"));
        assert!(decode_id_frame(&f[..100], 16)
            .unwrap_err()
            .contains("100 bytes"));
        let mut bad = f;
        bad[30] ^= 1;
        assert!(decode_id_frame(&bad, 16).unwrap_err().contains("checksum"));
        let mut bad = f;
        bad[0] = b'x';
        assert!(decode_id_frame(&bad, 16).unwrap_err().contains("magic"));
        let mut bad = f;
        bad[16] = 9;
        assert!(decode_id_frame(&bad, 16).unwrap_err().contains("version"));
        assert!(decode_id_frame(&[0u8; FRAME_BYTES], 16)
            .unwrap_err()
            .contains("rank 0 could not"));
    }
}
