module @jit_cond_in_loop attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}, {name = "y", size = 2 : i64}, {name = "z", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {}]>}, %arg1: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"z"}]>}) -> (tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {"z"}]>}) {
    %0 = sdy.constant dense<0> : tensor<i32>
    %1 = sdy.reshard %arg1 <@mesh, [{}, {"z"}]> {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=16, j=16}>} : tensor<16x16xf32>
    %2:3 = stablehlo.while(%iterArg = %0, %iterArg_0 = %0, %iterArg_1 = %arg0) : tensor<i32>, tensor<i32>, tensor<16x16xf32> attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>, <@mesh, []>, <@mesh, [{"x", "y"}, {"z"}]>]>}
    cond {
      %3 = sdy.constant dense<4> : tensor<i32>
      %4 = stablehlo.compare LT, %iterArg, %3 {sdy.sharding_rule = #sdy.op_sharding_rule<([], [])->([])>} : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %4 : tensor<i1>
    } do {
      %3 = sdy.constant dense<1> : tensor<i32>
      %4 = stablehlo.add %iterArg, %3 {sdy.sharding_rule = #sdy.op_sharding_rule<([], [])->([])>} : tensor<i32>
      %5 = stablehlo.add %iterArg_0, %3 {sdy.sharding_rule = #sdy.op_sharding_rule<([], [])->([])>} : tensor<i32>
      %6 = sdy.constant dense<2> : tensor<i32>
      %7 = sdy.constant dense<0> : tensor<i32>
      %8 = stablehlo.compare EQ, %6, %7 {sdy.sharding_rule = #sdy.op_sharding_rule<([], [])->([])>} : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %9 = stablehlo.select %8, %3, %6 {sdy.sharding_rule = #sdy.op_sharding_rule<([], [], [])->([])>} : tensor<i1>, tensor<i32>
      %10 = stablehlo.remainder %iterArg_0, %9 {sdy.sharding_rule = #sdy.op_sharding_rule<([], [])->([])>} : tensor<i32>
      %11 = stablehlo.compare LT, %10, %7 {sdy.sharding_rule = #sdy.op_sharding_rule<([], [])->([])>} : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %12 = stablehlo.compare LT, %9, %7 {sdy.sharding_rule = #sdy.op_sharding_rule<([], [])->([])>} : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %13 = stablehlo.compare NE, %11, %12 {sdy.sharding_rule = #sdy.op_sharding_rule<([], [])->([])>} : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %14 = stablehlo.compare NE, %10, %7 {sdy.sharding_rule = #sdy.op_sharding_rule<([], [])->([])>} : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %15 = stablehlo.and %13, %14 {sdy.sharding_rule = #sdy.op_sharding_rule<([], [])->([])>} : tensor<i1>
      %16 = stablehlo.add %10, %9 {sdy.sharding_rule = #sdy.op_sharding_rule<([], [])->([])>} : tensor<i32>
      %17 = stablehlo.select %15, %16, %10 {sdy.sharding_rule = #sdy.op_sharding_rule<([], [], [])->([])>} : tensor<i1>, tensor<i32>
      %18 = stablehlo.compare EQ, %17, %7 {sdy.sharding_rule = #sdy.op_sharding_rule<([], [])->([])>} : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %19 = stablehlo.convert %18 {sdy.sharding_rule = #sdy.op_sharding_rule<([])->([])>} : (tensor<i1>) -> tensor<i32>
      %20 = "stablehlo.case"(%19) ({
        %21 = sdy.constant dense<2.000000e+00> : tensor<f32>
        %22 = stablehlo.broadcast_in_dim %21, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([])->([i, j]) {i=16, j=16}>} : (tensor<f32>) -> tensor<16x16xf32>
        %23 = stablehlo.multiply %iterArg_1, %22 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=16, j=16}>} : tensor<16x16xf32>
        %24 = sdy.reshard %23 <@mesh, [{"x"}, {}]> {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=16, j=16}>} : tensor<16x16xf32>
        stablehlo.return %24 : tensor<16x16xf32>
      }, {
        %21 = stablehlo.dot %iterArg_1, %1, precision = [DEFAULT, DEFAULT] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", "y"}, {"z"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {i=16, j=16, k=16} reduction={k}>} : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
        %22 = stablehlo.tanh %21 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", "y"}, {"z"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=16, j=16}>} : tensor<16x16xf32>
        stablehlo.return %22 : tensor<16x16xf32>
      }) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", "y"}, {"z"}]>]>} : (tensor<i32>) -> tensor<16x16xf32>
      stablehlo.return %4, %5, %20 : tensor<i32>, tensor<i32>, tensor<16x16xf32>
    }
    return %2#2 : tensor<16x16xf32>
  }
}
