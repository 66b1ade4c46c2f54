module @jit_scatter_int_add attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<20xi32>) -> (tensor<10xi32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<10xi32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<20xi32>
    %2 = stablehlo.compare LT, %arg0, %1, SIGNED : (tensor<20xi32>, tensor<20xi32>) -> tensor<20xi1>
    %c_1 = stablehlo.constant dense<10> : tensor<i32>
    %3 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<20xi32>
    %4 = stablehlo.add %arg0, %3 : tensor<20xi32>
    %5 = stablehlo.select %2, %4, %arg0 : tensor<20xi1>, tensor<20xi32>
    %6 = stablehlo.broadcast_in_dim %5, dims = [0] : (tensor<20xi32>) -> tensor<20x1xi32>
    %c_2 = stablehlo.constant dense<1> : tensor<i32>
    %7 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<20xi32>
    %8 = "stablehlo.scatter"(%0, %6, %7) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg1: tensor<i32>, %arg2: tensor<i32>):
      %9 = stablehlo.add %arg1, %arg2 : tensor<i32>
      stablehlo.return %9 : tensor<i32>
    }) : (tensor<10xi32>, tensor<20x1xi32>, tensor<20xi32>) -> tensor<10xi32>
    return %8 : tensor<10xi32>
  }
}
