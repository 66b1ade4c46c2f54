module @jit_attention attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : f32}]}}
  func.func public @main(%arg0: tensor<4x4x16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}, {}, {}]>}, %arg1: tensor<4x4x16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}, {}, {}]>}, %arg2: tensor<4x4x16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}, {}, {}]>}) -> (tensor<4x4x16x8xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<4x4x16x8xf tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] 32>, tensor<4x4x16x8xf32>) -> tensor<4x4x16x16xf32>
    %cst = stablehlo.constant dense<2.82842708> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x4x16x16xf32>
    %2 = stablehlo.divide %0, %1 : tensor<4x4x16x16xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %3 = stablehlo.reduce(%2 init: %cst_0) applies stablehlo.maximum across dimensions = [3] : (tensor<4x4x16x16xf32>, tensor<f32>) -> tensor<4x4x16xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2] : (tensor<4x4x16xf32>) -> tensor<4x4x16x1xf32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1, 2, 3] : (tensor<4x4x16x1xf32>) -> tensor<4x4x16x16xf32>
    %6 = stablehlo.subtract %2, %5 : tensor<4x4x16x16xf32>
    %7 = stablehlo.exponential %6 : tensor<4x4x16x16xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %8 = stablehlo.reduce(%7 init: %cst_1) applies stablehlo.add across dimensions = [3] : (tensor<4x4x16x16xf32>, tensor<f32>) -> tensor<4x4x16xf32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1, 2] : (tensor<4x4x16xf32>) -> tensor<4x4x16x1xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0, 1, 2, 3] : (tensor<4x4x16x1xf32>) -> tensor<4x4x16x16xf32>
    %11 = stablehlo.divide %7, %10 : tensor<4x4x16x16xf32>
    %12 = stablehlo.dot_general %11, %arg2, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<4x4x16x16xf32>, tensor<4x4x16x8xf32>) -> tensor<4x4x16x8xf32>
    return %12 : tensor<4x4x16x8xf32>
  }
}
