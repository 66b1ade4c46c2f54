module @jit_shard_map_nested attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=999999999998, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<64x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<16x16xf32> {jax.result_info = "result"}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x", ?}, {?}]>] out_shardings=[<@mesh, [{?}, {?}]>] manual_axes={"x"} (%arg1: tensor<16x32xf32>) {
      %1 = sdy.manual_computation(%arg1) in_shardings=[<@mesh, [{?}, {"y", ?}]>] out_shardings=[<@mesh, [{?}, {?}]>] manual_axes={"y"} (%arg2: tensor<16x16xf32>) {
        %3 = stablehlo.tanh %arg2 : tensor<16x16xf32>
        %4 = "stablehlo.all_reduce"(%3) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1], [2, 3], [4, 5], [6, 7]]> : tensor<4x2xi64>, use_global_device_ids}> ({
        ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
          %5 = stablehlo.add %arg3, %arg4 : tensor<f32>
          stablehlo.return %5 : tensor<f32>
        }) : (tensor<16x16xf32>) -> tensor<16x16xf32>
        sdy.return %4 : tensor<16x16xf32>
      } : (tensor<16x32xf32>) -> tensor<16x16xf32>
      %2 = "stablehlo.all_reduce"(%1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>, use_global_device_ids}> ({
      ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
        %3 = stablehlo.add %arg2, %arg3 : tensor<f32>
        %4 = sdy.sharding_constraint %3 <@mesh, []> : tensor<f32>
        stablehlo.return %4 : tensor<f32>
      }) : (tensor<16x16xf32>) -> tensor<16x16xf32>
      sdy.return %2 : tensor<16x16xf32>
    } : (tensor<64x32xf32>) -> tensor<16x16xf32>
    return %0 : tensor<16x16xf32>
  }
}
