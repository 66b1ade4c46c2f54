module @jit_scan_mlp attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg1: tensor<4x32x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {"model"}]>}, %arg2: tensor<4x64x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}, {}]>}) -> tensor<16x32xf32> {
    %0 = sdy.constant dense<0> : tensor<i32>
    %1 = sdy.sharding_constraint %arg1 <@mesh, [{?}, {?}, {?}]> : tensor<4x32x64xf32>
    %2 = sdy.sharding_constraint %arg2 <@mesh, [{?}, {?}, {?}]> : tensor<4x64x32xf32>
    %3:2 = stablehlo.while(%iterArg = %0, %iterArg_0 = %arg0) : tensor<i32>, tensor<16x32xf32>
    cond {
      %4 = sdy.constant dense<4> : tensor<i32>
      %5 = stablehlo.compare LT, %iterArg, %4 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %5 : tensor<i1>
    } do {
      %4 = sdy.constant dense<1> : tensor<i32>
      %5 = stablehlo.add %iterArg, %4 : tensor<i32>
      %6 = sdy.constant dense<0> : tensor<i32>
      %7 = stablehlo.dynamic_slice %1, %iterArg, %6, %6, sizes = [1, 32, 64] : (tensor<4x32x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x32x64xf32>
      %8 = stablehlo.reshape %7 : (tensor<1x32x64xf32>) -> tensor<32x64xf32>
      %9 = stablehlo.dot %iterArg_0, %8, precision = [DEFAULT, DEFAULT] : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
      %10 = sdy.constant dense<0.000000e+00> : tensor<f32>
      %11 = stablehlo.broadcast_in_dim %10, dims = [] : (tensor<f32>) -> tensor<16x64xf32>
      %12 = stablehlo.maximum %9, %11 : tensor<16x64xf32>
      %13 = sdy.constant dense<0> : tensor<i32>
      %14 = stablehlo.dynamic_slice %2, %iterArg, %13, %13, sizes = [1, 64, 32] : (tensor<4x64x32xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x64x32xf32>
      %15 = stablehlo.reshape %14 : (tensor<1x64x32xf32>) -> tensor<64x32xf32>
      %16 = stablehlo.dot %12, %15, precision = [DEFAULT, DEFAULT] : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
      %17 = stablehlo.add %iterArg_0, %16 : tensor<16x32xf32>
      stablehlo.return %5, %17 : tensor<i32>, tensor<16x32xf32>
    }
    return %3#1 : tensor<16x32xf32>
  }
}
