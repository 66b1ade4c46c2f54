module @jit_reshape_roundtrip attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<16x8xf32> {
    %0 = stablehlo.reshape %arg0 : (tensor<16x8xf32>) -> tensor<4x4x8xf32>
    %1 = stablehlo.tanh %0 : tensor<4x4x8xf32>
    %2 = stablehlo.transpose %1, dims = [1, 0, 2] {result_layout = dense<[2, 0, 1]> : tensor<3xindex>, xla_shape = "f32[4,4,8]{2,0,1}"} : (tensor<4x4x8xf32>) -> tensor<4x4x8xf32>
    %3 = stablehlo.reshape %2 : (tensor<4x4x8xf32>) -> tensor<16x8xf32>
    %4 = stablehlo.add %3, %arg0 : tensor<16x8xf32>
    return %4 : tensor<16x8xf32>
  }
}
