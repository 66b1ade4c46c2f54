module @jit_all_to_all_reshard attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<8x4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}, {}]>}) -> (tensor<8x4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}, {"x"}]>}) {
    %0 = sdy.constant dense<2.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<8x4x8xf32>
    %2 = stablehlo.multiply %arg0, %1 : tensor<8x4x8xf32>
    %3 = sdy.sharding_constraint %2 <@mesh, [{}, {"y"}, {"x"}]> : tensor<8x4x8xf32>
    %4 = stablehlo.sine %3 : tensor<8x4x8xf32>
    return %4 : tensor<8x4x8xf32>
  }
}
