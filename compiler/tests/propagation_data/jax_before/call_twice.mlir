module @jit_call_twice attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %arg1: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) -> tensor<8x16xf32> {
    %0 = sdy.constant dense<1.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %2 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %3 = sdy.constant dense<1.702000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %5 = stablehlo.multiply %arg0, %4 : tensor<8x16xf32>
    %6 = stablehlo.negate %5 : tensor<8x16xf32>
    %7 = stablehlo.exponential %6 : tensor<8x16xf32>
    %8 = stablehlo.add %7, %1 : tensor<8x16xf32>
    %9 = stablehlo.divide %2, %8 : tensor<8x16xf32>
    %10 = stablehlo.multiply %arg0, %9 : tensor<8x16xf32>
    %11 = sdy.constant dense<1.000000e+00> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %11, dims = [] : (tensor<f32>) -> tensor<16x8xf32>
    %13 = stablehlo.broadcast_in_dim %11, dims = [] : (tensor<f32>) -> tensor<16x8xf32>
    %14 = sdy.constant dense<1.702000e+00> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %14, dims = [] : (tensor<f32>) -> tensor<16x8xf32>
    %16 = stablehlo.multiply %arg1, %15 : tensor<16x8xf32>
    %17 = stablehlo.negate %16 : tensor<16x8xf32>
    %18 = stablehlo.exponential %17 : tensor<16x8xf32>
    %19 = stablehlo.add %18, %12 : tensor<16x8xf32>
    %20 = stablehlo.divide %13, %19 : tensor<16x8xf32>
    %21 = stablehlo.multiply %arg1, %20 : tensor<16x8xf32>
    %22 = stablehlo.transpose %21, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[8,16]{0,1}"} : (tensor<16x8xf32>) -> tensor<8x16xf32>
    %23 = stablehlo.add %10, %22 : tensor<8x16xf32>
    return %23 : tensor<8x16xf32>
  }
}
