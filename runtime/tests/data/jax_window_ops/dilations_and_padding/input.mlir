module @jit_dilations_and_padding attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5x6xf32>, %arg1: tensor<4x5xi32>) -> (tensor<11x2xf32> {jax.result_info = "result[0]"}, tensor<2x6xf32> {jax.result_info = "result[1]"}, tensor<0x14xi32> {jax.result_info = "result[2]"}, tensor<0x5xf32> {jax.result_info = "result[3]"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<f32>
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64: 2, 1>, padding = dense<[[1, 2], [0, 1]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 2>, window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 1, 2>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %6 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %6 : tensor<f32>
    }) : (tensor<5x6xf32>, tensor<f32>) -> tensor<11x2xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %2 = "stablehlo.reduce_window"(%arg0, %cst_0) <{base_dilations = array<i64: 1, 1>, padding = dense<[[-1, 0], [2, -1]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %6 = stablehlo.multiply %arg2, %arg3 : tensor<f32>
      stablehlo.return %6 : tensor<f32>
    }) : (tensor<5x6xf32>, tensor<f32>) -> tensor<2x6xf32>
    %c = stablehlo.constant dense<-100> : tensor<i32>
    %3 = "stablehlo.reduce_window"(%arg1, %c) <{base_dilations = array<i64: 1, 3>, padding = dense<[[0, 0], [1, 1]]> : tensor<2x2xi64>, window_dilations = array<i64: 2, 1>, window_dimensions = array<i64: 3, 2>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg2: tensor<i32>, %arg3: tensor<i32>):
      %6 = stablehlo.maximum %arg2, %arg3 : tensor<i32>
      stablehlo.return %6 : tensor<i32>
    }) : (tensor<4x5xi32>, tensor<i32>) -> tensor<0x14xi32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<f32>
    %5 = "stablehlo.reduce_window"(%arg0, %4) <{base_dilations = array<i64: 1, 1>, padding = dense<0> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 9, 2>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %6 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %6 : tensor<f32>
    }) : (tensor<5x6xf32>, tensor<f32>) -> tensor<0x5xf32>
    return %1, %2, %3, %5 : tensor<11x2xf32>, tensor<2x6xf32>, tensor<0x14xi32>, tensor<0x5xf32>
  }
}
