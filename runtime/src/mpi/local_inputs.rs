//! One device's block of a program input, without the rest of it.
//!
//! Under MPI every rank holds one device, so it reads only that device's
//! block of each `.npy` file: the header first, then, with positioned reads
//! (`seek` + `read_exact`), one contiguous run of bytes per row of the
//! block (trailing dimensions the block holds whole are merged into one
//! run, so a block of whole rows is one read). A rank's memory and I/O are
//! its block's, whatever the size of the global array. Files in Fortran
//! order or big-endian are read whole and cut (numpy writes neither by
//! default).
//!
//! The block is padded as `shard_io` pads it (zeros past the end of a
//! dimension), and a device that does not hold the data of an input with
//! unreduced axes gets zeros without reading the data at all.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use meshrun_compiler::ir::ElemType;
use meshrun_compiler::partition::ProgramIo;
use meshrun_kernels::HostTensor;

use super::wire::{elem_bytes, from_bytes};
use crate::blocks::{copy_box, zeros_like_elem, BoxCopy};
use crate::error::RuntimeError;
use crate::npy::{parse_header, read_npy_as, Header};
use crate::shard_io::{holds_partial, layout_of};

fn usizes(v: &[i64]) -> Vec<usize> {
    v.iter().map(|&x| x.max(0) as usize).collect()
}

/// The box (`offset`, `extent`) of the global input `io` that `device`
/// holds, its padded local shape, and whether it holds data at all (a
/// device off coordinate 0 of an unreduced axis holds zeros).
struct LocalBox {
    offset: Vec<usize>,
    extent: Vec<usize>,
    local: Vec<usize>,
    holds_data: bool,
}

fn local_box(io: &ProgramIo, device: i64) -> Result<LocalBox, String> {
    let layout = layout_of(io)?;
    let slice = layout
        .slice(device)
        .ok_or_else(|| format!("device {device} is not in the mesh of {}", io.sharding))?;
    Ok(LocalBox {
        offset: usizes(&slice.offset),
        extent: usizes(&slice.extent),
        local: usizes(&layout.local_shape()),
        holds_data: holds_partial(io, device)?,
    })
}

/// `piece` (the box's valid part) placed at the origin of a zero block of
/// the local shape.
fn pad(piece: &HostTensor, local: &[usize]) -> Result<HostTensor, String> {
    if piece.shape() == local {
        return Ok(piece.clone());
    }
    let mut block = zeros_like_elem(piece, local);
    let zero = vec![0; local.len()];
    copy_box(
        &mut block,
        piece,
        BoxCopy {
            dst_start: &zero,
            src_start: &zero,
            extent: piece.shape(),
        },
    )?;
    Ok(block)
}

/// `device`'s block of `global`, an input laid out as `io` says (what
/// `shard_io::shard` gives that device).
pub fn block_of(global: &HostTensor, io: &ProgramIo, device: i64) -> Result<HostTensor, String> {
    if global.tensor_type() != io.global {
        return Err(format!(
            "expected {}, got {}",
            io.global,
            global.tensor_type()
        ));
    }
    let b = local_box(io, device)?;
    if !b.holds_data {
        return Ok(zeros_like_elem(global, &b.local));
    }
    let mut piece = zeros_like_elem(global, &b.extent);
    let zero = vec![0; b.extent.len()];
    copy_box(
        &mut piece,
        global,
        BoxCopy {
            dst_start: &zero,
            src_start: &b.offset,
            extent: &b.extent,
        },
    )?;
    pad(&piece, &b.local)
}

