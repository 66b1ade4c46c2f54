module @jit_elementwise_diamond attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}, {name = "y", size = 2 : i64}, {name = "z", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {}]>}, %arg1: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"z", "x"}]>}, %arg2: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z"}, {"y"}]>}) -> (tensor<16x16xf32>, tensor<16x16xf32>) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<16x16xf32>
    %1 = stablehlo.maximum %0, %arg2 : tensor<16x16xf32>
    %2 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<f32>) -> tensor<16x16xf32>
    %4 = stablehlo.compare GT, %1, %3 : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xi1>
    %5 = stablehlo.select %4, %0, %arg2 : tensor<16x16xi1>, tensor<16x16xf32>
    %6 = stablehlo.multiply %5, %1 : tensor<16x16xf32>
    %7 = stablehlo.subtract %0, %arg2 : tensor<16x16xf32>
    return %6, %7 : tensor<16x16xf32>, tensor<16x16xf32>
  }
}
