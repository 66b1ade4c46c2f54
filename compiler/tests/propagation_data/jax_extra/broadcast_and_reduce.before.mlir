module @jit_broadcast_and_reduce attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>}, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg2: tensor<32x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}) -> (tensor<32x16xf32>, tensor<16xf32>, tensor<f32>) {
    %0 = stablehlo.reshape %arg0 : (tensor<32xf32>) -> tensor<32x1xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<32x1xf32>) -> tensor<32x1xf32>
    %2 = stablehlo.reshape %1 : (tensor<32x1xf32>) -> tensor<32xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0] : (tensor<32xf32>) -> tensor<32x16xf32>
    %4 = stablehlo.multiply %3, %arg2 : tensor<32x16xf32>
    %5 = sdy.constant dense<0xFF800000> : tensor<f32>
    %6 = stablehlo.reduce(%4 init: %5) applies stablehlo.maximum across dimensions = [0] : (tensor<32x16xf32>, tensor<f32>) -> tensor<16xf32>
    %7 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %8 = stablehlo.reduce(%arg1 init: %7) applies stablehlo.add across dimensions = [0] : (tensor<8x16xf32>, tensor<f32>) -> tensor<16xf32>
    %9 = stablehlo.add %6, %8 : tensor<16xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [1] : (tensor<16xf32>) -> tensor<32x16xf32>
    %11 = stablehlo.subtract %10, %arg2 : tensor<32x16xf32>
    %12 = stablehlo.reduce(%4 init: %7) applies stablehlo.add across dimensions = [0, 1] : (tensor<32x16xf32>, tensor<f32>) -> tensor<f32>
    %13 = sdy.constant dense<5.120000e+02> : tensor<f32>
    %14 = stablehlo.divide %12, %13 : tensor<f32>
    return %11, %9, %14 : tensor<32x16xf32>, tensor<16xf32>, tensor<f32>
  }
}
