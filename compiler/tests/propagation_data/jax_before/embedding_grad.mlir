module @jit_embedding_grad attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<32x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg1: tensor<8x6xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) -> tensor<32x16xf32> {
    %0 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<32x16xf32>
    %2 = sdy.constant dense<0> : tensor<i32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<i32>) -> tensor<8x6x1xi32>
    %4 = stablehlo.reshape %arg1 : (tensor<8x6xi32>) -> tensor<8x6x1xi32>
    %5 = "stablehlo.gather"(%arg0, %4) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 16>}> : (tensor<32x16xf32>, tensor<8x6x1xi32>) -> tensor<8x6x16xf32>
    %6 = sdy.constant dense<31> : tensor<i32>
    %7 = stablehlo.broadcast_in_dim %6, dims = [] : (tensor<i32>) -> tensor<8x6x1xi32>
    %8 = stablehlo.clamp %3, %4, %7 : tensor<8x6x1xi32>
    %9 = stablehlo.cosine %5 : tensor<8x6x16xf32>
    %10 = "stablehlo.scatter"(%1, %8, %9) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 2>, unique_indices = false}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %11 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %11 : tensor<f32>
    }) : (tensor<32x16xf32>, tensor<8x6x1xi32>, tensor<8x6x16xf32>) -> tensor<32x16xf32>
    return %10 : tensor<32x16xf32>
  }
}
