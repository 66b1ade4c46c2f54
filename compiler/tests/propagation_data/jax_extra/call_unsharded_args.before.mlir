module @jit_call_unsharded_args attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func private @compute_on.1(%arg0: tensor<8x16xf32>, %arg1: tensor<f32>) -> tensor<8x16xf32> {
    %0 = sdy.constant dense<5.000000e-01> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %2 = stablehlo.multiply %arg0, %1 {mhlo.frontend_attributes = {_xla_compute_type = "dense"}} : tensor<8x16xf32>
    %3 = stablehlo.broadcast_in_dim %arg1, dims = [] {mhlo.frontend_attributes = {_xla_compute_type = "dense"}} : (tensor<f32>) -> tensor<8x16xf32>
    %4 = stablehlo.add %2, %3 {mhlo.frontend_attributes = {_xla_compute_type = "dense"}} : tensor<8x16xf32>
    return %4 : tensor<8x16xf32>
  }
  func.func @main(%arg0: tensor<8x16xf32>, %arg1: tensor<8x16xf32>, %arg2: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
    %0 = sdy.constant dense<1.000000e+00> : tensor<f32>
    %1 = call @compute_on.1(%arg0, %0) {mhlo.frontend_attributes = {_xla_compute_type = "dense", inlineable = "false"}} : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
    %2 = stablehlo.add %1, %arg2 : tensor<8x16xf32>
    %3 = sdy.constant dense<2.000000e+00> : tensor<f32>
    %4 = call @compute_on.1.clone(%arg1, %3) {mhlo.frontend_attributes = {_xla_compute_type = "dense", inlineable = "false"}} : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
    return %2, %4 : tensor<8x16xf32>, tensor<8x16xf32>
  }
  func.func private @compute_on.1.clone(%arg0: tensor<8x16xf32>, %arg1: tensor<f32>) -> tensor<8x16xf32> {
    %0 = sdy.constant dense<5.000000e-01> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %2 = stablehlo.multiply %arg0, %1 {mhlo.frontend_attributes = {_xla_compute_type = "dense"}} : tensor<8x16xf32>
    %3 = stablehlo.broadcast_in_dim %arg1, dims = [] {mhlo.frontend_attributes = {_xla_compute_type = "dense"}} : (tensor<f32>) -> tensor<8x16xf32>
    %4 = stablehlo.add %2, %3 {mhlo.frontend_attributes = {_xla_compute_type = "dense"}} : tensor<8x16xf32>
    return %4 : tensor<8x16xf32>
  }
}
