module @jit_mlp_train_step attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg1: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg2: tensor<32x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg3: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}]>}, %arg4: tensor<64x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg5: tensor<8xf32>) -> (tensor<f32>, tensor<32x64xf32>, tensor<64xf32>, tensor<64x8xf32>, tensor<8xf32>) {
    %0 = stablehlo.dot %arg0, %arg2, precision = [DEFAULT, DEFAULT] : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
    %1 = stablehlo.reshape %arg3 : (tensor<64xf32>) -> tensor<1x64xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x64xf32>) -> tensor<1x64xf32>
    %3 = stablehlo.reshape %2 : (tensor<1x64xf32>) -> tensor<64xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [1] : (tensor<64xf32>) -> tensor<16x64xf32>
    %5 = stablehlo.add %0, %4 : tensor<16x64xf32>
    %6 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %6, dims = [] : (tensor<f32>) -> tensor<16x64xf32>
    %8 = stablehlo.broadcast_in_dim %6, dims = [] : (tensor<f32>) -> tensor<16x64xf32>
    %9 = stablehlo.broadcast_in_dim %6, dims = [] : (tensor<f32>) -> tensor<16x64xf32>
    %10 = stablehlo.maximum %5, %7 : tensor<16x64xf32>
    %11 = stablehlo.compare EQ, %5, %10 : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xi1>
    %12 = sdy.constant dense<1.000000e+00> : tensor<f32>
    %13 = stablehlo.broadcast_in_dim %12, dims = [] : (tensor<f32>) -> tensor<16x64xf32>
    %14 = stablehlo.broadcast_in_dim %12, dims = [] : (tensor<f32>) -> tensor<16x64xf32>
    %15 = stablehlo.select %11, %13, %8 : tensor<16x64xi1>, tensor<16x64xf32>
    %16 = stablehlo.compare EQ, %9, %10 : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xi1>
    %17 = sdy.constant dense<2.000000e+00> : tensor<f32>
    %18 = stablehlo.broadcast_in_dim %17, dims = [] : (tensor<f32>) -> tensor<16x64xf32>
    %19 = stablehlo.select %16, %18, %14 : tensor<16x64xi1>, tensor<16x64xf32>
    %20 = stablehlo.divide %15, %19 : tensor<16x64xf32>
    %21 = stablehlo.dot %10, %arg4, precision = [DEFAULT, DEFAULT] : (tensor<16x64xf32>, tensor<64x8xf32>) -> tensor<16x8xf32>
    %22 = stablehlo.reshape %arg5 : (tensor<8xf32>) -> tensor<1x8xf32>
    %23 = stablehlo.broadcast_in_dim %22, dims = [0, 1] : (tensor<1x8xf32>) -> tensor<1x8xf32>
    %24 = stablehlo.reshape %23 : (tensor<1x8xf32>) -> tensor<8xf32>
    %25 = stablehlo.broadcast_in_dim %24, dims = [1] : (tensor<8xf32>) -> tensor<16x8xf32>
    %26 = stablehlo.add %21, %25 : tensor<16x8xf32>
    %27 = stablehlo.subtract %26, %arg1 : tensor<16x8xf32>
    %28 = stablehlo.multiply %27, %27 : tensor<16x8xf32>
    %29 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %30 = stablehlo.reduce(%28 init: %29) applies stablehlo.add across dimensions = [0, 1] : (tensor<16x8xf32>, tensor<f32>) -> tensor<f32>
    %31 = sdy.constant dense<1.280000e+02> : tensor<f32>
    %32 = stablehlo.divide %30, %31 : tensor<f32>
    %33 = sdy.constant dense<2.000000e+00> : tensor<f32>
    %34 = stablehlo.broadcast_in_dim %33, dims = [] : (tensor<f32>) -> tensor<16x8xf32>
    %35 = stablehlo.multiply %27, %34 : tensor<16x8xf32>
    %36 = sdy.constant dense<7.812500e-03> : tensor<f32>
    %37 = stablehlo.broadcast_in_dim %36, dims = [] : (tensor<f32>) -> tensor<16x8xf32>
    %38 = stablehlo.multiply %35, %37 : tensor<16x8xf32>
    %39 = stablehlo.dot_general %38, %arg4, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x8xf32>, tensor<64x8xf32>) -> tensor<16x64xf32>
    %40 = stablehlo.multiply %39, %20 : tensor<16x64xf32>
    %41 = stablehlo.dot_general %40, %arg0, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x64xf32>, tensor<16x32xf32>) -> tensor<64x32xf32>
    %42 = stablehlo.transpose %41, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,64]{0,1}"} : (tensor<64x32xf32>) -> tensor<32x64xf32>
    %43 = sdy.constant dense<1.000000e-01> : tensor<f32>
    %44 = stablehlo.broadcast_in_dim %43, dims = [] : (tensor<f32>) -> tensor<32x64xf32>
    %45 = stablehlo.multiply %42, %44 {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,64]{0,1}"} : tensor<32x64xf32>
    %46 = stablehlo.subtract %arg2, %45 : tensor<32x64xf32>
    %47 = stablehlo.reduce(%40 init: %29) applies stablehlo.add across dimensions = [0] : (tensor<16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %48 = stablehlo.reshape %47 : (tensor<64xf32>) -> tensor<1x64xf32>
    %49 = stablehlo.reduce(%48 init: %29) applies stablehlo.add across dimensions = [0] : (tensor<1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %50 = sdy.constant dense<1.000000e-01> : tensor<f32>
    %51 = stablehlo.broadcast_in_dim %50, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %52 = stablehlo.multiply %49, %51 : tensor<64xf32>
    %53 = stablehlo.subtract %arg3, %52 : tensor<64xf32>
    %54 = stablehlo.dot_general %38, %10, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x8xf32>, tensor<16x64xf32>) -> tensor<8x64xf32>
    %55 = stablehlo.transpose %54, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[64,8]{0,1}"} : (tensor<8x64xf32>) -> tensor<64x8xf32>
    %56 = sdy.constant dense<1.000000e-01> : tensor<f32>
    %57 = stablehlo.broadcast_in_dim %56, dims = [] : (tensor<f32>) -> tensor<64x8xf32>
    %58 = stablehlo.multiply %55, %57 {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[64,8]{0,1}"} : tensor<64x8xf32>
    %59 = stablehlo.subtract %arg4, %58 : tensor<64x8xf32>
    %60 = stablehlo.reduce(%38 init: %29) applies stablehlo.add across dimensions = [0] : (tensor<16x8xf32>, tensor<f32>) -> tensor<8xf32>
    %61 = stablehlo.reshape %60 : (tensor<8xf32>) -> tensor<1x8xf32>
    %62 = stablehlo.reduce(%61 init: %29) applies stablehlo.add across dimensions = [0] : (tensor<1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %63 = sdy.constant dense<1.000000e-01> : tensor<f32>
    %64 = stablehlo.broadcast_in_dim %63, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %65 = stablehlo.multiply %62, %64 : tensor<8xf32>
    %66 = stablehlo.subtract %arg5, %65 : tensor<8xf32>
    return %32, %46, %53, %59, %66 : tensor<f32>, tensor<32x64xf32>, tensor<64xf32>, tensor<64x8xf32>, tensor<8xf32>
  }
}
