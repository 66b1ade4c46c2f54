module @jit_call_chain_kept attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}, {name = "y", size = 2 : i64}, {name = "z", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {}]>}, %arg1: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"z"}]>}) -> (tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %0 = call @compute_on.1(%arg0, %arg1) {mhlo.frontend_attributes = {_xla_compute_type = "dense", inlineable = "false"}, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", "y"}, {"z"}]>]>} : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
    %1 = call @compute_on.1.clone(%0, %arg1) {mhlo.frontend_attributes = {_xla_compute_type = "dense", inlineable = "false"}, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", "y"}, {"z"}]>]>} : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
    %2 = sdy.constant dense<2.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([])->([i, j]) {i=16, j=16}>} : (tensor<f32>) -> tensor<16x16xf32>
    %4 = stablehlo.multiply %1, %3 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=16, j=16}>} : tensor<16x16xf32>
    %5 = sdy.reshard %4 <@mesh, [{"x"}, {}]> {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=16, j=16}>} : tensor<16x16xf32>
    return %5 : tensor<16x16xf32>
  }
  func.func private @compute_on.1(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {}]>}, %arg1: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"z"}]>}) -> (tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {"z"}]>}) {
    %0 = stablehlo.dot %arg0, %arg1, precision = [DEFAULT, DEFAULT] {mhlo.frontend_attributes = {_xla_compute_type = "dense"}, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", "y"}, {"z"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {i=16, j=16, k=16} reduction={k}>} : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
    %1 = stablehlo.tanh %0 {mhlo.frontend_attributes = {_xla_compute_type = "dense"}, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", "y"}, {"z"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=16, j=16}>} : tensor<16x16xf32>
    return %1 : tensor<16x16xf32>
  }
  func.func private @compute_on.1.clone(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {"z"}]>}, %arg1: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"z"}]>}) -> (tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {"z"}]>}) {
    %0 = stablehlo.dot %arg0, %arg1, precision = [DEFAULT, DEFAULT] {mhlo.frontend_attributes = {_xla_compute_type = "dense"}, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", "y"}, {"z"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {i=16, j=16, k=16} reduction={k}>} : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
    %1 = stablehlo.tanh %0 {mhlo.frontend_attributes = {_xla_compute_type = "dense"}, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", "y"}, {"z"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=16, j=16}>} : tensor<16x16xf32>
    return %1 : tensor<16x16xf32>
  }
}
