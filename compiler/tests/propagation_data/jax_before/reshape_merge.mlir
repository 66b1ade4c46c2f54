module @jit_reshape_merge attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<32xf32> {
    %0 = stablehlo.reshape %arg0 : (tensor<8x4xf32>) -> tensor<32xf32>
    %1 = stablehlo.sine %0 : tensor<32xf32>
    %2 = sdy.constant dense<2.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %4 = stablehlo.multiply %1, %3 : tensor<32xf32>
    return %4 : tensor<32xf32>
  }
}
