module @jit_reshape_split_subaxes attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["x"=8]> {stablehlo.mesh = {axes = [{name = "x", size = 8 : i64}]}}
  func.func @main(%arg0: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<2x4x4xf32> {
    %0 = stablehlo.reshape %arg0 : (tensor<32xf32>) -> tensor<2x4x4xf32>
    %1 = stablehlo.cosine %0 : tensor<2x4x4xf32>
    %2 = sdy.constant dense<1.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<f32>) -> tensor<2x4x4xf32>
    %4 = stablehlo.add %1, %3 : tensor<2x4x4xf32>
    return %4 : tensor<2x4x4xf32>
  }
}
