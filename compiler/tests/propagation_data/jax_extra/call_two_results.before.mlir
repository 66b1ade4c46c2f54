module @jit_call_two_results attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}, {name = "y", size = 2 : i64}, {name = "z", size = 2 : i64}]}}
  func.func private @compute_on.1(%arg0: tensor<16x16xf32>, %arg1: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xf32>) {
    %0 = stablehlo.dot %arg0, %arg1, precision = [DEFAULT, DEFAULT] {mhlo.frontend_attributes = {_xla_compute_type = "dense"}} : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
    %1 = stablehlo.exponential %arg1 {mhlo.frontend_attributes = {_xla_compute_type = "dense"}} : tensor<16x16xf32>
    return %0, %1 : tensor<16x16xf32>, tensor<16x16xf32>
  }
  func.func @main(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y", "z"}]>}) -> (tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}, tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z"}, {}]>}) {
    %0:2 = call @compute_on.1(%arg0, %arg1) {mhlo.frontend_attributes = {_xla_compute_type = "dense", inlineable = "false"}} : (tensor<16x16xf32>, tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xf32>)
    return %0#0, %0#1 : tensor<16x16xf32>, tensor<16x16xf32>
  }
}
