module @jit_elementwise_unary attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<8x16xf32> {
    %0 = stablehlo.abs %arg0 : tensor<8x16xf32>
    %1 = sdy.constant dense<5.000000e-01> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %3 = stablehlo.add %0, %2 : tensor<8x16xf32>
    %4 = stablehlo.log %3 : tensor<8x16xf32>
    %5 = stablehlo.negate %4 : tensor<8x16xf32>
    %6 = stablehlo.negate %3 : tensor<8x16xf32>
    %7 = stablehlo.exponential %6 : tensor<8x16xf32>
    %8 = stablehlo.add %5, %7 : tensor<8x16xf32>
    %9 = stablehlo.tanh %8 : tensor<8x16xf32>
    %10 = stablehlo.sine %arg0 : tensor<8x16xf32>
    %11 = stablehlo.cosine %arg0 : tensor<8x16xf32>
    %12 = stablehlo.multiply %10, %11 : tensor<8x16xf32>
    %13 = stablehlo.add %9, %12 : tensor<8x16xf32>
    %14 = sdy.constant dense<1.000000e+00> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %14, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %16 = stablehlo.broadcast_in_dim %14, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %17 = stablehlo.negate %arg0 : tensor<8x16xf32>
    %18 = stablehlo.exponential %17 : tensor<8x16xf32>
    %19 = stablehlo.add %18, %15 : tensor<8x16xf32>
    %20 = stablehlo.divide %16, %19 : tensor<8x16xf32>
    %21 = stablehlo.add %13, %20 : tensor<8x16xf32>
    %22 = stablehlo.sqrt %3 : tensor<8x16xf32>
    %23 = stablehlo.add %21, %22 : tensor<8x16xf32>
    %24 = stablehlo.rsqrt %3 : tensor<8x16xf32>
    %25 = stablehlo.subtract %23, %24 : tensor<8x16xf32>
    return %25 : tensor<8x16xf32>
  }
}
