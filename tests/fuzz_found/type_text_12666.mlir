module @jit_all_to_all_reshard attributes {mhlo.num_partitions = 9 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<8x4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}, {}]>}) -> (tensor<8x4x8xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}, {"x"}]>}) {
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x4x8xf32>
    %1 = stablehlo.multiply %arg0, %0 : tensor<8x4x8xf32blehlo.multiply %arg0, %0 : tensor<8x4x8xf32>
    %2 = sdy.sharding_co>
    %2 = sdy.sharding_constraint %1 <@mesh, [{}, {"y"}, {"x"}]> : tensor<8x4x8xf32>
    %3 = stablehlo.sine %2 : tensor<8x4x8xf32>
    return %3 : tensor<8x4x8xf32>
  }
}
