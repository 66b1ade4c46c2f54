module @jit_slice attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<6x16xf32> {
    %0 = stablehlo.slice %arg0 [2:14:2, 4:20] : (tensor<16x32xf32>) -> tensor<6x16xf32>
    %1 = stablehlo.slice %arg0 [0:6, 8:24] : (tensor<16x32xf32>) -> tensor<6x16xf32>
    %2 = stablehlo.add %0, %1 : tensor<6x16xf32>
    return %2 : tensor<6x16xf32>
  }
}
