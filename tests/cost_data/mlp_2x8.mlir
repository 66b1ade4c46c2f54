module @jit_step attributes {mhlo.num_partitions = 16 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=8]> {stablehlo.mesh = {axes = [{name = "data", size = 2 : i64}, {name = "model", size = 8 : i64}]}}
  func.func public @main(%arg0: tensor<512x1024xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg1: tensor<1024x4096xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg2: tensor<4096x1024xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg3: tensor<512x1024xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) -> (tensor<512x1024xbf16> {jax.result_info = "result[0]"}, tensor<4096x1024xbf16> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x1024xbf16>, tensor<1024x4096xbf16>) -> tensor<512x4096xbf16>
    %1 = stablehlo.tanh %0 : tensor<512x4096xbf16>
    %2 = stablehlo.dot_general %1, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x4096xbf16>, tensor<4096x1024xbf16>) -> tensor<512x1024xbf16>
    %3 = stablehlo.transpose %1, dims = [1, 0] : (tensor<512x4096xbf16>) -> tensor<4096x512xbf16>
    %4 = stablehlo.dot_general %3, %arg3, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4096x512xbf16>, tensor<512x1024xbf16>) -> tensor<4096x1024xbf16>
    return %2, %4 : tensor<512x1024xbf16>, tensor<4096x1024xbf16>
  }
}

