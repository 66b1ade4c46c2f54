module @jit_max_pool_grad attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<8x8x6x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}, {}, {"model"}]>}, %arg1: tensor<8x4x3x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}, {}, {"model"}]>}) -> tensor<8x8x6x4xf32> {
    %0 = sdy.constant dense<1.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<8x4x3x4xf32>
    %2 = sdy.constant dense<0xFF800000> : tensor<f32>
    %3 = "stablehlo.reduce_window"(%arg0, %2) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<0> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %11 = stablehlo.maximum %arg2, %arg3 : tensor<f32>
      stablehlo.return %11 : tensor<f32>
    }) : (tensor<8x8x6x4xf32>, tensor<f32>) -> tensor<8x4x3x4xf32>
    %4 = stablehlo.tanh %3 : tensor<8x4x3x4xf32>
    %5 = stablehlo.subtract %1, %4 : tensor<8x4x3x4xf32>
    %6 = stablehlo.multiply %arg1, %5 : tensor<8x4x3x4xf32>
    %7 = stablehlo.multiply %6, %4 : tensor<8x4x3x4xf32>
    %8 = stablehlo.add %6, %7 : tensor<8x4x3x4xf32>
    %9 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %10 = "stablehlo.select_and_scatter"(%arg0, %8, %9) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %11 = stablehlo.compare GE, %arg2, %arg3 : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %11 : tensor<i1>
    }, {
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %11 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %11 : tensor<f32>
    }) : (tensor<8x8x6x4xf32>, tensor<8x4x3x4xf32>, tensor<f32>) -> tensor<8x8x6x4xf32>
    return %10 : tensor<8x8x6x4xf32>
  }
}
