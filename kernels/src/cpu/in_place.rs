//! Ops whose result is their first operand's block, changed in place, when
//! the caller hands that block over (the operand's last use, and no one
//! else holds it): a reshape or an identity (optimization_barrier, the
//! placement custom calls) copies nothing, and a scatter or a
//! dynamic_update_slice writes only the updated elements instead of first
//! copying the whole operand. After the copy the borrowing kernels
//! ([`super::eval_op`]) run the same code, so the bits are the same.

use meshrun_compiler::ir::{OpKind, TensorType};

use super::{dynamic_slice, gather, shape_ops};
use crate::error::{KernelError, Result};
use crate::tensor::HostTensor;

/// Whether `kind` with `num_operands` operands can write its result into
/// its first operand ([`eval_op_into`] does then).
pub fn writes_into_first(kind: &OpKind, num_operands: usize) -> bool {
    match kind {
        OpKind::Reshape(_) => num_operands == 1,
        // One input, its indices and its updates.
        OpKind::Scatter(_) => num_operands == 3,
        OpKind::DynamicUpdateSlice(_) => num_operands >= 2,
        _ => num_operands == 1 && kind.def().is_some_and(|d| d.runs_as_identity()),
    }
}

/// `kind` on `first` (handed over) and `rest`, its other operands, as
/// [`super::eval_op`] computes it on `[first, rest..]`, with the result
/// checked against `result_types` the same way. Ops that
/// [`writes_into_first`] rejects run the borrowing kernel.
pub fn eval_op_into(
    kind: &OpKind,
    first: HostTensor,
    rest: &[&HostTensor],
    result_types: &[TensorType],
) -> Result<Vec<HostTensor>> {
    if !writes_into_first(kind, 1 + rest.len()) || result_types.len() != 1 {
        let mut all = vec![&first];
        all.extend_from_slice(rest);
        return super::eval_op(kind, &all, result_types, gemm::Parallelism::None);
    }
    let want = &result_types[0];
    let got = match (kind, rest) {
        (OpKind::Reshape(_), []) => shape_ops::reshape_into(first, want)?,
        (OpKind::Scatter(s), [indices, updates]) => {
            gather::scatter_into(s, first, indices, updates)?
        }
        (OpKind::DynamicUpdateSlice(_), [update, starts @ ..]) => {
            dynamic_slice::dynamic_update_slice_into(first, update, starts)?
        }
        _ => first,
    };
    let got_ty = got.tensor_type();
    if &got_ty != want {
        return Err(KernelError::Invalid {
            op: kind.name(),
            message: format!("result 0 is {got_ty} but the op declares {want}"),
        });
    }
    Ok(vec![got])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::eval_op;
    use meshrun_compiler::ir::ElemType;
    use meshrun_compiler::text::parse_module;

    fn f32s(shape: &[usize], n: usize) -> HostTensor {
        HostTensor::from_vec(shape, (0..n).map(|i| i as f32 * 0.5 - 3.0).collect()).unwrap()
    }

    fn ty(shape: &[i64]) -> TensorType {
        TensorType::new(shape.to_vec(), ElemType::F32)
    }

    /// The first op of `text` (a function) and the type it makes, `out`.
    fn op_of(text: &str, out: &[i64]) -> (OpKind, TensorType) {
        let m = parse_module(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let kind = m.funcs[0].ops_in_order().next().unwrap().1.kind.clone();
        (kind, ty(out))
    }

    fn same_as_borrowing(kind: &OpKind, operands: &[HostTensor], out: &TensorType) {
        let refs: Vec<&HostTensor> = operands.iter().collect();
        let want = eval_op(
            kind,
            &refs,
            std::slice::from_ref(out),
            gemm::Parallelism::None,
        )
        .unwrap();
        let got = eval_op_into(
            kind,
            operands[0].clone(),
            &refs[1..],
            std::slice::from_ref(out),
        )
        .unwrap();
        assert_eq!(got, want, "{}", kind.name());
        assert!(writes_into_first(kind, operands.len()));
    }

    #[test]
    fn reshape_scatter_and_update_slice_give_the_borrowing_kernels_results() {
        let (reshape, out) = op_of(
            "func.func @f(%x: tensor<4x6xf32>) -> tensor<2x3x4xf32> {\n\
             %r = stablehlo.reshape %x : (tensor<4x6xf32>) -> tensor<2x3x4xf32>\n\
             return %r : tensor<2x3x4xf32>\n}",
            &[2, 3, 4],
        );
        same_as_borrowing(&reshape, &[f32s(&[4, 6], 24)], &out);

        let (scatter, out) = op_of(
            r#"func.func @f(%x: tensor<5x3xf32>, %i: tensor<4x1xi32>, %u: tensor<4x3xf32>) -> tensor<5x3xf32> {
             %r = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
             ^bb0(%a: tensor<f32>, %b: tensor<f32>):
               %s = stablehlo.add %a, %b : tensor<f32>
               stablehlo.return %s : tensor<f32>
             }) : (tensor<5x3xf32>, tensor<4x1xi32>, tensor<4x3xf32>) -> tensor<5x3xf32>
             return %r : tensor<5x3xf32>
            }"#,
            &[5, 3],
        );
        // A duplicate index (1) and one out of range (7, skipped).
        let idx = HostTensor::from_vec(&[4, 1], vec![1i32, 4, 1, 7]).unwrap();
        same_as_borrowing(&scatter, &[f32s(&[5, 3], 15), idx, f32s(&[4, 3], 12)], &out);

        let (dus, out) = op_of(
            "func.func @f(%x: tensor<4x4xf32>, %u: tensor<2x3xf32>, %a: tensor<i64>, %b: tensor<i64>) -> tensor<4x4xf32> {\n\
             %r = stablehlo.dynamic_update_slice %x, %u, %a, %b : (tensor<4x4xf32>, tensor<2x3xf32>, tensor<i64>, tensor<i64>) -> tensor<4x4xf32>\n\
             return %r : tensor<4x4xf32>\n}",
            &[4, 4],
        );
        let (a, b) = (
            HostTensor::from_vec(&[], vec![3i64]).unwrap(),
            HostTensor::from_vec(&[], vec![-1i64]).unwrap(),
        );
        same_as_borrowing(&dus, &[f32s(&[4, 4], 16), f32s(&[2, 3], 6), a, b], &out);
    }

    #[test]
    fn other_ops_run_the_borrowing_kernel_and_bad_types_are_refused() {
        let (add, out) = op_of(
            "func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {\n\
             %r = stablehlo.add %x, %x : tensor<3xf32>\n\
             return %r : tensor<3xf32>\n}",
            &[3],
        );
        assert!(!writes_into_first(&add, 2));
        let x = f32s(&[3], 3);
        let got = eval_op_into(&add, x.clone(), &[&x], &[out]).unwrap();
        assert_eq!(got[0].to_f64_vec(), vec![-6.0, -5.0, -4.0]);

        let (reshape, _) = op_of(
            "func.func @f(%x: tensor<4x6xf32>) -> tensor<24xf32> {\n\
             %r = stablehlo.reshape %x : (tensor<4x6xf32>) -> tensor<24xf32>\n\
             return %r : tensor<24xf32>\n}",
            &[24],
        );
        let e = eval_op_into(&reshape, f32s(&[4, 6], 24), &[], &[ty(&[5, 5])]).unwrap_err();
        assert!(e.to_string().contains("reshape"), "{e}");
    }
}
