module @jit_dynamic_slices attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}, %arg1: tensor<3x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg2: tensor<i32> {sdy.sharding = #sdy.sharding<@mesh, []>}, %arg3: tensor<i32> {sdy.sharding = #sdy.sharding<@mesh, []>}) -> (tensor<4x16xf32> {jax.result_info = "result[0]"}, tensor<16x16xf32> {jax.result_info = "result[1]"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.compare LT, %arg2, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_0 = stablehlo.constant dense<16> : tensor<i32>
    %1 = stablehlo.add %arg2, %c_0 : tensor<i32>
    %2 = stablehlo.select %0, %1, %arg2 : tensor<i1>, tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %3 = stablehlo.dynamic_slice %arg0, %2, %c_1, sizes = [4, 16] : (tensor<16x16xf32>, tensor<i32>, tensor<i32>) -> tensor<ehlo.add %arg2, %c_0 : tensor<i32>
    %2 = stablehlo.select %0, %1, %arg2 : 4x16xf32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %4 = stablehlo.compare LT, %arg3, %c_2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_3 = stablehlo.constant dense<16> : tensor<i32>
    %5 = stablehlo.add %arg3, %c_3 : tensor<i32>
    %6 = stablehlo.select %4, %5, %arg3 : tensor<i1>, tensor<i32>
    %c_4 = stablehlo.constant dense<0> : tensor<i32>
    %7 = stablehlo.dynamic_update_slice %arg0, %arg1, %6, %c_4 : (tensor<16x16xf32>, tensor<3x16xf32>, tensor<i32>, tensor<i32>) -> tensor<16x16xf32>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %8 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x16xf32>
    %9 = stablehlo.multiply %3, %8 : tensor<4x16xf32>
    return %9, %7 : tensor<4x16xf32>, tensor<16x16xf32>
  }
}
