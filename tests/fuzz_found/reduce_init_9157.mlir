module @jit_mean_var attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}) -> (tensor<32xf32> {jax.result_info = "result[0]"}, tensor<16xf32> {jax.result_info = "result[1]"}, tensor<f32> {jax.result_info = "result[2]"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<16x32xf32>, tensor<f32>) -> tensor<32xf32>
    %cst_0 = stablehlo.constant dense<1.600000e+01> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %2 = stablehlo.divide %0, %1 : tensor<32xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %3 = call @_var(%arg0, %c) : (tensor<16x32xf32>, tensor<i32>) -> tensor<16xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.reduce(%arg0 init: %cst_1) applies stablehlo.add across dimensions = [0, 1] : (tensor<16x32xf32>, tensor<f32>) -> tensor<f32>
    %cst_2 = stablehlo.constant dense<5.120000e+02> : tensor<f32>
    %5 = stablehlo.divide %4, %cst_2 : tensor<f32>
    return %2, %3, %5 : tensor<32xf32>, tensor<16xf32>, tensor<f32>
  }
  func.func private @_var(%arg0: tensor<16x32xf32>, %arg1: tensor<i32>) -> tensor<16xf32> {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<16x32xf32>, tensor<f32>) -> tensor<16xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<16xf32>) -> tensor<16x1xf32>
    %cst_0 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<16x1xf32>
    %3 = stablehlo.divide %1, %2 : tensor<16x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<16x1xf32>) -> tensor<16x32xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<16x32xf32>
    %6 = chlo.square %5 : tensor<16x32xf32> -> tensor<16x32xf32>
    %7 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %cst_1 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %8 = stablehlo.subtract %cst_1, %7 : tensor<f32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %9 = stablehlo.reduce(%6 init: %cst_2) applies stablehlo.add across dimensions = [1] : (tensor<16x32xf32>, tensor<f32>) -> tensor<16xf32>
    %10 = stablehlo.broadcast_in_dim %8, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %11 = stablehlo.divide %9, %10 : tensor<16xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %12 = stablehlo.compare GT, %8, %cst_3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %cst_4 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %13 = call @_where(%12, %11, %cst_4) : (tensor<i1>, tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
    return %13 : tensor<16xf32>
  }
  func.func private @_where(%arg0: tensor<i1>, %arg1: tensor<16xf32>, %arg2: tensor<f32>) -> tensor<16xf32> {
    %0 = stablehlo.convert %arg2 : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %2 = stablehlo.select %arg0, %arg1, %1 : tensor<i1>, tensor<16xf32>
    return %2 : tensor<16xf32>
  }
}
