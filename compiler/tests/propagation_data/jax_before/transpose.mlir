module @jit_transpose attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<4x8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}, {}]>}, %arg1: tensor<16x4x8xf32>) -> tensor<16x4x8xf32> {
    %0 = stablehlo.transpose %arg0, dims = [2, 0, 1] {result_layout = dense<[0, 2, 1]> : tensor<3xindex>, xla_shape = "f32[16,4,8]{0,2,1}"} : (tensor<4x8x16xf32>) -> tensor<16x4x8xf32>
    %1 = stablehlo.add %0, %arg1 {result_layout = dense<[0, 2, 1]> : tensor<3xindex>, xla_shape = "f32[16,4,8]{0,2,1}"} : tensor<16x4x8xf32>
    return %1 : tensor<16x4x8xf32>
  }
}
