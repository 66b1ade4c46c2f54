module @jit_pad_slice_concat attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}, %arg1: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) -> (tensor<12x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}, tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}) {
    %0 = sdy.constant dense<0> : tensor<i32>
    %1 = stablehlo.convert %0 {sdy.sharding_rule = #sdy.op_sharding_rule<([])->([])>} : (tensor<i32>) -> tensor<f32>
    %2 = stablehlo.pad %arg0, %1, low = [1, 0], high = [3, 0], interior = [0, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {"model"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [])->([i, j]) {i=16, j=8} permutation={i}>} : (tensor<16x8xf32>, tensor<f32>) -> tensor<20x8xf32>
    %3 = stablehlo.slice %2 [2:18:2, 0:8] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {"model"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=20, j=8} permutation={i}>} : (tensor<20x8xf32>) -> tensor<8x8xf32>
    %4 = stablehlo.concatenate %3, %arg1, dim = 0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {"model"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=12, j=8} need_replication={i}>} : (tensor<8x8xf32>, tensor<4x8xf32>) -> tensor<12x8xf32>
    %5 = sdy.constant dense<2.000000e+00> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %5, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {"model"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([])->([i, j]) {i=12, j=8}>} : (tensor<f32>) -> tensor<12x8xf32>
    %7 = stablehlo.multiply %4, %6 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {"model"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=12, j=8}>} : tensor<12x8xf32>
    %8 = stablehlo.slice %arg0 [0:8, 0:8] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {"model"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=16, j=8} permutation={i}>} : (tensor<16x8xf32>) -> tensor<8x8xf32>
    return %7, %8 : tensor<12x8xf32>, tensor<8x8xf32>
  }
}
