module @jit_fori_matmul attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg1: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) -> tensor<16x32xf32> {
    %0 = sdy.constant dense<0> : tensor<i32>
    %1 = sdy.sharding_constraint %arg1 <@mesh, [{?}, {?}]> : tensor<32x32xf32>
    %2:2 = stablehlo.while(%iterArg = %0, %iterArg_0 = %arg0) : tensor<i32>, tensor<16x32xf32>
    cond {
      %3 = sdy.constant dense<3> : tensor<i32>
      %4 = stablehlo.compare LT, %iterArg, %3 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %4 : tensor<i1>
    } do {
      %3 = sdy.constant dense<1> : tensor<i32>
      %4 = stablehlo.add %iterArg, %3 : tensor<i32>
      %5 = stablehlo.dot %iterArg_0, %1, precision = [DEFAULT, DEFAULT] : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
      %6 = stablehlo.tanh %5 : tensor<16x32xf32>
      stablehlo.return %4, %6 : tensor<i32>, tensor<16x32xf32>
    }
    return %2#1 : tensor<16x32xf32>
  }
}
