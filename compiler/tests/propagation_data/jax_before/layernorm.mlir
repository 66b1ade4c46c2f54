module @jit_layernorm attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg1: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}]>}, %arg2: tensor<32xf32>) -> tensor<16x32xf32> {
    %0 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%arg0 init: %0) applies stablehlo.add across dimensions = [1] : (tensor<16x32xf32>, tensor<f32>) -> tensor<16xf32>
    %2 = stablehlo.reshape %1 : (tensor<16xf32>) -> tensor<16x1xf32>
    %3 = sdy.constant dense<3.200000e+01> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<f32>) -> tensor<16x1xf32>
    %5 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<f32>) -> tensor<16x1xf32>
    %6 = stablehlo.divide %2, %4 : tensor<16x1xf32>
    %7 = stablehlo.broadcast_in_dim %6, dims = [0, 1] : (tensor<16x1xf32>) -> tensor<16x1xf32>
    %8 = stablehlo.reshape %7 : (tensor<16x1xf32>) -> tensor<16xf32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0] : (tensor<16xf32>) -> tensor<16x32xf32>
    %10 = stablehlo.subtract %arg0, %9 : tensor<16x32xf32>
    %11 = stablehlo.broadcast_in_dim %6, dims = [0, 1] : (tensor<16x1xf32>) -> tensor<16x1xf32>
    %12 = stablehlo.reshape %11 : (tensor<16x1xf32>) -> tensor<16xf32>
    %13 = stablehlo.broadcast_in_dim %12, dims = [0] : (tensor<16xf32>) -> tensor<16x32xf32>
    %14 = stablehlo.subtract %arg0, %13 : tensor<16x32xf32>
    %15 = stablehlo.multiply %14, %14 : tensor<16x32xf32>
    %16 = stablehlo.reduce(%15 init: %0) applies stablehlo.add across dimensions = [1] : (tensor<16x32xf32>, tensor<f32>) -> tensor<16xf32>
    %17 = stablehlo.reshape %16 : (tensor<16xf32>) -> tensor<16x1xf32>
    %18 = stablehlo.divide %17, %5 : tensor<16x1xf32>
    %19 = sdy.constant dense<9.99999974E-6> : tensor<f32>
    %20 = stablehlo.broadcast_in_dim %19, dims = [] : (tensor<f32>) -> tensor<16x1xf32>
    %21 = stablehlo.add %18, %20 : tensor<16x1xf32>
    %22 = stablehlo.rsqrt %21 : tensor<16x1xf32>
    %23 = stablehlo.broadcast_in_dim %22, dims = [0, 1] : (tensor<16x1xf32>) -> tensor<16x1xf32>
    %24 = stablehlo.reshape %23 : (tensor<16x1xf32>) -> tensor<16xf32>
    %25 = stablehlo.broadcast_in_dim %24, dims = [0] : (tensor<16xf32>) -> tensor<16x32xf32>
    %26 = stablehlo.multiply %10, %25 : tensor<16x32xf32>
    %27 = stablehlo.reshape %arg1 : (tensor<32xf32>) -> tensor<1x32xf32>
    %28 = stablehlo.broadcast_in_dim %27, dims = [0, 1] : (tensor<1x32xf32>) -> tensor<1x32xf32>
    %29 = stablehlo.reshape %28 : (tensor<1x32xf32>) -> tensor<32xf32>
    %30 = stablehlo.broadcast_in_dim %29, dims = [1] : (tensor<32xf32>) -> tensor<16x32xf32>
    %31 = stablehlo.multiply %26, %30 : tensor<16x32xf32>
    %32 = stablehlo.reshape %arg2 : (tensor<32xf32>) -> tensor<1x32xf32>
    %33 = stablehlo.broadcast_in_dim %32, dims = [0, 1] : (tensor<1x32xf32>) -> tensor<1x32xf32>
    %34 = stablehlo.reshape %33 : (tensor<1x32xf32>) -> tensor<32xf32>
    %35 = stablehlo.broadcast_in_dim %34, dims = [1] : (tensor<32xf32>) -> tensor<16x32xf32>
    %36 = stablehlo.add %31, %35 : tensor<16x32xf32>
    return %36 : tensor<16x32xf32>
  }
}
