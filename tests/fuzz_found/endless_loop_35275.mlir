module @jit_scan_stack_sharded attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg1: tensor<4x32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}, {}]>}) -> (tensor<16x32xf32> {jax.result_info = "result[0]"}, tensor<4xf32> {jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1:4 = stablehlo.while(%iterArg = %arg1, %iterArg_0 = %c, %iterArg_1 = %arg0, %iterArg_2 = %0) : tensor<4x32x32xf32>, tensor<i32>, tensor<16x32xf32>, tensor<4xf32>
    cond {
      %c_3 = stablehlo.constant dense<4> : tensor<i32>
      %2 = stablehlo.compare LT, %iterArg_0, %c_3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %2 : tensor<i1>
    } do {
      %2 = func.call @dynamic_index_in_dim(%iterArg, %iterArg_0) : (tensor<4x32x32xf32>, tensor<i32>) -> tensor<32x32xf32>
      %3:2 = func.call @closed_call(%iterArg_1, %2) : (tensor<16x32xf32>, tensor<32x32xf32>) -> (tensor<16x32xf32>, tensor<f32>)
      %4 = func.call @dynamic_update_index_in_dim(%iterArg_2, %3#1, %iterArg_0) : (tensor<4xf32>, tensor<f32>, tensor<i32>) -> tensor<4xf32>
      %c_3 = stablehlo.constant dense<1> : tensor<i32>
      %5 = stablehlo.dot_general %iterArg_0, %c_3 : tensor<i32>
      stablehlo.return %iterArg, %5, %3#0, %4 : tensor<4x32x32xf32>, tensor<i32>, tensor<16x32xf32>, tensor<4xf32>
    }
    return %1#2, %1#3 : tensor<16x32xf32>, tensor<4xf32>
  }
  func.func private @dynamic_index_in_dim(%arg0: tensor<4x32x32xf32>, %arg1: tensor<i32>) -> tensor<32x32xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, sizes = [1, 32, 32] : (tensor<4x32x32xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x32x32xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x32x32xf32>) -> tensor<32x32xf32>
    return %1 : tensor<32x32xf32>
  }
  func.func private @closed_call(%arg0: tensor<16x32xf32>, %arg1: tensor<32x32xf32>) -> (tensor<16x32xf32>, tensor<f32>) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
    %1 = stablehlo.tanh %0 : tensor<16x32xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<16x32xf32>, tensor<f32>) -> tensor<f32>
    return %1, %2 : tensor<16x32xf32>, tensor<f32>
  }
  func.func private @dynamic_update_index_in_dim(%arg0: tensor<4xf32>, %arg1: tensor<f32>, %arg2: tensor<i32>) -> tensor<4xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2 : (tensor<4xf32>, tensor<1xf32>, tensor<i32>) -> tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}
