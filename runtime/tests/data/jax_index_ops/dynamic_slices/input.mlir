module @jit_dynamic_slices attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5x6xf32>, %arg1: tensor<2x4xf32>, %arg2: tensor<i32>, %arg3: tensor<i32>) -> (tensor<3x3xf32> {jax.result_info = "result[0]"}, tensor<2x6xf32> {jax.result_info = "result[1]"}, tensor<5x6xf32> {jax.result_info = "result[2]"}, tensor<5x6xf32> {jax.result_info = "result[3]"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.compare LT, %arg2, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_0 = stablehlo.constant dense<5> : tensor<i32>
    %1 = stablehlo.add %arg2, %c_0 : tensor<i32>
    %2 = stablehlo.select %0, %1, %arg2 : tensor<i1>, tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %3 = stablehlo.compare LT, %arg3, %c_1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_2 = stablehlo.constant dense<6> : tensor<i32>
    %4 = stablehlo.add %arg3, %c_2 : tensor<i32>
    %5 = stablehlo.select %3, %4, %arg3 : tensor<i1>, tensor<i32>
    %6 = stablehlo.dynamic_slice %arg0, %2, %5, sizes = [3, 3] : (tensor<5x6xf32>, tensor<i32>, tensor<i32>) -> tensor<3x3xf32>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %7 = stablehlo.compare LT, %arg3, %c_3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_4 = stablehlo.constant dense<5> : tensor<i32>
    %8 = stablehlo.add %arg3, %c_4 : tensor<i32>
    %9 = stablehlo.select %7, %8, %arg3 : tensor<i1>, tensor<i32>
    %c_5 = stablehlo.constant dense<0> : tensor<i32>
    %10 = stablehlo.compare LT, %arg2, %c_5, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_6 = stablehlo.constant dense<6> : tensor<i32>
    %11 = stablehlo.add %arg2, %c_6 : tensor<i32>
    %12 = stablehlo.select %10, %11, %arg2 : tensor<i1>, tensor<i32>
    %13 = stablehlo.dynamic_slice %arg0, %9, %12, sizes = [2, 6] : (tensor<5x6xf32>, tensor<i32>, tensor<i32>) -> tensor<2x6xf32>
    %c_7 = stablehlo.constant dense<0> : tensor<i32>
    %14 = stablehlo.compare LT, %arg3, %c_7, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_8 = stablehlo.constant dense<5> : tensor<i32>
    %15 = stablehlo.add %arg3, %c_8 : tensor<i32>
    %16 = stablehlo.select %14, %15, %arg3 : tensor<i1>, tensor<i32>
    %c_9 = stablehlo.constant dense<0> : tensor<i32>
    %17 = stablehlo.compare LT, %arg3, %c_9, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_10 = stablehlo.constant dense<6> : tensor<i32>
    %18 = stablehlo.add %arg3, %c_10 : tensor<i32>
    %19 = stablehlo.select %17, %18, %arg3 : tensor<i1>, tensor<i32>
    %20 = stablehlo.dynamic_update_slice %arg0, %arg1, %16, %19 : (tensor<5x6xf32>, tensor<2x4xf32>, tensor<i32>, tensor<i32>) -> tensor<5x6xf32>
    %c_11 = stablehlo.constant dense<0> : tensor<i32>
    %21 = stablehlo.compare LT, %arg2, %c_11, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_12 = stablehlo.constant dense<5> : tensor<i32>
    %22 = stablehlo.add %arg2, %c_12 : tensor<i32>
    %23 = stablehlo.select %21, %22, %arg2 : tensor<i1>, tensor<i32>
    %c_13 = stablehlo.constant dense<0> : tensor<i32>
    %24 = stablehlo.compare LT, %arg2, %c_13, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_14 = stablehlo.constant dense<6> : tensor<i32>
    %25 = stablehlo.add %arg2, %c_14 : tensor<i32>
    %26 = stablehlo.select %24, %25, %arg2 : tensor<i1>, tensor<i32>
    %27 = stablehlo.dynamic_update_slice %arg0, %arg1, %23, %26 : (tensor<5x6xf32>, tensor<2x4xf32>, tensor<i32>, tensor<i32>) -> tensor<5x6xf32>
    return %6, %13, %20, %27 : tensor<3x3xf32>, tensor<2x6xf32>, tensor<5x6xf32>, tensor<5x6xf32>
  }
}
