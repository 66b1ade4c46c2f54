module @jit_while_data_dependent attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}, {name = "y", size = 2 : i64}, {name = "z", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %arg1: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) -> (tensor<16x16xf32>, tensor<i32>) {
    %0 = sdy.constant dense<0> : tensor<i32>
    %1 = sdy.sharding_constraint %arg1 <@mesh, [{?}]> : tensor<16xf32>
    %2:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %0) : tensor<16x16xf32>, tensor<i32>
    cond {
      %3 = stablehlo.abs %iterArg : tensor<16x16xf32>
      %4 = sdy.constant dense<0.000000e+00> : tensor<f32>
      %5 = stablehlo.reduce(%3 init: %4) applies stablehlo.add across dimensions = [0, 1] : (tensor<16x16xf32>, tensor<f32>) -> tensor<f32>
      %6 = sdy.constant dense<1.000000e+00> : tensor<f32>
      %7 = stablehlo.compare GT, %5, %6 : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %8 = sdy.constant dense<20> : tensor<i32>
      %9 = stablehlo.compare LT, %iterArg_0, %8 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %10 = stablehlo.and %7, %9 : tensor<i1>
      stablehlo.return %10 : tensor<i1>
    } do {
      %3 = sdy.constant dense<5.000000e-01> : tensor<f32>
      %4 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<f32>) -> tensor<16x16xf32>
      %5 = stablehlo.multiply %iterArg, %4 : tensor<16x16xf32>
      %6 = stablehlo.reshape %1 : (tensor<16xf32>) -> tensor<1x16xf32>
      %7 = stablehlo.broadcast_in_dim %6, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<1x16xf32>
      %8 = stablehlo.reshape %7 : (tensor<1x16xf32>) -> tensor<16xf32>
      %9 = stablehlo.broadcast_in_dim %8, dims = [1] : (tensor<16xf32>) -> tensor<16x16xf32>
      %10 = stablehlo.add %5, %9 : tensor<16x16xf32>
      %11 = sdy.constant dense<1> : tensor<i32>
      %12 = stablehlo.add %iterArg_0, %11 : tensor<i32>
      stablehlo.return %10, %12 : tensor<16x16xf32>, tensor<i32>
    }
    return %2#0, %2#1 : tensor<16x16xf32>, tensor<i32>
  }
}
