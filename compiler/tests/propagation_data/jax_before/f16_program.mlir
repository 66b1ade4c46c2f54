module @jit_f16_program attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<16x32xf16> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg1: tensor<32x16xf16> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) -> (tensor<16x16xf16>, tensor<16xf16>) {
    %0 = stablehlo.dot %arg0, %arg1, precision = [DEFAULT, DEFAULT] : (tensor<16x32xf16>, tensor<32x16xf16>) -> tensor<16x16xf16>
    %1 = sdy.constant dense<2.500000e-01> : tensor<f16>
    %2 = stablehlo.broadcast_in_dim %1, dims = [] : (tensor<f16>) -> tensor<16x16xf16>
    %3 = stablehlo.multiply %0, %2 : tensor<16x16xf16>
    %4 = stablehlo.exponential %3 : tensor<16x16xf16>
    %5 = stablehlo.convert %4 : (tensor<16x16xf16>) -> tensor<16x16xf32>
    %6 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%5 init: %6) applies stablehlo.add across dimensions = [1] : (tensor<16x16xf32>, tensor<f32>) -> tensor<16xf32>
    %8 = stablehlo.convert %7 : (tensor<16xf32>) -> tensor<16xf16>
    return %4, %8 : tensor<16x16xf16>, tensor<16xf16>
  }
}
