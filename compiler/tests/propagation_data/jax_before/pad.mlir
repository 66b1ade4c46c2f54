module @jit_pad attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<11x31xf32>, tensor<11x31xf32>) {
    %0 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [1, 0], high = [2, 0], interior = [0, 1] : (tensor<8x16xf32>, tensor<f32>) -> tensor<11x31xf32>
    %2 = sdy.constant dense<-1.000000e+00> : tensor<f32>
    %3 = stablehlo.pad %arg0, %2, low = [2, 3], high = [1, 12], interior = [0, 0] : (tensor<8x16xf32>, tensor<f32>) -> tensor<11x31xf32>
    return %1, %3 : tensor<11x31xf32>, tensor<11x31xf32>
  }
}
