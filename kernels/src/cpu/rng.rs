//! `stablehlo.rng_bit_generator` as XLA's CPU backend expands it (the bits
//! JAX's `rbg` / `unsafe_rbg` keys produce): Philox4x32-10 for `PHILOX`
//! and `DEFAULT`, Threefry2x32-20 for `THREE_FRY`, with XLA's numbering of
//! the output elements and its state update.
//!
//! Narrow types (8 and 16 bits) take the low bits of 32-bit values; the
//! bits of signed and float outputs are the unsigned ones reinterpreted.

use meshrun_compiler::ir::ops::rng_bit_generator::RngAlgorithm;
use meshrun_compiler::ir::TensorType;

use crate::cpu::bitcast::from_le_bytes;
use crate::error::{KernelError, Result};
use crate::tensor::{dims_of, HostTensor};

const NAME: &str = "stablehlo.rng_bit_generator";

/// The new state and the bits of `out` from `state`.
pub fn rng_bit_generator(
    algorithm: RngAlgorithm,
    state: &HostTensor,
    out: &TensorType,
) -> Result<(HostTensor, HostTensor)> {
    let HostTensor::U64(s) = state else {
        return Err(KernelError::invalid(NAME, "the state must be ui64"));
    };
    let s: Vec<u64> = s.iter().copied().collect();
    let shape = dims_of(out)?;
    let width = out.elem.byte_size() * 8;
    let (words, new_state) = match algorithm {
        RngAlgorithm::ThreeFry => {
            let &[key, counter] = s.as_slice() else {
                return Err(KernelError::invalid(NAME, "THREE_FRY needs 2 state words"));
            };
            let (w, next) = threefry_bits(key, counter, &shape, width);
            (w, vec![key, next])
        }
        RngAlgorithm::Philox | RngAlgorithm::Default => {
            let (key, lo, hi) = match *s.as_slice() {
                [key, lo, hi] => (key, lo, hi),
                // XLA reads a 2-word state as (counter high, counter low)
                // reversed: the key doubles as the counter's high word.
                [key, lo] => (key, lo, key),
                _ => {
                    return Err(KernelError::invalid(
                        NAME,
                        "PHILOX needs 2 or 3 state words",
                    ))
                }
            };
            let count: usize = shape.iter().product();
            let (w, (nlo, nhi)) = philox_bits(key, (lo, hi), count, width);
            let next = if s.len() == 3 {
                vec![key, nlo, nhi]
            } else {
                vec![key, nlo]
            };
            (w, next)
        }
    };
    let bytes: Vec<u8> = words
        .iter()
        .flat_map(|&w| w.to_le_bytes()[..width / 8].to_vec())
        .collect();
    let bits = from_le_bytes(out, &bytes)?;
    let n = new_state.len();
    Ok((HostTensor::from_vec(&[n], new_state)?, bits))
}

// ------------------------------------------------------------- Philox

const PHILOX_W: [u32; 2] = [0x9E37_79B9, 0xBB67_AE85];
const PHILOX_M: [u32; 2] = [0xD251_1F53, 0xCD9E_8D57];

fn philox4x32(mut x: [u32; 4], key: u64) -> [u32; 4] {
    let mut k = [key as u32, (key >> 32) as u32];
    for _ in 0..10 {
        let p0 = u64::from(x[0]) * u64::from(PHILOX_M[0]);
        let p1 = u64::from(x[2]) * u64::from(PHILOX_M[1]);
        x = [
            (p1 >> 32) as u32 ^ x[1] ^ k[0],
            p1 as u32,
            (p0 >> 32) as u32 ^ x[3] ^ k[1],
            p0 as u32,
        ];
        k = [
            k[0].wrapping_add(PHILOX_W[0]),
            k[1].wrapping_add(PHILOX_W[1]),
        ];
    }
    x
}

/// `counter + i` for a 128-bit counter (low, high).
fn add128((lo, hi): (u64, u64), i: u64) -> (u64, u64) {
    let (l, carry) = lo.overflowing_add(i);
    (l, hi.wrapping_add(u64::from(carry)))
}

/// `count` values of `width` bits (low bits of each word) and the counter
/// after them. Block `i` (four 32-bit words) comes from counter `c + i`;
/// XLA lays the words of consecutive blocks out in order (32-bit values)
/// or pairs them (64-bit values).
fn philox_bits(
    key: u64,
    counter: (u64, u64),
    count: usize,
    width: usize,
) -> (Vec<u64>, (u64, u64)) {
    let per_block = if width == 64 { 2 } else { 4 };
    let blocks = count.div_ceil(per_block);
    let mut out = Vec::with_capacity(blocks * per_block);
    for i in 0..blocks {
        let (lo, hi) = add128(counter, i as u64);
        let x = philox4x32(
            [lo as u32, (lo >> 32) as u32, hi as u32, (hi >> 32) as u32],
            key,
        );
        if width == 64 {
            out.push(u64::from(x[0]) | u64::from(x[1]) << 32);
            out.push(u64::from(x[2]) | u64::from(x[3]) << 32);
        } else {
            out.extend(x.iter().map(|&w| u64::from(w)));
        }
    }
    out.truncate(count);
    (out, add128(counter, blocks as u64))
}

