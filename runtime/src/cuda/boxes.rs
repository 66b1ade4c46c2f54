//! What one member's result of a collective is made of, as box copies
//! from the members' blocks (pure; tested on the CPU against the CPU
//! backend's `cpu::collectives`, which defines the semantics).
//!
//! Every data-moving collective is a result buffer of zeros plus a few
//! boxes copied into it: all-slice and reduce-scatter take one box of one
//! block (the reduced block, for reduce-scatter), all-gather one box of
//! every block, all-to-all one chunk of every block, a permute the whole
//! block of its source. The GPU runs each box as one `strided_copy`
//! (`layout::box_copy`), reading the source block wherever the route put
//! it (`routes`).

use meshrun_compiler::partition::reshard::collective::{Collective, CollectiveKind};

use crate::cpu::collectives::{digits, dims};

/// One box of a member's result, copied from member `source`'s block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceBox {
    pub source: usize,
    pub src_start: Vec<usize>,
    pub dst_start: Vec<usize>,
    pub extent: Vec<usize>,
}

fn clipped(start: usize, len: usize, size: usize) -> usize {
    len.min(size.saturating_sub(start))
}

fn check_factors(c: &Collective, rank: usize, group_size: usize) -> Result<(), String> {
    if c.dim_factors.len() != rank {
        return Err(format!(
            "{} per-dimension factors for a rank-{rank} block",
            c.dim_factors.len()
        ));
    }
    if c.dim_factors.iter().product::<i64>() != group_size as i64 {
        return Err(format!(
            "per-dimension factors {:?} do not multiply to the group size {group_size}",
            c.dim_factors
        ));
    }
    Ok(())
}

fn push(boxes: &mut Vec<SourceBox>, b: SourceBox) {
    if !b.extent.contains(&0) {
        boxes.push(b);
    }
}

