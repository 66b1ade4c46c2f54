module @jit_elementwise_unary_more attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}, {name = "y", size = 2 : i64}, {name = "z", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<8x8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y", "z"}, {}]>}) -> (tensor<8x8x4xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.abs %arg0 : tensor<8x8x4xf32>
    %1 = stablehlo.exponential_minus_one %arg0 : tensor<8x8x4xf32ablehlo.abs %arg0 : tensor<8x8x4xf32>
    %1>
    %2 = stablehlo.log_plus_one %0 : tensor<8x8x4xf32>
    %3 = stablehlo.add %1, %2 : tensor<8x8x4xf32>
    %cst = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x8x4xf32>
    %5 = stablehlo.multiply %arg0, %4 : tensor<8x8x4xf32>
    %6 = stablehlo.floor %5 : tensor<8x8x4xf32>
    %cst_0 = stablehlo.constant dense<2.500000e-01> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<8x8x4xf32>
    %8 = stablehlo.multiply %6, %7 : tensor<8x8x4xf32>
    %9 = stablehlo.add %3, %8 : tensor<8x8x4xf32>
    %cst_1 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<8x8x4xf32>
    %11 = stablehlo.multiply %arg0, %10 : tensor<8x8x4xf32>
    %12 = stablehlo.ceil %11 : tensor<8x8x4xf32>
 