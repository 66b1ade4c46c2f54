module @jit_non_divisible_mix attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["x"=8]> {stablehlo.mesh = {axes = [{name = "x", size = 8 : i64}]}}
  func.func @main(%arg0: tensor<6x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, %arg1: tensor<10xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) -> (tensor<6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, tensor<10x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, tensor<6x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
    %0 = stablehlo.tanh %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=6, j=16}>} : tensor<6x16xf32>
    %1 = sdy.reshard %0 <@mesh, [{"x"}, {}]> {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=6, j=16}>} : tensor<6x16xf32>
    %2 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %3 = stablehlo.reduce(%1 init: %2) applies stablehlo.add across dimensions = [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [])->([i]) {i=6, j=16} reduction={j}>} : (tensor<6x16xf32>, tensor<f32>) -> tensor<6xf32>
    %4 = stablehlo.reshape %arg1 {sdy.sharding_rule = #sdy.op_sharding_rule<([i])->([i, j]) {i=10, j=1}>} : (tensor<10xf32>) -> tensor<10x1xf32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1] {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=10, j=1}>} : (tensor<10x1xf32>) -> tensor<10x1xf32>
    %6 = stablehlo.reshape %5 {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i]) {i=10, j=1}>} : (tensor<10x1xf32>) -> tensor<10xf32>
    %7 = stablehlo.broadcast_in_dim %6, dims = [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"x"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i])->([i, j]) {i=10, j=6}>} : (tensor<10xf32>) -> tensor<10x6xf32>
    %8 = stablehlo.slice %1 [0:6, 0:1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=6, j=16} permutation={j}>} : (tensor<6x16xf32>) -> tensor<6x1xf32>
    %9 = stablehlo.reshape %8 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"x"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([j, k])->([i, j]) {i=1, j=6, k=1}>} : (tensor<6x1xf32>) -> tensor<1x6xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0, 1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"x"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=1, j=6}>} : (tensor<1x6xf32>) -> tensor<1x6xf32>
    %11 = stablehlo.reshape %10 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([j]) {i=1, j=6}>} : (tensor<1x6xf32>) -> tensor<6xf32>
    %12 = stablehlo.broadcast_in_dim %11, dims = [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"x"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([j])->([i, j]) {i=10, j=6}>} : (tensor<6xf32>) -> tensor<10x6xf32>
    %13 = stablehlo.multiply %7, %12 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"x"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=10, j=6}>} : tensor<10x6xf32>
    return %3, %13, %1 : tensor<6xf32>, tensor<10x6xf32>, tensor<6x16xf32>
  }
}
