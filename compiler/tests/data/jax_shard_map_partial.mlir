// JAX 0.10.2: shard_map over "x" only (axis_names={"x"}) inside an automatically sharded program;
// lax.axis_index becomes a nested manual computation over "y".
module @jit_partial attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<64x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<64x64xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<64x16xf32>) -> tensor<16x64xf32>
    %1 = stablehlo.dot_general %arg0, %0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x16xf32>, tensor<16x64xf32>) -> tensor<64x64xf32>
    %2 = sdy.manual_computation(%1) in_shardings=[<@mesh, [{"x", ?}, {?}]>] out_shardings=[<@mesh, [{"x", ?}, {?}]>] manual_axes={"x"} (%arg1: tensor<16x64xf32>) {
      %3 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>, use_global_device_ids}> ({
      ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
        %11 = stablehlo.add %arg2, %arg3 : tensor<f32>
        %12 = sdy.sharding_constraint %11 <@mesh, []> : tensor<f32>
        stablehlo.return %12 : tensor<f32>
      }) : (tensor<16x64xf32>) -> tensor<16x64xf32>
      %4 = sdy.manual_computation() in_shardings=[] out_shardings=[<@mesh, []>] manual_axes={"y"} () {
        %c = stablehlo.constant dense<2> : tensor<ui32>
        %c_0 = stablehlo.constant dense<4> : tensor<ui32>
        %11 = stablehlo.partition_id : tensor<ui32>
        %12 = stablehlo.divide %11, %c : tensor<ui32>
        %13 = stablehlo.remainder %12, %c_0 : tensor<ui32>
        %14 = stablehlo.convert %13 : (tensor<ui32>) -> tensor<i32>
        sdy.return %14 : tensor<i32>
      } : () -> tensor<i32>
      %5 = stablehlo.convert %4 : (tensor<i32>) -> tensor<f32>
      %6 = sdy.sharding_constraint %5 <@mesh, []> : tensor<f32>
      %7 = stablehlo.broadcast_in_dim %6, dims = [] : (tensor<f32>) -> tensor<16x64xf32>
      %8 = sdy.sharding_constraint %7 <@mesh, [{?}, {?}]> : tensor<16x64xf32>
      %9 = stablehlo.multiply %3, %8 : tensor<16x64xf32>
      %10 = sdy.sharding_constraint %9 <@mesh, [{?}, {?}]> : tensor<16x64xf32>
      sdy.return %10 : tensor<16x64xf32>
    } : (tensor<64x64xf32>) -> tensor<64x64xf32>
    return %2 : tensor<64x64xf32>
  }
}
