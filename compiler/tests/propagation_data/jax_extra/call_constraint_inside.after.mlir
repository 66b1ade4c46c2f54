module @jit_call_constraint_inside attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) -> (tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {
    %0 = call @compute_on.1(%arg0) {mhlo.frontend_attributes = {_xla_compute_type = "dense", inlineable = "false"}, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<16x32xf32>) -> tensor<16x32xf32>
    %1 = sdy.reshard %0 <@mesh, [{"data"}, {"model"}]> : tensor<16x32xf32>
    %2 = sdy.reshard %1 <@mesh, [{}, {"model"}]> {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=16, j=32}>} : tensor<16x32xf32>
    %3 = stablehlo.add %2, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"model"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=16, j=32}>} : tensor<16x32xf32>
    %4 = call @compute_on.1.clone(%arg1) {mhlo.frontend_attributes = {_xla_compute_type = "dense", inlineable = "false"}, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<16x32xf32>) -> tensor<16x32xf32>
    return %3, %4 : tensor<16x32xf32>, tensor<16x32xf32>
  }
  func.func private @compute_on.1(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}) -> (tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {
    %0 = stablehlo.sine %arg0 {mhlo.frontend_attributes = {_xla_compute_type = "dense"}, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {"model"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=16, j=32}>} : tensor<16x32xf32>
    %1 = sdy.constant dense<2.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([])->([i, j]) {i=16, j=32}>} : (tensor<f32>) -> tensor<16x32xf32>
    %3 = stablehlo.multiply %0, %2 {mhlo.frontend_attributes = {_xla_compute_type = "dense"}, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=16, j=32}>} : tensor<16x32xf32>
    %4 = sdy.reshard %3 <@mesh, [{"data"}, {}]> {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=16, j=32}>} : tensor<16x32xf32>
    return %4 : tensor<16x32xf32>
  }
  func.func private @compute_on.1.clone(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) -> (tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {
    %0 = stablehlo.sine %arg0 {mhlo.frontend_attributes = {_xla_compute_type = "dense"}, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=16, j=32}>} : tensor<16x32xf32>
    %1 = sdy.constant dense<2.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([])->([i, j]) {i=16, j=32}>} : (tensor<f32>) -> tensor<16x32xf32>
    %3 = stablehlo.multiply %0, %2 {mhlo.frontend_attributes = {_xla_compute_type = "dense"}, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=16, j=32}>} : tensor<16x32xf32>
    %4 = sdy.reshard %3 <@mesh, [{"data"}, {}]> {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=16, j=32}>} : tensor<16x32xf32>
    return %4 : tensor<16x32xf32>
  }
}
