module @jit_dynamic_slices attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}, %arg1: tensor<3x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg2: tensor<i32> {sdy.sharding = #sdy.sharding<@mesh, []>}, %arg3: tensor<i32> {sdy.sharding = #sdy.sharding<@mesh, []>}) -> (tensor<4x16xf32>, tensor<16x16xf32>) {
    %0 = sdy.constant dense<0> : tensor<i32>
    %1 = stablehlo.compare LT, %arg2, %0 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %2 = sdy.constant dense<16> : tensor<i32>
    %3 = stablehlo.add %arg2, %2 : tensor<i32>
    %4 = stablehlo.select %1, %3, %arg2 : tensor<i1>, tensor<i32>
    %5 = stablehlo.dynamic_slice %arg0, %4, %0, sizes = [4, 16] : (tensor<16x16xf32>, tensor<i32>, tensor<i32>) -> tensor<4x16xf32>
    %6 = sdy.constant dense<2.000000e+00> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %6, dims = [] : (tensor<f32>) -> tensor<4x16xf32>
    %8 = stablehlo.multiply %5, %7 : tensor<4x16xf32>
    %9 = stablehlo.compare LT, %arg3, %0 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %10 = stablehlo.add %arg3, %2 : tensor<i32>
    %11 = stablehlo.select %9, %10, %arg3 : tensor<i1>, tensor<i32>
    %12 = stablehlo.dynamic_update_slice %arg0, %arg1, %11, %0 : (tensor<16x16xf32>, tensor<3x16xf32>, tensor<i32>, tensor<i32>) -> tensor<16x16xf32>
    return %8, %12 : tensor<4x16xf32>, tensor<16x16xf32>
  }
}
