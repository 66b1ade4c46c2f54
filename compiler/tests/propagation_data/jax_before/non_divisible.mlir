module @jit_non_divisible attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["x"=8]> {stablehlo.mesh = {axes = [{name = "x", size = 8 : i64}]}}
  func.func @main(%arg0: tensor<12x16xf32>) -> (tensor<12x16xf32>, tensor<16xf32>, tensor<16xf32>) {
    %0 = sdy.constant dense<5.000000e-01> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<12x16xf32>
    %2 = stablehlo.multiply %arg0, %1 : tensor<12x16xf32>
    %3 = stablehlo.exponential %2 : tensor<12x16xf32>
    %4 = sdy.sharding_constraint %3 <@mesh, [{"x"}, {}]> : tensor<12x16xf32>
    %5 = sdy.constant dense<2.000000e+00> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %5, dims = [] : (tensor<f32>) -> tensor<12x16xf32>
    %7 = stablehlo.multiply %4, %6 : tensor<12x16xf32>
    %8 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %9 = stablehlo.reduce(%4 init: %8) applies stablehlo.add across dimensions = [0] : (tensor<12x16xf32>, tensor<f32>) -> tensor<16xf32>
    %10 = sdy.constant dense<0xFF800000> : tensor<f32>
    %11 = stablehlo.reduce(%4 init: %10) applies stablehlo.maximum across dimensions = [0] : (tensor<12x16xf32>, tensor<f32>) -> tensor<16xf32>
    return %7, %9, %11 : tensor<12x16xf32>, tensor<16xf32>, tensor<16xf32>
  }
}
