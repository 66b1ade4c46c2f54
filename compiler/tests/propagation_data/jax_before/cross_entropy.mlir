module @jit_cross_entropy attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<16x10xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg1: tensor<16xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>}) -> tensor<f32> {
    %0 = stablehlo.reshape %arg1 : (tensor<16xi32>) -> tensor<16x1xi32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<16x1xi32>) -> tensor<16x1xi32>
    %2 = stablehlo.reshape %1 : (tensor<16x1xi32>) -> tensor<16xi32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0] : (tensor<16xi32>) -> tensor<16x10xi32>
    %4 = stablehlo.iota dim = 0 : tensor<10xi32>
    %5 = stablehlo.reshape %4 : (tensor<10xi32>) -> tensor<1x10xi32>
    %6 = stablehlo.broadcast_in_dim %5, dims = [0, 1] : (tensor<1x10xi32>) -> tensor<1x10xi32>
    %7 = stablehlo.reshape %6 : (tensor<1x10xi32>) -> tensor<10xi32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [1] : (tensor<10xi32>) -> tensor<16x10xi32>
    %9 = stablehlo.compare EQ, %3, %8 : (tensor<16x10xi32>, tensor<16x10xi32>) -> tensor<16x10xi1>
    %10 = stablehlo.convert %9 : (tensor<16x10xi1>) -> tensor<16x10xf32>
    %11 = sdy.constant dense<0xFF800000> : tensor<f32>
    %12 = stablehlo.reduce(%arg0 init: %11) applies stablehlo.maximum across dimensions = [1] : (tensor<16x10xf32>, tensor<f32>) -> tensor<16xf32>
    %13 = sdy.constant dense<0xFF800000> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %13, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %15 = stablehlo.maximum %12, %14 : tensor<16xf32>
    %16 = stablehlo.reshape %15 : (tensor<16xf32>) -> tensor<16x1xf32>
    %17 = stablehlo.broadcast_in_dim %16, dims = [0, 1] : (tensor<16x1xf32>) -> tensor<16x1xf32>
    %18 = stablehlo.reshape %17 : (tensor<16x1xf32>) -> tensor<16xf32>
    %19 = stablehlo.broadcast_in_dim %18, dims = [0] : (tensor<16xf32>) -> tensor<16x10xf32>
    %20 = stablehlo.subtract %arg0, %19 : tensor<16x10xf32>
    %21 = stablehlo.exponential %20 : tensor<16x10xf32>
    %22 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %23 = stablehlo.reduce(%21 init: %22) applies stablehlo.add across dimensions = [1] : (tensor<16x10xf32>, tensor<f32>) -> tensor<16xf32>
    %24 = stablehlo.reshape %23 : (tensor<16xf32>) -> tensor<16x1xf32>
    %25 = stablehlo.log %24 : tensor<16x1xf32>
    %26 = stablehlo.broadcast_in_dim %25, dims = [0, 1] : (tensor<16x1xf32>) -> tensor<16x1xf32>
    %27 = stablehlo.reshape %26 : (tensor<16x1xf32>) -> tensor<16xf32>
    %28 = stablehlo.broadcast_in_dim %27, dims = [0] : (tensor<16xf32>) -> tensor<16x10xf32>
    %29 = stablehlo.subtract %20, %28 : tensor<16x10xf32>
    %30 = stablehlo.multiply %10, %29 : tensor<16x10xf32>
    %31 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %32 = stablehlo.reduce(%30 init: %31) applies stablehlo.add across dimensions = [1] : (tensor<16x10xf32>, tensor<f32>) -> tensor<16xf32>
    %33 = stablehlo.reduce(%32 init: %31) applies stablehlo.add across dimensions = [0] : (tensor<16xf32>, tensor<f32>) -> tensor<f32>
    %34 = sdy.constant dense<1.600000e+01> : tensor<f32>
    %35 = stablehlo.divide %33, %34 : tensor<f32>
    %36 = stablehlo.negate %35 : tensor<f32>
    return %36 : tensor<f32>
  }
}
