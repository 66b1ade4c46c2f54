module @jit_scan_stack_sharded attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg1: tensor<4x32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}, {}]>}) -> (tensor<16x32xf32>, tensor<4xf32>) {
    %0 = sdy.constant dense<0> : tensor<i32>
    %1 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %3 = sdy.sharding_constraint %arg1 <@mesh, [{?}, {?}, {?}]> : tensor<4x32x32xf32>
    %4:3 = stablehlo.while(%iterArg = %0, %iterArg_0 = %arg0, %iterArg_1 = %2) : tensor<i32>, tensor<16x32xf32>, tensor<4xf32>
    cond {
      %5 = sdy.constant dense<4> : tensor<i32>
      %6 = stablehlo.compare LT, %iterArg, %5 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %6 : tensor<i1>
    } do {
      %5 = sdy.constant dense<1> : tensor<i32>
      %6 = stablehlo.add %iterArg, %5 : tensor<i32>
      %7 = sdy.constant dense<0> : tensor<i32>
      %8 = stablehlo.dynamic_slice %3, %iterArg, %7, %7, sizes = [1, 32, 32] : (tensor<4x32x32xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x32x32xf32>
      %9 = stablehlo.reshape %8 : (tensor<1x32x32xf32>) -> tensor<32x32xf32>
      %10 = stablehlo.dot %iterArg_0, %9, precision = [DEFAULT, DEFAULT] : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
      %11 = stablehlo.tanh %10 : tensor<16x32xf32>
      %12 = sdy.constant dense<0.000000e+00> : tensor<f32>
      %13 = stablehlo.reduce(%iterArg_0 init: %12) applies stablehlo.add across dimensions = [0, 1] : (tensor<16x32xf32>, tensor<f32>) -> tensor<f32>
      %14 = stablehlo.reshape %13 : (tensor<f32>) -> tensor<1xf32>
      %15 = stablehlo.dynamic_update_slice %iterArg_1, %14, %iterArg : (tensor<4xf32>, tensor<1xf32>, tensor<i32>) -> tensor<4xf32>
      stablehlo.return %6, %11, %15 : tensor<i32>, tensor<16x32xf32>, tensor<4xf32>
    }
    return %4#1, %4#2 : tensor<16x32xf32>, tensor<4xf32>
  }
}
