module @jit_attention_projections attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<4x8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}, {}]>}, %arg1: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg2: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg3: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg4: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}) -> tensor<4x8x32xf32> {
    %0 = stablehlo.dot_general %arg0, %arg3, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8x32xf32>, tensor<32x32xf32>) -> tensor<4x8x32xf32>
    %1 = stablehlo.reshape %0 : (tensor<4x8x32xf32>) -> tensor<4x8x4x8xf32>
    %2 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8x32xf32>, tensor<32x32xf32>) -> tensor<4x8x32xf32>
    %3 = stablehlo.reshape %2 : (tensor<4x8x32xf32>) -> tensor<4x8x4x8xf32>
    %4 = stablehlo.dot_general %arg0, %arg2, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8x32xf32>, tensor<32x32xf32>) -> tensor<4x8x32xf32>
    %5 = stablehlo.reshape %4 : (tensor<4x8x32xf32>) -> tensor<4x8x4x8xf32>
    %6 = stablehlo.dot_general %3, %5, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<4x8x4x8xf32>, tensor<4x8x4x8xf32>) -> tensor<4x4x8x8xf32>
    %7 = sdy.constant dense<2.82842708> : tensor<f32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [] : (tensor<f32>) -> tensor<4x4x8x8xf32>
    %9 = stablehlo.divide %6, %8 : tensor<4x4x8x8xf32>
    %10 = sdy.constant dense<0xFF800000> : tensor<f32>
    %11 = stablehlo.reduce(%9 init: %10) applies stablehlo.maximum across dimensions = [3] : (tensor<4x4x8x8xf32>, tensor<f32>) -> tensor<4x4x8xf32>
    %12 = sdy.constant dense<0xFF800000> : tensor<f32>
    %13 = stablehlo.broadcast_in_dim %12, dims = [] : (tensor<f32>) -> tensor<4x4x8xf32>
    %14 = stablehlo.maximum %11, %13 : tensor<4x4x8xf32>
    %15 = stablehlo.reshape %14 : (tensor<4x4x8xf32>) -> tensor<4x4x8x1xf32>
    %16 = stablehlo.broadcast_in_dim %15, dims = [0, 1, 2, 3] : (tensor<4x4x8x1xf32>) -> tensor<4x4x8x1xf32>
    %17 = stablehlo.reshape %16 : (tensor<4x4x8x1xf32>) -> tensor<4x4x8xf32>
    %18 = stablehlo.broadcast_in_dim %17, dims = [0, 1, 2] : (tensor<4x4x8xf32>) -> tensor<4x4x8x8xf32>
    %19 = stablehlo.subtract %9, %18 : tensor<4x4x8x8xf32>
    %20 = stablehlo.exponential %19 : tensor<4x4x8x8xf32>
    %21 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %22 = stablehlo.reduce(%20 init: %21) applies stablehlo.add across dimensions = [3] : (tensor<4x4x8x8xf32>, tensor<f32>) -> tensor<4x4x8xf32>
    %23 = stablehlo.reshape %22 : (tensor<4x4x8xf32>) -> tensor<4x4x8x1xf32>
    %24 = stablehlo.broadcast_in_dim %23, dims = [0, 1, 2, 3] : (tensor<4x4x8x1xf32>) -> tensor<4x4x8x1xf32>
    %25 = stablehlo.reshape %24 : (tensor<4x4x8x1xf32>) -> tensor<4x4x8xf32>
    %26 = stablehlo.broadcast_in_dim %25, dims = [0, 1, 2] : (tensor<4x4x8xf32>) -> tensor<4x4x8x8xf32>
    %27 = stablehlo.divide %20, %26 : tensor<4x4x8x8xf32>
    %28 = stablehlo.dot_general %1, %27, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3], precision = [DEFAULT, DEFAULT] : (tensor<4x8x4x8xf32>, tensor<4x4x8x8xf32>) -> tensor<4x4x8x8xf32>
    %29 = stablehlo.transpose %28, dims = [0, 3, 1, 2] {result_layout = dense<[1, 3, 2, 0]> : tensor<4xindex>, xla_shape = "f32[4,8,4,8]{1,3,2,0}"} : (tensor<4x4x8x8xf32>) -> tensor<4x8x4x8xf32>
    %30 = stablehlo.reshape %29 : (tensor<4x8x4x8xf32>) -> tensor<4x8x32xf32>
    %31 = stablehlo.dot_general %30, %arg4, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8x32xf32>, tensor<32x32xf32>) -> tensor<4x8x32xf32>
    return %31 : tensor<4x8x32xf32>
  }
}
