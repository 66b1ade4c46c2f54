module @jit_reductions attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<8x16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {"y"}]>}) -> (tensor<8x4xf32>, tensor<16x4xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
    %0 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%arg0 init: %0) applies stablehlo.add across dimensions = [1] : (tensor<8x16x4xf32>, tensor<f32>) -> tensor<8x4xf32>
    %2 = sdy.constant dense<0xFF800000> : tensor<f32>
    %3 = stablehlo.reduce(%arg0 init: %2) applies stablehlo.maximum across dimensions = [0] : (tensor<8x16x4xf32>, tensor<f32>) -> tensor<16x4xf32>
    %4 = sdy.constant dense<0x7F800000> : tensor<f32>
    %5 = stablehlo.reduce(%arg0 init: %4) applies stablehlo.minimum across dimensions = [2] : (tensor<8x16x4xf32>, tensor<f32>) -> tensor<8x16xf32>
    %6 = sdy.constant dense<1.000000e-01> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %6, dims = [] : (tensor<f32>) -> tensor<8x16x4xf32>
    %8 = stablehlo.multiply %arg0, %7 : tensor<8x16x4xf32>
    %9 = sdy.constant dense<1.000000e+00> : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [] : (tensor<f32>) -> tensor<8x16x4xf32>
    %11 = stablehlo.add %8, %10 : tensor<8x16x4xf32>
    %12 = sdy.constant dense<1.000000e+00> : tensor<f32>
    %13 = stablehlo.reduce(%11 init: %12) applies stablehlo.multiply across dimensions = [2] : (tensor<8x16x4xf32>, tensor<f32>) -> tensor<8x16xf32>
    return %1, %3, %5, %13 : tensor<8x4xf32>, tensor<16x4xf32>, tensor<8x16xf32>, tensor<8x16xf32>
  }
}
