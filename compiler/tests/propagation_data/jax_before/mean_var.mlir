module @jit_mean_var attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}) -> (tensor<32xf32>, tensor<16xf32>, tensor<f32>) {
    %0 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%arg0 init: %0) applies stablehlo.add across dimensions = [0] : (tensor<16x32xf32>, tensor<f32>) -> tensor<32xf32>
    %2 = sdy.constant dense<1.600000e+01> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %4 = stablehlo.divide %1, %3 : tensor<32xf32>
    %5 = sdy.constant dense<3.200000e+01> : tensor<f32>
    %6 = sdy.constant dense<0> : tensor<i32>
    %7 = stablehlo.convert %6 : (tensor<i32>) -> tensor<f32>
    %8 = stablehlo.subtract %5, %7 : tensor<f32>
    %9 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %10 = stablehlo.compare GT, %8, %9 : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %11 = stablehlo.broadcast_in_dim %10, dims = [] : (tensor<i1>) -> tensor<16xi1>
    %12 = stablehlo.reduce(%arg0 init: %9) applies stablehlo.add across dimensions = [1] : (tensor<16x32xf32>, tensor<f32>) -> tensor<16xf32>
    %13 = stablehlo.reshape %12 : (tensor<16xf32>) -> tensor<16x1xf32>
    %14 = sdy.constant dense<3.200000e+01> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %14, dims = [] : (tensor<f32>) -> tensor<16x1xf32>
    %16 = stablehlo.divide %13, %15 : tensor<16x1xf32>
    %17 = stablehlo.broadcast_in_dim %16, dims = [0, 1] : (tensor<16x1xf32>) -> tensor<16x1xf32>
    %18 = stablehlo.reshape %17 : (tensor<16x1xf32>) -> tensor<16xf32>
    %19 = stablehlo.broadcast_in_dim %18, dims = [0] : (tensor<16xf32>) -> tensor<16x32xf32>
    %20 = stablehlo.subtract %arg0, %19 : tensor<16x32xf32>
    %21 = stablehlo.multiply %20, %20 : tensor<16x32xf32>
    %22 = stablehlo.reduce(%21 init: %9) applies stablehlo.add across dimensions = [1] : (tensor<16x32xf32>, tensor<f32>) -> tensor<16xf32>
    %23 = stablehlo.broadcast_in_dim %8, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %24 = stablehlo.divide %22, %23 : tensor<16xf32>
    %25 = sdy.constant dense<0x7FC00000> : tensor<f32>
    %26 = stablehlo.broadcast_in_dim %25, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %27 = stablehlo.select %11, %24, %26 : tensor<16xi1>, tensor<16xf32>
    %28 = stablehlo.reduce(%arg0 init: %0) applies stablehlo.add across dimensions = [0, 1] : (tensor<16x32xf32>, tensor<f32>) -> tensor<f32>
    %29 = sdy.constant dense<5.120000e+02> : tensor<f32>
    %30 = stablehlo.divide %28, %29 : tensor<f32>
    return %4, %27, %30 : tensor<32xf32>, tensor<16xf32>, tensor<f32>
  }
}
