module @jit_vocab_parallel_embedding attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<64x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg1: tensor<8x6xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) -> tensor<8x6x16xf32> {
    %0 = sdy.constant dense<0> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<i32>) -> tensor<8x6xi32>
    %2 = stablehlo.compare LT, %arg1, %1 : (tensor<8x6xi32>, tensor<8x6xi32>) -> tensor<8x6xi1>
    %3 = sdy.constant dense<64> : tensor<i32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<i32>) -> tensor<8x6xi32>
    %5 = stablehlo.add %arg1, %4 : tensor<8x6xi32>
    %6 = stablehlo.select %2, %5, %arg1 : tensor<8x6xi1>, tensor<8x6xi32>
    %7 = stablehlo.reshape %6 : (tensor<8x6xi32>) -> tensor<8x6x1xi32>
    %8 = sdy.constant dense<0> : tensor<i32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [] : (tensor<i32>) -> tensor<8x6x1xi32>
    %10 = stablehlo.compare GE, %7, %9 : (tensor<8x6x1xi32>, tensor<8x6x1xi32>) -> tensor<8x6x1xi1>
    %11 = sdy.constant dense<63> : tensor<i32>
    %12 = stablehlo.broadcast_in_dim %11, dims = [] : (tensor<i32>) -> tensor<8x6x1xi32>
    %13 = stablehlo.compare LE, %7, %12 : (tensor<8x6x1xi32>, tensor<8x6x1xi32>) -> tensor<8x6x1xi1>
    %14 = stablehlo.and %10, %13 : tensor<8x6x1xi1>
    %15 = sdy.constant dense<true> : tensor<i1>
    %16 = stablehlo.reduce(%14 init: %15) applies stablehlo.and across dimensions = [2] : (tensor<8x6x1xi1>, tensor<i1>) -> tensor<8x6xi1>
    %17 = stablehlo.broadcast_in_dim %16, dims = [0, 1] : (tensor<8x6xi1>) -> tensor<8x6x16xi1>
    %18 = "stablehlo.gather"(%arg0, %7) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 16>}> : (tensor<64x16xf32>, tensor<8x6x1xi32>) -> tensor<8x6x16xf32>
    %19 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %20 = stablehlo.broadcast_in_dim %19, dims = [] : (tensor<f32>) -> tensor<8x6x16xf32>
    %21 = stablehlo.select %17, %18, %20 : tensor<8x6x16xi1>, tensor<8x6x16xf32>
    return %21 : tensor<8x6x16xf32>
  }
}
