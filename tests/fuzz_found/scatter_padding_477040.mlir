module @jit_embedding_grad attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=3, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<32x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg1: tensor<8x6xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) -> (tensor<32x16xf32> {jax.result_info = "result"}) {
    %0:2 = call @_take(%arg0, %arg1) : (tensor<32x16xf32>, tensor<8x6xi32>) -> (tensor<8x6x16xf32>, tensor<8x6x1xi32>)
    %1 = stablehlo.cosine %0#0 : tensor<8x6x16xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x6x16xf32>
    %3 = stablehlo.multiply %2, %1 : tensor<8x6x16xf32>
    %4 = call @_take_0(%0#1, %3) : (tensor<8x6x1xi32>, tensor<8x6x16xf32>) -> tensor<32x16xf32>
    return %4 : tensor<32x16xf32>
  }
  func.func private @_take(%arg0: tensor<32x16xf32>, %arg1: tensor<8x6xi32>) -> (tensor<8x6x16xf32>, tensor<8x6x1xi32>) {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [0, 1] : (tensor<8x6xi32>) -> tensor<8x6x1xi32>
    %1 = "stablehlo.gather"(%arg0, %0) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 16>}> : (tensor<32x16xf32>, tensor<8x6x1xi32>) -> tensor<8x6x16xf32>
    return %1, %0 : tensor<8x6x16xf32>, tensor<8x6x1xi32>
  }
  func.func private @_take_0(%arg0: tensor<8x6x1xi32>, %arg1: tensor<8x6x16xf32>) -> tensor<32x16xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<32x16xf32>
    %c = stablehlo.constant dense<31> : tensor<1xi32>
    %c_0 = stablehlo.constant dense<2147483647> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %2 = stablehlo.minimum %c, %1 : tensor<1xi32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [2] : (tensor<1xi32>) -> tensor<8x6x1xi32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %4 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<8x6x1xi32>
    %5 = stablehlo.clamp %4, %arg0, %3 : tensor<8x6x1xi32>
    %6 = "stablehlo.scatter"(%0, %5, %arg1) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 2>, unique_indices = false}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %7 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %7 : tensor<f32>
    }) : (tensor<32x16xf32>, tensor<8x6x1xi32>, tensor<8x6x16xf32>) -> tensor<32x16xf32>
    return %6 : tensor<32x16xf32>
  }
}