/// The boxes of member `rank`'s result of shape `out`, for a group of
/// `group_size`; `permute_source` is the member a collective-permute
/// receives from (ignored by the other kinds). An all-reduce has none
/// (its result is a reduction); a reduce-scatter's boxes read the reduced
/// block, named by `source == rank`.
pub fn result_boxes(
    c: &Collective,
    rank: usize,
    group_size: usize,
    permute_source: Option<usize>,
    out: &[usize],
) -> Result<Vec<SourceBox>, String> {
    let in_shape = dims(&c.in_local_shape)?;
    let r = in_shape.len();
    if out.len() != r {
        return Err(format!(
            "a rank-{r} block gives a rank-{} result",
            out.len()
        ));
    }
    let zero = vec![0; r];
    let mut boxes = Vec::new();
    match c.kind {
        CollectiveKind::AllReduce => {}
        CollectiveKind::AllSlice | CollectiveKind::ReduceScatter => {
            check_factors(c, r, group_size)?;
            let q = digits(rank, &c.dim_factors);
            let src_start: Vec<usize> = (0..r).map(|d| q[d] * out[d]).collect();
            let extent = (0..r)
                .map(|d| clipped(src_start[d], out[d], in_shape[d]))
                .collect();
            push(
                &mut boxes,
                SourceBox {
                    source: rank,
                    src_start,
                    dst_start: zero,
                    extent,
                },
            );
        }
        CollectiveKind::AllGather => {
            check_factors(c, r, group_size)?;
            for (d, &o) in out.iter().enumerate() {
                if o > in_shape[d] * c.dim_factors[d] as usize {
                    return Err(format!(
                        "dimension {d}: a result of {o} is more than {} gathered blocks of {}",
                        c.dim_factors[d], in_shape[d]
                    ));
                }
            }
            for member in 0..group_size {
                let q = digits(member, &c.dim_factors);
                let dst_start: Vec<usize> = (0..r).map(|d| q[d] * in_shape[d]).collect();
                let extent = (0..r)
                    .map(|d| clipped(dst_start[d], in_shape[d], out[d]))
                    .collect();
                push(
                    &mut boxes,
                    SourceBox {
                        source: member,
                        src_start: zero.clone(),
                        dst_start,
                        extent,
                    },
                );
            }
        }
        CollectiveKind::AllToAll => {
            let a2a = c.all_to_all.ok_or("an all-to-all without dimensions")?;
            let (s, t) = (a2a.src_dim, a2a.tgt_dim);
            if s == t || s >= r || t >= r {
                return Err(format!("bad all-to-all dimensions {s}->{t}"));
            }
            for d in 0..r {
                if d != s && d != t && out[d] != in_shape[d] {
                    return Err(format!(
                        "dimension {d} changes from {} to {} in an all-to-all {s}->{t}",
                        in_shape[d], out[d]
                    ));
                }
            }
            if out[s] > group_size * in_shape[s] {
                return Err(format!(
                    "dimension {s}: a result of {} is more than {group_size} blocks of {}",
                    out[s], in_shape[s]
                ));
            }
            let mut src_start = zero.clone();
            src_start[t] = rank * out[t];
            for member in 0..group_size {
                let mut dst_start = zero.clone();
                dst_start[s] = member * in_shape[s];
                let mut extent = out.to_vec();
                extent[s] = clipped(dst_start[s], in_shape[s], out[s]);
                extent[t] = clipped(src_start[t], out[t], in_shape[t]);
                push(
                    &mut boxes,
                    SourceBox {
                        source: member,
                        src_start: src_start.clone(),
                        dst_start,
                        extent,
                    },
                );
            }
        }
        CollectiveKind::CollectivePermute => {
            if out != in_shape.as_slice() {
                return Err(format!(
                    "a permute of blocks of {in_shape:?} into a result of {out:?}"
                ));
            }
            if let Some(source) = permute_source {
                push(
                    &mut boxes,
                    SourceBox {
                        source,
                        src_start: zero.clone(),
                        dst_start: zero,
                        extent: in_shape,
                    },
                );
            }
        }
    }
    Ok(boxes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::{copy_box, zeros_like_elem, BoxCopy};
    use crate::cpu::collectives as cpu;
    use meshrun_compiler::ir::{ElemType, ReduceKind};
    use meshrun_compiler::partition::reshard::collective::AllToAllDims;
    use meshrun_compiler::sharding::TensorSharding;
    use meshrun_kernels::HostTensor;

    fn collective(
        kind: CollectiveKind,
        factors: Vec<i64>,
        in_shape: Vec<i64>,
        out: Vec<i64>,
    ) -> Collective {
        let rank = in_shape.len();
        Collective {
            kind,
            axes: vec![],
            dim_axes: vec![vec![]; rank],
            dim_factors: factors,
            all_to_all: None,
            reduction: Some(ReduceKind::Add),
            groups: vec![],
            in_sharding: TensorSharding::replicated("m", rank),
            out_sharding: TensorSharding::replicated("m", rank),
            global_shape: out.clone(),
            in_local_shape: in_shape,
            out_local_shape: out,
            elem: ElemType::F32,
        }
    }

    /// Member `m`'s block: distinct values per member and element.
    fn block(m: usize, shape: &[usize]) -> HostTensor {
        let n: usize = shape.iter().product();
        HostTensor::from_vec(shape, (0..n).map(|i| (m * 1000 + i + 1) as f32).collect()).unwrap()
    }

    fn assemble(boxes: &[SourceBox], blocks: &[HostTensor], out: &[usize]) -> HostTensor {
        let mut result = zeros_like_elem(&blocks[0], out);
        for b in boxes {
            copy_box(
                &mut result,
                &blocks[b.source],
                BoxCopy {
                    dst_start: &b.dst_start,
                    src_start: &b.src_start,
                    extent: &b.extent,
                },
            )
            .unwrap();
        }
        result
    }

    #[test]
    fn all_gather_boxes_match_the_cpu_backend() {
        // 2x3 members over dims 0 and 1, with padding cut off the result.
        for out in [vec![4usize, 9], vec![3, 8]] {
            let c = collective(
                CollectiveKind::AllGather,
                vec![2, 3],
                vec![2, 3],
                out.iter().map(|&d| d as i64).collect(),
            );
            let blocks: Vec<HostTensor> = (0..6).map(|m| block(m, &[2, 3])).collect();
            let refs: Vec<&HostTensor> = blocks.iter().collect();
            let want = cpu::all_gather(&refs, &c, &out).unwrap();
            for rank in 0..6 {
                let boxes = result_boxes(&c, rank, 6, None, &out).unwrap();
                assert_eq!(assemble(&boxes, &blocks, &out), want);
            }
        }
    }

    #[test]
    fn slice_and_reduce_scatter_boxes_match_the_cpu_backend() {
        let c = collective(CollectiveKind::AllSlice, vec![1, 4], vec![2, 7], vec![2, 2]);
        let x = block(0, &[2, 7]);
        for rank in 0..4 {
            let want = cpu::all_slice(&x, rank, 4, &c, &[2, 2]).unwrap();
            let boxes = result_boxes(&c, rank, 4, None, &[2, 2]).unwrap();
            let mut blocks = vec![x.clone(); 4];
            blocks[rank] = x.clone();
            assert_eq!(assemble(&boxes, &blocks, &[2, 2]), want, "rank {rank}");
            assert!(boxes.iter().all(|b| b.source == rank));
        }
        // Reduce-scatter: the boxes of the reduced block.
        let mut rs = c.clone();
        rs.kind = CollectiveKind::ReduceScatter;
        let blocks: Vec<HostTensor> = (0..4).map(|m| block(m, &[2, 7])).collect();
        let refs: Vec<&HostTensor> = blocks.iter().collect();
        let reduced = cpu::all_reduce(&refs, ReduceKind::Add).unwrap();
        for rank in 0..4 {
            let want = cpu::reduce_scatter(&refs, rank, ReduceKind::Add, &rs, &[2, 2]).unwrap();
            let boxes = result_boxes(&rs, rank, 4, None, &[2, 2]).unwrap();
            let mut sources = vec![reduced.clone(); 4];
            sources[rank] = reduced.clone();
            assert_eq!(assemble(&boxes, &sources, &[2, 2]), want, "rank {rank}");
        }
    }

    #[test]
    fn all_to_all_boxes_match_the_cpu_backend() {
        let mut c = collective(CollectiveKind::AllToAll, vec![1, 1], vec![2, 6], vec![6, 2]);
        c.all_to_all = Some(AllToAllDims {
            src_dim: 0,
            tgt_dim: 1,
        });
        let blocks: Vec<HostTensor> = (0..3).map(|m| block(m, &[2, 6])).collect();
        let refs: Vec<&HostTensor> = blocks.iter().collect();
        for rank in 0..3 {
            let want = cpu::all_to_all(&refs, rank, &c, &[6, 2]).unwrap();
            let boxes = result_boxes(&c, rank, 3, None, &[6, 2]).unwrap();
            assert_eq!(boxes.len(), 3);
            assert_eq!(assemble(&boxes, &blocks, &[6, 2]), want);
        }
        // A padded target dim: the last member's chunk is short.
        let mut c = collective(CollectiveKind::AllToAll, vec![1], vec![5], vec![5]);
        c.all_to_all = None;
        assert!(result_boxes(&c, 0, 2, None, &[5]).is_err());
    }

    #[test]
    fn permutes_copy_the_source_block_and_bad_shapes_are_errors() {
        let c = collective(CollectiveKind::CollectivePermute, vec![1], vec![4], vec![4]);
        let boxes = result_boxes(&c, 0, 1, Some(3), &[4]).unwrap();
        assert_eq!(
            boxes,
            vec![SourceBox {
                source: 3,
                src_start: vec![0],
                dst_start: vec![0],
                extent: vec![4]
            }]
        );
        assert!(result_boxes(&c, 0, 1, None, &[4]).unwrap().is_empty());
        assert!(result_boxes(&c, 0, 1, Some(1), &[5]).is_err());
        let g = collective(CollectiveKind::AllGather, vec![2], vec![3], vec![7]);
        assert!(result_boxes(&g, 0, 2, None, &[7]).is_err());
        assert!(result_boxes(&g, 0, 3, None, &[6]).is_err());
        let r = collective(CollectiveKind::AllReduce, vec![1], vec![3], vec![3]);
        assert!(result_boxes(&r, 0, 4, None, &[3]).unwrap().is_empty());
    }
}
