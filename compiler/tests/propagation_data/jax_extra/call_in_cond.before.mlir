module @jit_call_in_cond attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func private @compute_on.2(%arg0: tensor<16x32xf32>, %arg1: tensor<32x32xf32>) -> tensor<16x32xf32> {
    %0 = stablehlo.dot %arg0, %arg1, precision = [DEFAULT, DEFAULT] {mhlo.frontend_attributes = {_xla_compute_type = "dense"}} : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
    %1 = stablehlo.tanh %0 {mhlo.frontend_attributes = {_xla_compute_type = "dense"}} : tensor<16x32xf32>
    return %1 : tensor<16x32xf32>
  }
  func.func @main(%arg0: tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>}, %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg2: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) -> tensor<16x32xf32> {
    %0 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.compare GT, %arg0, %0 : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %2 = stablehlo.convert %1 : (tensor<i1>) -> tensor<i32>
    %3 = "stablehlo.case"(%2) ({
      %4 = stablehlo.dot %arg1, %arg2, precision = [DEFAULT, DEFAULT] : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
      %5 = stablehlo.cosine %4 : tensor<16x32xf32>
      stablehlo.return %5 : tensor<16x32xf32>
    }, {
      %4 = func.call @compute_on.2(%arg1, %arg2) {mhlo.frontend_attributes = {_xla_compute_type = "dense", inlineable = "false"}} : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
      stablehlo.return %4 : tensor<16x32xf32>
    }) : (tensor<i32>) -> tensor<16x32xf32>
    return %3 : tensor<16x32xf32>
  }
}