/// The element type an npy `descr` holds, if it is little-endian (or
/// single-byte) and one meshrun reads.
fn descr_elem(descr: &str) -> Option<(ElemType, bool)> {
    let (elem, little) = match descr {
        "<f4" => (ElemType::F32, true),
        "<f8" => (ElemType::F64, true),
        "<i4" => (ElemType::I32, true),
        "<i8" => (ElemType::I64, true),
        "<f2" => (ElemType::F16, true),
        "<V2" | "|V2" => (ElemType::BF16, true),
        "|b1" => (ElemType::I1, true),
        "|i1" => (ElemType::I8, true),
        "|u1" => (ElemType::U8, true),
        "<i2" => (ElemType::I16, true),
        "<u2" => (ElemType::U16, true),
        "<u4" => (ElemType::U32, true),
        "<u8" => (ElemType::U64, true),
        ">i2" => (ElemType::I16, false),
        ">u2" => (ElemType::U16, false),
        ">u4" => (ElemType::U32, false),
        ">u8" => (ElemType::U64, false),
        ">f4" => (ElemType::F32, false),
        ">f8" => (ElemType::F64, false),
        ">i4" => (ElemType::I32, false),
        ">i8" => (ElemType::I64, false),
        ">f2" => (ElemType::F16, false),
        _ => return None,
    };
    Some((elem, little))
}

/// The header of the `.npy` file `f` (the file is left anywhere).
fn read_header(f: &mut File) -> Result<Header, String> {
    let mut head = [0u8; 12];
    let mut got = 0;
    while got < head.len() {
        match f.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) => return Err(format!("cannot read: {e}")),
        }
    }
    let len = match (got, head.get(6)) {
        (n, Some(1)) if n >= 10 => 10 + u16::from_le_bytes([head[8], head[9]]) as usize,
        (12, Some(2 | 3)) => {
            12 + u32::from_le_bytes([head[8], head[9], head[10], head[11]]) as usize
        }
        // Too short or not npy at all: let the parser say which.
        _ => return parse_header(&head[..got]),
    };
    let mut bytes = vec![0u8; len];
    f.seek(SeekFrom::Start(0))
        .and_then(|_| f.read_exact(&mut bytes))
        .map_err(|_| "header is cut short".to_string())?;
    parse_header(&bytes)
}

