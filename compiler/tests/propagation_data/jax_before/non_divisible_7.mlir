module @jit_non_divisible_7 attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<7x16xf32>, %arg1: tensor<16x12xf32>) -> tensor<7x12xf32> {
    %0 = stablehlo.tanh %arg0 : tensor<7x16xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{"data"}, {}]> : tensor<7x16xf32>
    %2 = stablehlo.sine %arg1 : tensor<16x12xf32>
    %3 = sdy.sharding_constraint %2 <@mesh, [{}, {"model", "data"}]> : tensor<16x12xf32>
    %4 = stablehlo.dot %1, %3, precision = [DEFAULT, DEFAULT] : (tensor<7x16xf32>, tensor<16x12xf32>) -> tensor<7x12xf32>
    return %4 : tensor<7x12xf32>
  }
}
