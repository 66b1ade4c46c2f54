module @jit_elementwise_unary attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<8x16xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.abs %arg0 : tensor<8x16xf32>
    %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %2 = stablehlo.add %0, %1 : tensor<8x16xf32>
    %3 = stablehlo.log %2 : tensor<8x16xf32>
    %4 = stablehlo.negate %3 : tensor<8x16xf32>
    %5 = stablehlo.negate %2 : tensor<8x16xf32>
    %6 = stablehlo.exponential %5 : tensor<8x16xf32>
    %7 = stablehlo.add %4, %6 : tensor<8x16xf32>
    %8 = stablehlo.tanh %7 : tensor<nential %13 : tensor<8x16xf32>
    %cst_0 = stablehlo.constan8x16xf32>
    %9 = stablehlo.sine %arg0 : tensor<8x16xf32>
    %10 = stablehlo.cosine %arg0 : tensor<8x16xf32>
    %11 = stablehlo.multiply %9, %10 : tensor<8x16xf32>
    %12 = stablehlo.add %8, %11 : tensor<8x16xf32>
    %13 = stablehlo.negate %arg0 : tensor<8x16xf32>
    %14 = stablehlo.exponential %13 : tensor<8x16xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %16 = stablehlo.add %15, %14 : tensor<8x16xf32>
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %17 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %18 = stablehlo.divide %17, %16 : tensor<8x16xf32>
    %19 = stablehlo.add %12, %18 : tensor<8x16xf32>
    %20 = stablehlo.sqrt %2 : tensor<8x16xf32>
    %21 = stablehlo.add %19, %20 : tensor<8x16xf32>
    %22 = stablehlo.rsqrt %2 : tensor<8x16xf32>
    %23 = stablehlo.subtract %21, %22 : tensor<8x16xf32>
    return %23 : tensor<8x16xf32>
  }
}
