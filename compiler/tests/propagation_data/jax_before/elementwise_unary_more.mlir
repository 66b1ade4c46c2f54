module @jit_elementwise_unary_more attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}, {name = "y", size = 2 : i64}, {name = "z", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<8x8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y", "z"}, {}]>}) -> tensor<8x8x4xf32> {
    %0 = stablehlo.exponential_minus_one %arg0 : tensor<8x8x4xf32>
    %1 = stablehlo.abs %arg0 : tensor<8x8x4xf32>
    %2 = stablehlo.log_plus_one %1 : tensor<8x8x4xf32>
    %3 = stablehlo.add %0, %2 : tensor<8x8x4xf32>
    %4 = sdy.constant dense<4.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [] : (tensor<f32>) -> tensor<8x8x4xf32>
    %6 = stablehlo.broadcast_in_dim %4, dims = [] : (tensor<f32>) -> tensor<8x8x4xf32>
    %7 = stablehlo.multiply %arg0, %5 : tensor<8x8x4xf32>
    %8 = stablehlo.floor %7 : tensor<8x8x4xf32>
    %9 = sdy.constant dense<2.500000e-01> : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [] : (tensor<f32>) -> tensor<8x8x4xf32>
    %11 = stablehlo.broadcast_in_dim %9, dims = [] : (tensor<f32>) -> tensor<8x8x4xf32>
    %12 = stablehlo.multiply %8, %10 : tensor<8x8x4xf32>
    %13 = stablehlo.add %3, %12 : tensor<8x8x4xf32>
    %14 = stablehlo.multiply %arg0, %6 : tensor<8x8x4xf32>
    %15 = stablehlo.ceil %14 : tensor<8x8x4xf32>
    %16 = stablehlo.multiply %15, %11 : tensor<8x8x4xf32>
    %17 = stablehlo.add %13, %16 : tensor<8x8x4xf32>
    %18 = stablehlo.sign %arg0 : tensor<8x8x4xf32>
    %19 = stablehlo.multiply %17, %18 : tensor<8x8x4xf32>
    %20 = stablehlo.multiply %arg0, %arg0 : tensor<8x8x4xf32>
    %21 = stablehlo.add %19, %20 : tensor<8x8x4xf32>
    return %21 : tensor<8x8x4xf32>
  }
}
