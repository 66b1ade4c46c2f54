module @jit_gather_clip attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6x5xf32>, %arg1: tensor<5x1xi32>) -> (tensor<5x2x5xf32> {jax.result_info = "result"}) {
    %0 = "stablehlo.gather"(%arg0, %arg1) <{dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 2, 5>}> : (tensor<6x5xf32>, tensor<5x1xi32>) -> tensor<5x2x5xf32>
    return %0 : tensor<5x2x5xf32>
  }
}