// ------------------------------------------------------------ ThreeFry

const THREEFRY_ROT: [u32; 8] = [13, 15, 26, 6, 17, 29, 16, 24];

fn threefry2x32(x: [u32; 2], key: u64) -> [u32; 2] {
    let ks = [
        key as u32,
        (key >> 32) as u32,
        0x1BD1_1BDA ^ key as u32 ^ (key >> 32) as u32,
    ];
    let mut x = [x[0].wrapping_add(ks[0]), x[1].wrapping_add(ks[1])];
    for group in 0..5 {
        for r in 0..4 {
            let rot = THREEFRY_ROT[(group % 2) * 4 + r];
            x[0] = x[0].wrapping_add(x[1]);
            x[1] = x[1].rotate_left(rot) ^ x[0];
        }
        let inject = group + 1;
        x[0] = x[0].wrapping_add(ks[inject % 3]);
        x[1] = x[1]
            .wrapping_add(ks[(inject + 1) % 3])
            .wrapping_add(inject as u32);
    }
    x
}

/// `shape`'s values and the counter after them. 64-bit values: element
/// `i` is both words of block `counter + i`. 32-bit (and narrower): XLA
/// halves one dimension (the first even one, else the largest) and takes
/// word 0 of a block for even indices along it, word 1 for odd ones.
fn threefry_bits(key: u64, counter: u64, shape: &[usize], width: usize) -> (Vec<u64>, u64) {
    let count: usize = shape.iter().product();
    if width == 64 {
        let out = (0..count)
            .map(|i| {
                let c = counter.wrapping_add(i as u64);
                let x = threefry2x32([c as u32, (c >> 32) as u32], key);
                u64::from(x[0]) | u64::from(x[1]) << 32
            })
            .collect();
        return (out, counter.wrapping_add(count as u64));
    }
    if shape.is_empty() {
        let x = threefry2x32([counter as u32, (counter >> 32) as u32], key);
        return (vec![u64::from(x[0])], counter.wrapping_add(1));
    }
    let split = shape.iter().position(|d| d % 2 == 0).unwrap_or_else(|| {
        // The first of the largest dimensions.
        let mut best = 0;
        for (i, &d) in shape.iter().enumerate() {
            if d > shape[best] {
                best = i;
            }
        }
        best
    });
    let mut half = shape.to_vec();
    half[split] = shape[split].div_ceil(2);
    let half_count: usize = half.iter().product();
    let mut out = Vec::with_capacity(count);
    let mut idx = vec![0usize; shape.len()];
    for _ in 0..count {
        let mut lin = 0usize;
        for (d, &i) in idx.iter().enumerate() {
            let i = if d == split { i / 2 } else { i };
            lin = lin * half[d] + i;
        }
        let c = counter.wrapping_add(lin as u64);
        let x = threefry2x32([c as u32, (c >> 32) as u32], key);
        out.push(u64::from(x[idx[split] % 2]));
        for d in (0..shape.len()).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    (out, counter.wrapping_add(half_count as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threefry_matches_the_random123_known_answer() {
        // Random123's kat_vectors: threefry2x32_20 of counter
        // (243f6a88, 85a308d3) under key words (13198a2e, 03707344).
        let key = 0x0370_7344_1319_8a2eu64;
        let x = threefry2x32([0x243f_6a88, 0x85a3_08d3], key);
        assert_eq!(x, [0xc492_3a9c, 0x483d_f7a0]);
        assert_eq!(threefry2x32([0, 0], 0), [0x6b20_0159, 0x99ba_4efe]);
    }

    #[test]
    fn philox_matches_the_random123_known_answer() {
        // philox4x32_10 with zero counter and key.
        assert_eq!(
            philox4x32([0; 4], 0),
            [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]
        );
    }

    #[test]
    fn philox_state_advances_by_blocks_and_carries() {
        let (w, next) = philox_bits(1, (u64::MAX, 7), 5, 32);
        assert_eq!(w.len(), 5);
        assert_eq!(next, (1, 8));
        let (w64, next64) = philox_bits(1, (0, 0), 3, 64);
        assert_eq!((w64.len(), next64), (3, (2, 0)));
        // The first 64-bit value joins the first two 32-bit words.
        let (w32, _) = philox_bits(1, (0, 0), 4, 32);
        assert_eq!(w64[0], w32[0] | w32[1] << 32);
    }

    #[test]
    fn threefry_halves_the_first_even_dimension() {
        // A 3x4 request splits dim 1: columns 2j and 2j+1 are the two
        // words of one block.
        let (w, next) = threefry_bits(5, 9, &[3, 4], 32);
        assert_eq!(next, 9 + 6);
        let block = threefry2x32([9 + 3, 0], 5); // row 1, half-column 1
        assert_eq!(w[4 + 2], u64::from(block[0]));
        assert_eq!(w[4 + 3], u64::from(block[1]));
    }
}
