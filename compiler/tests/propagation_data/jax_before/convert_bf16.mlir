module @jit_convert_bf16 attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg1: tensor<32x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) -> tensor<16x16xf32> {
    %0 = stablehlo.convert %arg0 : (tensor<16x32xf32>) -> tensor<16x32xbf16>
    %1 = stablehlo.convert %arg1 : (tensor<32x16xf32>) -> tensor<32x16xbf16>
    %2 = stablehlo.dot %0, %1, precision = [DEFAULT, DEFAULT] : (tensor<16x32xbf16>, tensor<32x16xbf16>) -> tensor<16x16xbf16>
    %3 = stablehlo.tanh %2 : tensor<16x16xbf16>
    %4 = stablehlo.convert %3 : (tensor<16x16xbf16>) -> tensor<16x16xf32>
    %5 = stablehlo.slice %arg0 [0:16, 0:16] : (tensor<16x32xf32>) -> tensor<16x16xf32>
    %6 = stablehlo.add %4, %5 : tensor<16x16xf32>
    return %6 : tensor<16x16xf32>
  }
}
