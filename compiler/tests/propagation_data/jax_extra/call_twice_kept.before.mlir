module @jit_call_twice_kept attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func private @compute_on.1(%arg0: tensor<16x32xf32>, %arg1: tensor<32x32xf32>) -> tensor<16x32xf32> {
    %0 = stablehlo.dot %arg0, %arg1, precision = [DEFAULT, DEFAULT] {mhlo.frontend_attributes = {_xla_compute_type = "dense"}} : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
    %1 = stablehlo.tanh %0 {mhlo.frontend_attributes = {_xla_compute_type = "dense"}} : tensor<16x32xf32>
    return %1 : tensor<16x32xf32>
  }
  func.func @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg1: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg2: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"data"}]>}, %arg3: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}) -> (tensor<16x32xf32>, tensor<16x32xf32>) {
    %0 = call @compute_on.1(%arg0, %arg1) {mhlo.frontend_attributes = {_xla_compute_type = "dense", inlineable = "false"}} : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
    %1 = call @compute_on.1.clone(%arg2, %arg3) {mhlo.frontend_attributes = {_xla_compute_type = "dense", inlineable = "false"}} : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
    return %0, %1 : tensor<16x32xf32>, tensor<16x32xf32>
  }
  func.func private @compute_on.1.clone(%arg0: tensor<16x32xf32>, %arg1: tensor<32x32xf32>) -> tensor<16x32xf32> {
    %0 = stablehlo.dot %arg0, %arg1, precision = [DEFAULT, DEFAULT] {mhlo.frontend_attributes = {_xla_compute_type = "dense"}} : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
    %1 = stablehlo.tanh %0 {mhlo.frontend_attributes = {_xla_compute_type = "dense"}} : tensor<16x32xf32>
    return %1 : tensor<16x32xf32>
  }
}
