module @jit_iota attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<8x16xf32>, tensor<8x16xi32>) {
    %0 = stablehlo.iota dim = 0 : tensor<8xi32>
    %1 = stablehlo.iota dim = 0 : tensor<8xi32>
    %2 = stablehlo.iota dim = 0 : tensor<8xi32>
    %3 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<8xi32>) -> tensor<8x16xi32>
    %4 = stablehlo.broadcast_in_dim %1, dims = [0] : (tensor<8xi32>) -> tensor<8x16xi32>
    %5 = stablehlo.broadcast_in_dim %2, dims = [0] : (tensor<8xi32>) -> tensor<8x16xi32>
    %6 = sdy.constant dense<2> : tensor<i32>
    %7 = sdy.constant dense<0> : tensor<i32>
    %8 = stablehlo.compare EQ, %6, %7 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %9 = sdy.constant dense<1> : tensor<i32>
    %10 = stablehlo.select %8, %9, %6 : tensor<i1>, tensor<i32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [] : (tensor<i32>) -> tensor<8x16xi32>
    %12 = stablehlo.remainder %4, %11 : tensor<8x16xi32>
    %13 = sdy.constant dense<0> : tensor<i32>
    %14 = stablehlo.broadcast_in_dim %13, dims = [] : (tensor<i32>) -> tensor<8x16xi32>
    %15 = stablehlo.compare LT, %12, %14 : (tensor<8x16xi32>, tensor<8x16xi32>) -> tensor<8x16xi1>
    %16 = stablehlo.compare LT, %10, %7 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %17 = stablehlo.broadcast_in_dim %16, dims = [] : (tensor<i1>) -> tensor<8x16xi1>
    %18 = stablehlo.compare NE, %15, %17 : (tensor<8x16xi1>, tensor<8x16xi1>) -> tensor<8x16xi1>
    %19 = stablehlo.compare NE, %12, %14 : (tensor<8x16xi32>, tensor<8x16xi32>) -> tensor<8x16xi1>
    %20 = stablehlo.and %18, %19 : tensor<8x16xi1>
    %21 = stablehlo.broadcast_in_dim %10, dims = [] : (tensor<i32>) -> tensor<8x16xi32>
    %22 = stablehlo.add %12, %21 : tensor<8x16xi32>
    %23 = stablehlo.select %20, %22, %12 : tensor<8x16xi1>, tensor<8x16xi32>
    %24 = sdy.constant dense<0> : tensor<i32>
    %25 = stablehlo.broadcast_in_dim %24, dims = [] : (tensor<i32>) -> tensor<8x16xi32>
    %26 = stablehlo.compare EQ, %23, %25 : (tensor<8x16xi32>, tensor<8x16xi32>) -> tensor<8x16xi1>
    %27 = stablehlo.iota dim = 0 : tensor<16xf32>
    %28 = stablehlo.reshape %27 : (tensor<16xf32>) -> tensor<1x16xf32>
    %29 = stablehlo.broadcast_in_dim %28, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<1x16xf32>
    %30 = stablehlo.reshape %29 : (tensor<1x16xf32>) -> tensor<16xf32>
    %31 = stablehlo.broadcast_in_dim %30, dims = [1] : (tensor<16xf32>) -> tensor<8x16xf32>
    %32 = stablehlo.add %arg0, %31 : tensor<8x16xf32>
    %33 = stablehlo.convert %3 : (tensor<8x16xi32>) -> tensor<8x16xf32>
    %34 = stablehlo.subtract %arg0, %33 : tensor<8x16xf32>
    %35 = stablehlo.select %26, %32, %34 : tensor<8x16xi1>, tensor<8x16xf32>
    %36 = sdy.constant dense<3> : tensor<i32>
    %37 = stablehlo.broadcast_in_dim %36, dims = [] : (tensor<i32>) -> tensor<8x16xi32>
    %38 = stablehlo.multiply %5, %37 : tensor<8x16xi32>
    return %35, %38 : tensor<8x16xf32>, tensor<8x16xi32>
  }
}
