module @jit_call_in_scan attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg1: tensor<4x32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {"model"}]>}, %arg2: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) -> (tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}) {
    %0 = sdy.constant dense<0> : tensor<i32>
    %1 = sdy.reshard %arg1 <@mesh, [{}, {}, {"model"}]> {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k])->([i, j, k]) {i=4, j=32, k=32}>} : tensor<4x32x32xf32>
    %2 = sdy.reshard %arg2 <@mesh, [{"model"}]> {sdy.sharding_rule = #sdy.op_sharding_rule<([i])->([i]) {i=32}>} : tensor<32xf32>
    %3:2 = stablehlo.while(%iterArg = %0, %iterArg_0 = %arg0) : tensor<i32>, tensor<16x32xf32> attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>, <@mesh, [{"data"}, {"model"}]>]>}
    cond {
      %4 = sdy.constant dense<4> : tensor<i32>
      %5 = stablehlo.compare LT, %iterArg, %4 {sdy.sharding_rule = #sdy.op_sharding_rule<([], [])->([])>} : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %5 : tensor<i1>
    } do {
      %4 = sdy.constant dense<1> : tensor<i32>
      %5 = stablehlo.add %iterArg, %4 {sdy.sharding_rule = #sdy.op_sharding_rule<([], [])->([])>} : tensor<i32>
      %6 = sdy.constant dense<0> : tensor<i32>
      %7 = stablehlo.dynamic_slice %1, %iterArg, %6, %6, sizes = [1, 32, 32] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}, {"model"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k], [], [], [])->([i, j, k]) {i=4, j=32, k=32} need_replication={i} blocked_propagation={i}>} : (tensor<4x32x32xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x32x32xf32>
      %8 = stablehlo.reshape %7 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"model"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k])->([j, k]) {i=1, j=32, k=32}>} : (tensor<1x32x32xf32>) -> tensor<32x32xf32>
      %9 = func.call @compute_on.2(%iterArg_0, %8) {mhlo.frontend_attributes = {_xla_compute_type = "dense", inlineable = "false"}, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {"model"}]>]>} : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
      %10 = func.call @compute_on_0.3(%9, %2) {mhlo.frontend_attributes = {_xla_compute_type = "dense", inlineable = "false"}, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {"model"}]>]>} : (tensor<16x32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
      stablehlo.return %5, %10 : tensor<i32>, tensor<16x32xf32>
    }
    return %3#1 : tensor<16x32xf32>
  }
  func.func private @compute_on.2(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}, %arg1: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) -> (tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}) {
    %0 = stablehlo.dot %arg0, %arg1, precision = [DEFAULT, DEFAULT] {mhlo.frontend_attributes = {_xla_compute_type = "dense"}, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {"model"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {i=16, j=32, k=32} reduction={k}>} : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
    %1 = stablehlo.tanh %0 {mhlo.frontend_attributes = {_xla_compute_type = "dense"}, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {"model"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=16, j=32}>} : tensor<16x32xf32>
    return %1 : tensor<16x32xf32>
  }
  func.func private @compute_on_0.3(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}, %arg1: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}]>}) -> (tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}) {
    %0 = sdy.constant dense<5.000000e-01> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {"model"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([])->([i, j]) {i=16, j=32}>} : (tensor<f32>) -> tensor<16x32xf32>
    %2 = stablehlo.multiply %arg0, %1 {mhlo.frontend_attributes = {_xla_compute_type = "dense"}, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {"model"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=16, j=32}>} : tensor<16x32xf32>
    %3 = stablehlo.reshape %arg1 {mhlo.frontend_attributes = {_xla_compute_type = "dense"}, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"model"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([j])->([i, j]) {i=1, j=32}>} : (tensor<32xf32>) -> tensor<1x32xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] {mhlo.frontend_attributes = {_xla_compute_type = "dense"}, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"model"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=1, j=32}>} : (tensor<1x32xf32>) -> tensor<1x32xf32>
    %5 = stablehlo.reshape %4 {mhlo.frontend_attributes = {_xla_compute_type = "dense"}, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"model"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([j]) {i=1, j=32}>} : (tensor<1x32xf32>) -> tensor<32xf32>
    %6 = stablehlo.broadcast_in_dim %5, dims = [1] {mhlo.frontend_attributes = {_xla_compute_type = "dense"}, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {"model"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([j])->([i, j]) {i=16, j=32}>} : (tensor<32xf32>) -> tensor<16x32xf32>
    %7 = stablehlo.add %2, %6 {mhlo.frontend_attributes = {_xla_compute_type = "dense"}, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {"model"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=16, j=32}>} : tensor<16x32xf32>
    return %7 : tensor<16x32xf32>
  }
}
