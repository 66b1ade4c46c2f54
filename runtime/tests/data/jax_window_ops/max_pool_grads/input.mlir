module @jit_max_pool_grads attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x7x6x2xf32>, %arg1: tensor<2x7x6x2xf32>) -> (tensor<2x7x6x2xf32> {jax.result_info = "result[0]"}, tensor<2x7x6x2xf32> {jax.result_info = "result[1]"}, tensor<2x7x6x2xf32> {jax.result_info = "result[2]"}) {
    %0 = stablehlo.slice %arg1 [0:2, 0:3, 0:3, 0:2] : (tensor<2x7x6x2xf32>) -> tensor<2x3x3x2xf32>
    %1 = stablehlo.tanh %0 : tensor<2x3x3x2xf32>
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %2 = stablehlo.pad %arg0, %cst, low = [0, 0, 0, 0], high = [0, 0, 0, 0], interior = [0, 0, 0, 0] : (tensor<2x7x6x2xf32>, tensor<f32>) -> tensor<2x7x6x2xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %3 = "stablehlo.select_and_scatter"(%2, %1, %cst_0) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %15 = stablehlo.compare GE, %arg2, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %15 : tensor<i1>
    }, {
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %15 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %15 : tensor<f32>
    }) : (tensor<2x7x6x2xf32>, tensor<2x3x3x2xf32>, tensor<f32>) -> tensor<2x7x6x2xf32>
    %4 = stablehlo.slice %3 [0:2, 0:7, 0:6, 0:2] : (tensor<2x7x6x2xf32>) -> tensor<2x7x6x2xf32>
    %5 = stablehlo.slice %arg1 [0:2, 0:4, 0:3, 0:2] : (tensor<2x7x6x2xf32>) -> tensor<2x4x3x2xf32>
    %6 = stablehlo.tanh %5 : tensor<2x4x3x2xf32>
    %cst_1 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %7 = stablehlo.pad %arg0, %cst_1, low = [0, 1, 0, 0], high = [0, 1, 1, 0], interior = [0, 0, 0, 0] : (tensor<2x7x6x2xf32>, tensor<f32>) -> tensor<2x9x7x2xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %8 = "stablehlo.select_and_scatter"(%7, %6, %cst_2) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %15 = stablehlo.compare GE, %arg2, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %15 : tensor<i1>
    }, {
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %15 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %15 : tensor<f32>
    }) : (tensor<2x9x7x2xf32>, tensor<2x4x3x2xf32>, tensor<f32>) -> tensor<2x9x7x2xf32>
    %9 = stablehlo.slice %8 [0:2, 1:8, 0:6, 0:2] : (tensor<2x9x7x2xf32>) -> tensor<2x7x6x2xf32>
    %10 = stablehlo.slice %arg1 [0:2, 0:7, 0:3, 0:2] : (tensor<2x7x6x2xf32>) -> tensor<2x7x3x2xf32>
    %11 = stablehlo.tanh %10 : tensor<2x7x3x2xf32>
    %cst_3 = stablehlo.constant dense<0x7F800000> : tensor<f32>
    %12 = stablehlo.pad %arg0, %cst_3, low = [0, 0, 0, 0], high = [0, 1, 1, 0], interior = [0, 0, 0, 0] : (tensor<2x7x6x2xf32>, tensor<f32>) -> tensor<2x8x7x2xf32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %13 = "stablehlo.select_and_scatter"(%12, %11, %cst_4) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 2, 3, 1>, window_strides = array<i64: 1, 1, 2, 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %15 = stablehlo.compare LE, %arg2, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %15 : tensor<i1>
    }, {
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %15 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %15 : tensor<f32>
    }) : (tensor<2x8x7x2xf32>, tensor<2x7x3x2xf32>, tensor<f32>) -> tensor<2x8x7x2xf32>
    %14 = stablehlo.slice %13 [0:2, 0:7, 0:6, 0:2] : (tensor<2x8x7x2xf32>) -> tensor<2x7x6x2xf32>
    return %4, %9, %14 : tensor<2x7x6x2xf32>, tensor<2x7x6x2xf32>, tensor<2x7x6x2xf32>
  }
}
