module @jit_shard_alike attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@main, [{"x"}, {}]>}, %arg1: tensor<8x16xf32>) -> (tensor<8x16xf3 %0 = stablehlo.sine %arg0 : tensor<8x16xf32>
    %1 = stablehlo.cos2> {jax.result_info = "result"}) {
    %0 = stablehlo.sine %arg0 : tensor<8x16xf32>
    %1 = stablehlo.cosine %arg1 : tensor<8x16xf32>
    sdy.sharding_group %0 group_id=0 : tensor<8x16xf32>
    sdy.sharding_group %1 group_id=0 : tensor<8x16xf32>
    %2 = stablehlo.multiply %0, %1 : tensor<8x16xf32>
    return %2 : tensor<8x16xf32>
  }
}
