module @jit_call_constraint_inside attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func private @compute_on.1(%arg0: tensor<16x32xf32>) -> tensor<16x32xf32> {
    %0 = stablehlo.sine %arg0 {mhlo.frontend_attributes = {_xla_compute_type = "dense"}} : tensor<16x32xf32>
    %1 = sdy.constant dense<2.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [] : (tensor<f32>) -> tensor<16x32xf32>
    %3 = stablehlo.multiply %0, %2 {mhlo.frontend_attributes = {_xla_compute_type = "dense"}} : tensor<16x32xf32>
    %4 = sdy.sharding_constraint %3 <@mesh, [{"data"}, {}]> : tensor<16x32xf32>
    return %4 : tensor<16x32xf32>
  }
  func.func @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) -> (tensor<16x32xf32>, tensor<16x32xf32>) {
    %0 = call @compute_on.1(%arg0) {mhlo.frontend_attributes = {_xla_compute_type = "dense", inlineable = "false"}} : (tensor<16x32xf32>) -> tensor<16x32xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{}, {"model"}]> : tensor<16x32xf32>
    %2 = stablehlo.add %1, %arg1 : tensor<16x32xf32>
    %3 = call @compute_on.1.clone(%arg1) {mhlo.frontend_attributes = {_xla_compute_type = "dense", inlineable = "false"}} : (tensor<16x32xf32>) -> tensor<16x32xf32>
    return %2, %3 : tensor<16x32xf32>, tensor<16x32xf32>
  }
  func.func private @compute_on.1.clone(%arg0: tensor<16x32xf32>) -> tensor<16x32xf32> {
    %0 = stablehlo.sine %arg0 {mhlo.frontend_attributes = {_xla_compute_type = "dense"}} : tensor<16x32xf32>
    %1 = sdy.constant dense<2.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [] : (tensor<f32>) -> tensor<16x32xf32>
    %3 = stablehlo.multiply %0, %2 {mhlo.frontend_attributes = {_xla_compute_type = "dense"}} : tensor<16x32xf32>
    %4 = sdy.sharding_constraint %3 <@mesh, [{"data"}, {}]> : tensor<16x32xf32>
    return %4 : tensor<16x32xf32>
  }
}
