module @jit_cnn_forward attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<8x8x8x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}, {}, {}]>}, %arg1: tensor<3x3x3x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}, {}]>}, %arg2: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg3: tensor<3x3x1x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}, {}]>}, %arg4: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg5: tensor<32x10xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg6: tensor<10xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) -> tensor<8x10xf32> {
    %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<8x8x8x3xf32>, tensor<3x3x3x8xf32>) -> tensor<8x8x8x8xf32>
    %1 = stablehlo.reshape %arg2 : (tensor<8xf32>) -> tensor<1x1x1x8xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1, 2, 3] : (tensor<1x1x1x8xf32>) -> tensor<1x1x1x8xf32>
    %3 = stablehlo.reshape %2 : (tensor<1x1x1x8xf32>) -> tensor<8xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [3] : (tensor<8xf32>) -> tensor<8x8x8x8xf32>
    %5 = stablehlo.add %0, %4 : tensor<8x8x8x8xf32>
    %6 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %6, dims = [] : (tensor<f32>) -> tensor<8x8x8x8xf32>
    %8 = stablehlo.maximum %5, %7 : tensor<8x8x8x8xf32>
    %9 = stablehlo.convolution(%8, %arg3) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[0, 1], [0, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 8 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<8x8x8x8xf32>, tensor<3x3x1x8xf32>) -> tensor<8x4x4x8xf32>
    %10 = stablehlo.reshape %arg4 : (tensor<8xf32>) -> tensor<1x1x1x8xf32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [0, 1, 2, 3] : (tensor<1x1x1x8xf32>) -> tensor<1x1x1x8xf32>
    %12 = stablehlo.reshape %11 : (tensor<1x1x1x8xf32>) -> tensor<8xf32>
    %13 = stablehlo.broadcast_in_dim %12, dims = [3] : (tensor<8xf32>) -> tensor<8x4x4x8xf32>
    %14 = stablehlo.add %9, %13 : tensor<8x4x4x8xf32>
    %15 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %16 = stablehlo.broadcast_in_dim %15, dims = [] : (tensor<f32>) -> tensor<8x4x4x8xf32>
    %17 = stablehlo.maximum %14, %16 : tensor<8x4x4x8xf32>
    %18 = sdy.constant dense<0xFF800000> : tensor<f32>
    %19 = "stablehlo.reduce_window"(%17, %18) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<0> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg7: tensor<f32>, %arg8: tensor<f32>):
      %27 = stablehlo.maximum %arg7, %arg8 : tensor<f32>
      stablehlo.return %27 : tensor<f32>
    }) : (tensor<8x4x4x8xf32>, tensor<f32>) -> tensor<8x2x2x8xf32>
    %20 = stablehlo.reshape %19 : (tensor<8x2x2x8xf32>) -> tensor<8x32xf32>
    %21 = stablehlo.dot %20, %arg5, precision = [DEFAULT, DEFAULT] : (tensor<8x32xf32>, tensor<32x10xf32>) -> tensor<8x10xf32>
    %22 = stablehlo.reshape %arg6 : (tensor<10xf32>) -> tensor<1x10xf32>
    %23 = stablehlo.broadcast_in_dim %22, dims = [0, 1] : (tensor<1x10xf32>) -> tensor<1x10xf32>
    %24 = stablehlo.reshape %23 : (tensor<1x10xf32>) -> tensor<10xf32>
    %25 = stablehlo.broadcast_in_dim %24, dims = [1] : (tensor<10xf32>) -> tensor<8x10xf32>
    %26 = stablehlo.add %21, %25 : tensor<8x10xf32>
    return %26 : tensor<8x10xf32>
  }
}
