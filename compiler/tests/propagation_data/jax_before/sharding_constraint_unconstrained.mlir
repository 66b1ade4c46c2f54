module @jit_sharding_constraint_unconstrained attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg1: tensor<32x16xf32>) -> tensor<16x16xf32> {
    %0 = stablehlo.sine %arg0 : tensor<16x32xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{?}, {"model"}]> : tensor<16x32xf32>
    %2 = stablehlo.dot %1, %arg1, precision = [DEFAULT, DEFAULT] : (tensor<16x32xf32>, tensor<32x16xf32>) -> tensor<16x16xf32>
    %3 = sdy.sharding_constraint %2 <@mesh, [{"data"}, {?}]> : tensor<16x16xf32>
    return %3 : tensor<16x16xf32>
  }
}
