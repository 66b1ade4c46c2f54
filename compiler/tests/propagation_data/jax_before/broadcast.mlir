module @jit_broadcast attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>}, %arg2: tensor<8xf32>, %arg3: tensor<16xf32>) -> tensor<8x16xf32> {
    %0 = stablehlo.reshape %arg1 : (tensor<16xf32>) -> tensor<1x16xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<1x16xf32>
    %2 = stablehlo.reshape %1 : (tensor<1x16xf32>) -> tensor<16xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [1] : (tensor<16xf32>) -> tensor<8x16xf32>
    %4 = stablehlo.add %arg0, %3 : tensor<8x16xf32>
    %5 = sdy.constant dense<1.500000e+00> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %5, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %7 = stablehlo.add %4, %6 : tensor<8x16xf32>
    %8 = stablehlo.reshape %arg2 : (tensor<8xf32>) -> tensor<8x1xf32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x1xf32>
    %10 = stablehlo.reshape %9 : (tensor<8x1xf32>) -> tensor<8xf32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [0] : (tensor<8xf32>) -> tensor<8x16xf32>
    %12 = stablehlo.reshape %arg3 : (tensor<16xf32>) -> tensor<1x16xf32>
    %13 = stablehlo.broadcast_in_dim %12, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<1x16xf32>
    %14 = stablehlo.reshape %13 : (tensor<1x16xf32>) -> tensor<16xf32>
    %15 = stablehlo.broadcast_in_dim %14, dims = [1] : (tensor<16xf32>) -> tensor<8x16xf32>
    %16 = stablehlo.multiply %11, %15 : tensor<8x16xf32>
    %17 = stablehlo.add %7, %16 : tensor<8x16xf32>
    return %17 : tensor<8x16xf32>
  }
}
