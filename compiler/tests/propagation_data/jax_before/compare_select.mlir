module @jit_compare_select attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x16xf32> {
    %0 = sdy.constant dense<1.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %2 = sdy.constant dense<-1.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %4 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %6 = stablehlo.compare LT, %arg1, %5 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xi1>
    %7 = stablehlo.compare GT, %arg0, %arg1 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xi1>
    %8 = sdy.constant dense<2.000000e+00> : tensor<f32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %10 = stablehlo.multiply %arg0, %9 : tensor<8x16xf32>
    %11 = sdy.constant dense<1.000000e+00> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %11, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %13 = stablehlo.subtract %arg1, %12 : tensor<8x16xf32>
    %14 = stablehlo.select %7, %10, %13 : tensor<8x16xi1>, tensor<8x16xf32>
    %15 = stablehlo.negate %14 : tensor<8x16xf32>
    %16 = stablehlo.compare EQ, %arg0, %arg0 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xi1>
    %17 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %18 = stablehlo.broadcast_in_dim %17, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %19 = stablehlo.select %16, %14, %18 : tensor<8x16xi1>, tensor<8x16xf32>
    %20 = stablehlo.select %6, %15, %19 : tensor<8x16xi1>, tensor<8x16xf32>
    %21 = stablehlo.maximum %3, %20 : tensor<8x16xf32>
    %22 = stablehlo.minimum %1, %21 : tensor<8x16xf32>
    return %22 : tensor<8x16xf32>
  }
}
