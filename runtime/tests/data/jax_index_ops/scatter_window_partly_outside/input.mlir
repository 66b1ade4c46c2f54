module @jit_scatter_window_partly_outside attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6x2xf32>, %arg1: tensor<4x1xi32>, %arg2: tensor<4x3x2xf32>) -> (tensor<6x2xf32> {jax.result_info = "result"}) {
    %0 = "stablehlo.scatter"(%arg0, %arg1, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1, 2], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %1 = stablehlo.add %arg3, %arg4 : tensor<f32>
      stablehlo.return %1 : tensor<f32>
    }) : (tensor<6x2xf32>, tensor<4x1xi32>, tensor<4x3x2xf32>) -> tensor<6x2xf32>
    return %0 : tensor<6x2xf32>
  }
}
