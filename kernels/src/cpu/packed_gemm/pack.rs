//! Packing: a block of lhs into panels of [`MR`] rows and a block of rhs
//! into panels of [`NR`] columns, each panel laid out step by step along
//! the contraction (`panel[p·MR + i]`, `panel[p·NR + j]`), padded with
//! zeros past the edge so the register tile always runs whole.

use ndarray::{s, ArrayView2, Axis};

use super::{MR, NR};

/// Pack `lhs[ic.., pc..]` (`mc×kc`) into `buf`; returns the packed part:
/// `ceil(mc/MR)` panels of `MR·kc` floats.
pub(super) fn lhs<'b>(
    buf: &'b mut [f32],
    lhs: ArrayView2<'_, f32>,
    ic: usize,
    pc: usize,
    mc: usize,
    kc: usize,
) -> &'b [f32] {
    let block = lhs.slice(s![ic..ic + mc, pc..pc + kc]);
    let len = mc.next_multiple_of(MR) * kc;
    let out = &mut buf[..len];
    for (panel, rows) in out
        .chunks_exact_mut(MR * kc)
        .zip(block.axis_chunks_iter(Axis(0), MR))
    {
        let height = rows.nrows();
        if height < MR {
            panel.fill(0.0);
        }
        for (i, row) in rows.outer_iter().enumerate() {
            for (step, &v) in panel.chunks_exact_mut(MR).zip(row.iter()) {
                step[i] = v;
            }
        }
    }
    out
}

/// Pack `rhs[pc.., jc..]` (`kc×nc`) into `buf`; returns the packed part:
/// `ceil(nc/NR)` panels of `NR·kc` floats.
pub(super) fn rhs<'b>(
    buf: &'b mut [f32],
    rhs: ArrayView2<'_, f32>,
    pc: usize,
    jc: usize,
    kc: usize,
    nc: usize,
) -> &'b [f32] {
    let block = rhs.slice(s![pc..pc + kc, jc..jc + nc]);
    let len = nc.next_multiple_of(NR) * kc;
    let out = &mut buf[..len];
    if !nc.is_multiple_of(NR) {
        out[(nc / NR) * NR * kc..].fill(0.0);
    }
    if block.strides()[1] == 1 || nc == 1 {
        // Rows contiguous in rhs (the common case): each step of each
        // panel is one copy out of one row slice.
        for (p, row) in block.outer_iter().enumerate() {
            let row = row.to_slice().expect("unit column stride");
            for (q, piece) in row.chunks(NR).enumerate() {
                let at = q * NR * kc + p * NR;
                out[at..at + piece.len()].copy_from_slice(piece);
            }
        }
        return out;
    }
    for (panel, cols) in out
        .chunks_exact_mut(NR * kc)
        .zip(block.axis_chunks_iter(Axis(1), NR))
    {
        for (j, col) in cols.axis_iter(Axis(1)).enumerate() {
            for (step, &v) in panel.chunks_exact_mut(NR).zip(col.iter()) {
                step[j] = v;
            }
        }
    }
    out
}
