module @jit_elementwise_binary attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}, {name = "y", size = 2 : i64}, {name = "z", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {"z"}]>}, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"z"}]>}) -> tensor<8x16xf32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<8x16xf32>
    %1 = stablehlo.subtract %arg0, %arg1 : tensor<8x16xf32>
    %2 = stablehlo.multiply %0, %1 : tensor<8x16xf32>
    %3 = stablehlo.abs %arg1 : tensor<8x16xf32>
    %4 = sdy.constant dense<1.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %6 = stablehlo.add %3, %5 : tensor<8x16xf32>
    %7 = stablehlo.divide %2, %6 : tensor<8x16xf32>
    %8 = stablehlo.maximum %7, %arg0 : tensor<8x16xf32>
    %9 = stablehlo.minimum %7, %arg1 : tensor<8x16xf32>
    %10 = stablehlo.subtract %8, %9 : tensor<8x16xf32>
    %11 = stablehlo.abs %arg0 : tensor<8x16xf32>
    %12 = sdy.constant dense<5.000000e-01> : tensor<f32>
    %13 = stablehlo.broadcast_in_dim %12, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %14 = stablehlo.add %11, %13 : tensor<8x16xf32>
    %15 = stablehlo.power %14, %arg1 : tensor<8x16xf32>
    %16 = stablehlo.add %10, %15 : tensor<8x16xf32>
    return %16 : tensor<8x16xf32>
  }
}
