module @jit_cond_in_loop attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}, {name = "y", size = 2 : i64}, {name = "z", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {}]>}, %arg1: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"z"}]>}) -> tensor<16x16xf32> {
    %0 = sdy.constant dense<0> : tensor<i32>
    %1 = sdy.sharding_constraint %arg1 <@mesh, [{?}, {?}]> : tensor<16x16xf32>
    %2:3 = stablehlo.while(%iterArg = %0, %iterArg_0 = %0, %iterArg_1 = %arg0) : tensor<i32>, tensor<i32>, tensor<16x16xf32>
    cond {
      %3 = sdy.constant dense<4> : tensor<i32>
      %4 = stablehlo.compare LT, %iterArg, %3 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %4 : tensor<i1>
    } do {
      %3 = sdy.constant dense<1> : tensor<i32>
      %4 = stablehlo.add %iterArg, %3 : tensor<i32>
      %5 = sdy.constant dense<1> : tensor<i32>
      %6 = stablehlo.add %iterArg_0, %5 : tensor<i32>
      %7 = sdy.constant dense<2> : tensor<i32>
      %8 = sdy.constant dense<0> : tensor<i32>
      %9 = stablehlo.compare EQ, %7, %8 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %10 = sdy.constant dense<1> : tensor<i32>
      %11 = stablehlo.select %9, %10, %7 : tensor<i1>, tensor<i32>
      %12 = stablehlo.remainder %iterArg_0, %11 : tensor<i32>
      %13 = stablehlo.compare LT, %12, %8 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %14 = stablehlo.compare LT, %11, %8 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %15 = stablehlo.compare NE, %13, %14 : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %16 = stablehlo.compare NE, %12, %8 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %17 = stablehlo.and %15, %16 : tensor<i1>
      %18 = stablehlo.add %12, %11 : tensor<i32>
      %19 = stablehlo.select %17, %18, %12 : tensor<i1>, tensor<i32>
      %20 = sdy.constant dense<0> : tensor<i32>
      %21 = stablehlo.compare EQ, %19, %20 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %22 = stablehlo.convert %21 : (tensor<i1>) -> tensor<i32>
      %23 = "stablehlo.case"(%22) ({
        %24 = sdy.constant dense<2.000000e+00> : tensor<f32>
        %25 = stablehlo.broadcast_in_dim %24, dims = [] : (tensor<f32>) -> tensor<16x16xf32>
        %26 = stablehlo.multiply %iterArg_1, %25 : tensor<16x16xf32>
        %27 = sdy.sharding_constraint %26 <@mesh, [{"x"}, {}]> : tensor<16x16xf32>
        stablehlo.return %27 : tensor<16x16xf32>
      }, {
        %24 = stablehlo.dot %iterArg_1, %1, precision = [DEFAULT, DEFAULT] : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
        %25 = stablehlo.tanh %24 : tensor<16x16xf32>
        stablehlo.return %25 : tensor<16x16xf32>
      }) : (tensor<i32>) -> tensor<16x16xf32>
      stablehlo.return %4, %6, %23 : tensor<i32>, tensor<i32>, tensor<16x16xf32>
    }
    return %2#2 : tensor<16x16xf32>
  }
}
