module @jit_explicit_replicated attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> tensor<16x16xf32> {
    %0 = stablehlo.dot %arg0, %arg1, precision = [DEFAULT, DEFAULT] : (tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{"x", ?}, {?}]> : tensor<16x16xf32>
    %2 = sdy.sharding_constraint %1 <@mesh, [{?}, {?}], replicated={"x"}> : tensor<16x16xf32>
    %3 = stablehlo.sine %2 : tensor<16x16xf32>
    %4 = sdy.sharding_constraint %3 <@mesh, [{?}, {?}], replicated={"x"}> : tensor<16x16xf32>
    return %4 : tensor<16x16xf32>
  }
}
