module @jit_reshape_chain attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<64x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data", "model"}, {}]>}) -> (tensor<4x96xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"data", "model"}]>}, tensor<8x8x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data", "model"}, {}, {}]>}) {
    %0 = stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data", "model"}, {}, {}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([ij, k])->([i, j, k]) {i=8, j=8, k=12}>} : (tensor<64x12xf32>) -> tensor<8x8x12xf32>
    %1 = stablehlo.transpose %0, dims = [1, 0, 2] {result_layout = dense<[2, 0, 1]> : tensor<3xindex>, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"data", "model"}, {}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([j, i, k])->([i, j, k]) {i=8, j=8, k=12}>, xla_shape = "f32[8,8,12]{2,0,1}"} : (tensor<8x8x12xf32>) -> tensor<8x8x12xf32>
    %2 = stablehlo.reshape %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"data", "model"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k])->([i, jk]) {i=8, j=8, k=12}>} : (tensor<8x8x12xf32>) -> tensor<8x96xf32>
    %3 = stablehlo.sine %2 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"data", "model"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=96}>} : tensor<8x96xf32>
    %4 = stablehlo.reshape %3 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}, {"data", "model"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([ij, k])->([i, j, k]) {i=4, j=2, k=96}>} : (tensor<8x96xf32>) -> tensor<4x2x96xf32>
    %5 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %6 = stablehlo.reduce(%4 init: %5) applies stablehlo.add across dimensions = [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"data", "model"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k], [])->([i, k]) {i=4, j=2, k=96} reduction={j}>} : (tensor<4x2x96xf32>, tensor<f32>) -> tensor<4x96xf32>
    %7 = sdy.constant dense<3.000000e+00> : tensor<f32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data", "model"}, {}, {}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([])->([i, j, k]) {i=8, j=8, k=12}>} : (tensor<f32>) -> tensor<8x8x12xf32>
    %9 = stablehlo.multiply %0, %8 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data", "model"}, {}, {}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k], [i, j, k])->([i, j, k]) {i=8, j=8, k=12}>} : tensor<8x8x12xf32>
    return %6, %9 : tensor<4x96xf32>, tensor<8x8x12xf32>
  }
}