/// Read the box `offset`+`extent` of a row-major array of `shape` whose
/// data starts at byte `data` of `f`, `esize` bytes per element.
fn read_box(
    f: &mut File,
    data: u64,
    shape: &[usize],
    esize: usize,
    offset: &[usize],
    extent: &[usize],
) -> Result<Vec<u8>, String> {
    let total: usize = extent.iter().product::<usize>() * esize;
    let mut out = vec![0u8; total];
    if total == 0 {
        return Ok(out);
    }
    let rank = shape.len();
    if rank == 0 {
        f.seek(SeekFrom::Start(data))
            .and_then(|_| f.read_exact(&mut out))
            .map_err(|e| format!("cannot read the data: {e}"))?;
        return Ok(out);
    }
    // Dimensions `outer..` form one contiguous run.
    let mut outer = rank - 1;
    while outer > 0 && extent[outer] == shape[outer] {
        outer -= 1;
    }
    let mut strides = vec![1usize; rank];
    for d in (0..rank - 1).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    let run = extent[outer] * strides[outer] * esize;
    let mut idx = vec![0usize; outer];
    let mut at = 0;
    loop {
        let elem: usize = (0..outer)
            .map(|d| (offset[d] + idx[d]) * strides[d])
            .sum::<usize>()
            + offset[outer] * strides[outer];
        let pos = data + (elem * esize) as u64;
        f.seek(SeekFrom::Start(pos))
            .and_then(|_| f.read_exact(&mut out[at..at + run]))
            .map_err(|e| format!("cannot read {run} bytes at offset {pos}: {e}"))?;
        at += run;
        // Next index over the dimensions before `outer`, last fastest.
        let mut d = outer;
        loop {
            if d == 0 {
                return Ok(out);
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < extent[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// `device`'s block of the input `io` stored in the `.npy` file `path`,
/// reading only that block's bytes.
pub fn read_block(path: &Path, io: &ProgramIo, device: i64) -> Result<HostTensor, RuntimeError> {
    let npy = |message: String| RuntimeError::Npy {
        path: path.to_path_buf(),
        message,
    };
    let mut f = File::open(path).map_err(|e| npy(format!("cannot read: {e}")))?;
    let h = read_header(&mut f).map_err(npy)?;
    let expected = &io.global;
    let want_shape = usizes(&expected.shape);
    let mismatch = |what: &str| {
        npy(format!(
            "expected {expected}, file holds shape {:?} {what}",
            h.shape
        ))
    };
    let (elem, little) =
        descr_elem(&h.descr).ok_or_else(|| mismatch(&format!("dtype {:?}", h.descr)))?;
    if elem != expected.elem || h.shape != want_shape {
        return Err(mismatch(&elem.to_string()));
    }
    let esize = elem_bytes(elem).ok_or_else(|| npy(format!("{elem} is not supported")))?;
    let n: usize = want_shape.iter().product();
    let len = f
        .metadata()
        .map_err(|e| npy(format!("cannot read: {e}")))?
        .len();
    if len < (h.data_offset + n * esize) as u64 {
        return Err(npy(format!(
            "data is cut short: {len} bytes for {n} elements of {esize} bytes after a {}-byte header",
            h.data_offset
        )));
    }
    if h.fortran_order || !little {
        // Rare layouts: read everything, keep this device's block.
        let global = read_npy_as(path, expected)?;
        return block_of(&global, io, device).map_err(npy);
    }
    let b = local_box(io, device).map_err(npy)?;
    let zeros = || {
        let local: Vec<i64> = b.local.iter().map(|&x| x as i64).collect();
        HostTensor::zeros(&expected.with_shape(local))
    };
    if !b.holds_data {
        return zeros().map_err(|e| npy(e.to_string()));
    }
    let bytes = read_box(
        &mut f,
        h.data_offset as u64,
        &want_shape,
        esize,
        &b.offset,
        &b.extent,
    )
    .map_err(npy)?;
    let piece = from_bytes(elem, &b.extent, &bytes).map_err(npy)?;
    pad(&piece, &b.local).map_err(npy)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, t: &HostTensor) -> std::path::PathBuf {
        let p = dir.join(name);
        crate::npy::write_npy(&p, t).unwrap();
        p
    }

    #[test]
    fn boxes_read_by_offset_match_the_array() {
        let dir = tempfile::tempdir().unwrap();
        let data: Vec<i32> = (0..2 * 5 * 7).collect();
        let t = HostTensor::from_vec(&[2, 5, 7], data.clone()).unwrap();
        let p = write(dir.path(), "a.npy", &t);
        let mut f = File::open(&p).unwrap();
        let h = read_header(&mut f).unwrap();
        assert_eq!(h.shape, vec![2, 5, 7]);
        // An inner box, then whole trailing rows (one run), then a scalar.
        let cases: [(&[usize], &[usize]); 3] = [
            (&[1, 2, 3], &[1, 2, 4]),
            (&[0, 3, 0], &[2, 2, 7]),
            (&[1, 4, 6], &[1, 1, 1]),
        ];
        for (offset, extent) in cases {
            let bytes =
                read_box(&mut f, h.data_offset as u64, &[2, 5, 7], 4, offset, extent).unwrap();
            let got = from_bytes(ElemType::I32, extent, &bytes).unwrap();
            let mut want = zeros_like_elem(&t, extent);
            copy_box(
                &mut want,
                &t,
                BoxCopy {
                    dst_start: &[0, 0, 0],
                    src_start: offset,
                    extent,
                },
            )
            .unwrap();
            assert_eq!(got, want, "box {offset:?}+{extent:?}");
        }
    }

    #[test]
    fn a_truncated_or_foreign_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bad.npy");
        std::fs::write(&p, b"PK\x03\x04").unwrap();
        let mut f = File::open(&p).unwrap();
        assert!(read_header(&mut f).unwrap_err().contains("magic"));
        let t = HostTensor::from_vec(&[4], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
        let p = write(dir.path(), "t.npy", &t);
        let bytes = std::fs::read(&p).unwrap();
        std::fs::write(&p, &bytes[..20]).unwrap();
        let mut f = File::open(&p).unwrap();
        assert!(read_header(&mut f).unwrap_err().contains("cut short"));
    }
}
