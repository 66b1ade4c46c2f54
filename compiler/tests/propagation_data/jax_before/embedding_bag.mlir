module @jit_embedding_bag attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<48x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg1: tensor<8x5xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg2: tensor<8x5xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) -> tensor<8x16xf32> {
    %0 = stablehlo.reshape %arg1 : (tensor<8x5xi32>) -> tensor<8x5x1xi32>
    %1 = "stablehlo.gather"(%arg0, %0) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 16>}> : (tensor<48x16xf32>, tensor<8x5x1xi32>) -> tensor<8x5x16xf32>
    %2 = stablehlo.reshape %arg2 : (tensor<8x5xf32>) -> tensor<8x5x1xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0, 1, 2] : (tensor<8x5x1xf32>) -> tensor<8x5x1xf32>
    %4 = stablehlo.reshape %3 : (tensor<8x5x1xf32>) -> tensor<8x5xf32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1] : (tensor<8x5xf32>) -> tensor<8x5x16xf32>
    %6 = stablehlo.multiply %1, %5 : tensor<8x5x16xf32>
    %7 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %8 = stablehlo.reduce(%6 init: %7) applies stablehlo.add across dimensions = [1] : (tensor<8x5x16xf32>, tensor<f32>) -> tensor<8x16xf32>
    return %8 : tensor<8x16xf32>
  }
}
