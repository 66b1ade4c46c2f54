module @jit_transformer_block attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<4x16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}, {}]>}, %arg1: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg2: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg3: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg4: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg5: tensor<32x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg6: tensor<64x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg7: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg8: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) -> tensor<4x16x32xf32> {
    %0 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%arg0 init: %0) applies stablehlo.add across dimensions = [2] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<4x16xf32>
    %2 = stablehlo.reshape %1 : (tensor<4x16xf32>) -> tensor<4x16x1xf32>
    %3 = sdy.constant dense<3.200000e+01> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<f32>) -> tensor<4x16x1xf32>
    %5 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<f32>) -> tensor<4x16x1xf32>
    %6 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<f32>) -> tensor<4x16x1xf32>
    %7 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<f32>) -> tensor<4x16x1xf32>
    %8 = stablehlo.divide %2, %4 : tensor<4x16x1xf32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1, 2] : (tensor<4x16x1xf32>) -> tensor<4x16x1xf32>
    %10 = stablehlo.reshape %9 : (tensor<4x16x1xf32>) -> tensor<4x16xf32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [0, 1] : (tensor<4x16xf32>) -> tensor<4x16x32xf32>
    %12 = stablehlo.subtract %arg0, %11 : tensor<4x16x32xf32>
    %13 = stablehlo.broadcast_in_dim %8, dims = [0, 1, 2] : (tensor<4x16x1xf32>) -> tensor<4x16x1xf32>
    %14 = stablehlo.reshape %13 : (tensor<4x16x1xf32>) -> tensor<4x16xf32>
    %15 = stablehlo.broadcast_in_dim %14, dims = [0, 1] : (tensor<4x16xf32>) -> tensor<4x16x32xf32>
    %16 = stablehlo.subtract %arg0, %15 : tensor<4x16x32xf32>
    %17 = stablehlo.multiply %16, %16 : tensor<4x16x32xf32>
    %18 = stablehlo.reduce(%17 init: %0) applies stablehlo.add across dimensions = [2] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<4x16xf32>
    %19 = stablehlo.reshape %18 : (tensor<4x16xf32>) -> tensor<4x16x1xf32>
    %20 = stablehlo.divide %19, %5 : tensor<4x16x1xf32>
    %21 = sdy.constant dense<9.99999974E-6> : tensor<f32>
    %22 = stablehlo.broadcast_in_dim %21, dims = [] : (tensor<f32>) -> tensor<4x16x1xf32>
    %23 = stablehlo.broadcast_in_dim %21, dims = [] : (tensor<f32>) -> tensor<4x16x1xf32>
    %24 = stablehlo.add %20, %22 : tensor<4x16x1xf32>
    %25 = stablehlo.rsqrt %24 : tensor<4x16x1xf32>
    %26 = stablehlo.broadcast_in_dim %25, dims = [0, 1, 2] : (tensor<4x16x1xf32>) -> tensor<4x16x1xf32>
    %27 = stablehlo.reshape %26 : (tensor<4x16x1xf32>) -> tensor<4x16xf32>
    %28 = stablehlo.broadcast_in_dim %27, dims = [0, 1] : (tensor<4x16xf32>) -> tensor<4x16x32xf32>
    %29 = stablehlo.multiply %12, %28 : tensor<4x16x32xf32>
    %30 = stablehlo.reshape %arg7 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %31 = stablehlo.broadcast_in_dim %30, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
    %32 = stablehlo.reshape %31 : (tensor<1x1x32xf32>) -> tensor<32xf32>
    %33 = stablehlo.broadcast_in_dim %32, dims = [2] : (tensor<32xf32>) -> tensor<4x16x32xf32>
    %34 = stablehlo.multiply %29, %33 : tensor<4x16x32xf32>
    %35 = stablehlo.reshape %arg8 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %36 = stablehlo.broadcast_in_dim %35, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
    %37 = stablehlo.reshape %36 : (tensor<1x1x32xf32>) -> tensor<32xf32>
    %38 = stablehlo.broadcast_in_dim %37, dims = [2] : (tensor<32xf32>) -> tensor<4x16x32xf32>
    %39 = stablehlo.add %34, %38 : tensor<4x16x32xf32>
    %40 = stablehlo.dot_general %39, %arg3, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x16x32xf32>, tensor<32x32xf32>) -> tensor<4x16x32xf32>
    %41 = stablehlo.reshape %40 : (tensor<4x16x32xf32>) -> tensor<4x16x4x8xf32>
    %42 = stablehlo.dot_general %39, %arg1, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x16x32xf32>, tensor<32x32xf32>) -> tensor<4x16x32xf32>
    %43 = stablehlo.reshape %42 : (tensor<4x16x32xf32>) -> tensor<4x16x4x8xf32>
    %44 = stablehlo.dot_general %39, %arg2, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x16x32xf32>, tensor<32x32xf32>) -> tensor<4x16x32xf32>
    %45 = stablehlo.reshape %44 : (tensor<4x16x32xf32>) -> tensor<4x16x4x8xf32>
    %46 = stablehlo.dot_general %43, %45, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<4x16x4x8xf32>, tensor<4x16x4x8xf32>) -> tensor<4x4x16x16xf32>
    %47 = sdy.constant dense<8.000000e+00> : tensor<f32>
    %48 = stablehlo.broadcast_in_dim %47, dims = [] : (tensor<f32>) -> tensor<4x4x16x16xf32>
    %49 = stablehlo.divide %46, %48 : tensor<4x4x16x16xf32>
    %50 = sdy.constant dense<0xFF800000> : tensor<f32>
    %51 = stablehlo.reduce(%49 init: %50) applies stablehlo.maximum across dimensions = [3] : (tensor<4x4x16x16xf32>, tensor<f32>) -> tensor<4x4x16xf32>
    %52 = sdy.constant dense<0xFF800000> : tensor<f32>
    %53 = stablehlo.broadcast_in_dim %52, dims = [] : (tensor<f32>) -> tensor<4x4x16xf32>
    %54 = stablehlo.maximum %51, %53 : tensor<4x4x16xf32>
    %55 = stablehlo.reshape %54 : (tensor<4x4x16xf32>) -> tensor<4x4x16x1xf32>
    %56 = stablehlo.broadcast_in_dim %55, dims = [0, 1, 2, 3] : (tensor<4x4x16x1xf32>) -> tensor<4x4x16x1xf32>
    %57 = stablehlo.reshape %56 : (tensor<4x4x16x1xf32>) -> tensor<4x4x16xf32>
    %58 = stablehlo.broadcast_in_dim %57, dims = [0, 1, 2] : (tensor<4x4x16xf32>) -> tensor<4x4x16x16xf32>
    %59 = stablehlo.subtract %49, %58 : tensor<4x4x16x16xf32>
    %60 = stablehlo.exponential %59 : tensor<4x4x16x16xf32>
    %61 = stablehlo.reduce(%60 init: %0) applies stablehlo.add across dimensions = [3] : (tensor<4x4x16x16xf32>, tensor<f32>) -> tensor<4x4x16xf32>
    %62 = stablehlo.reshape %61 : (tensor<4x4x16xf32>) -> tensor<4x4x16x1xf32>
    %63 = stablehlo.broadcast_in_dim %62, dims = [0, 1, 2, 3] : (tensor<4x4x16x1xf32>) -> tensor<4x4x16x1xf32>
    %64 = stablehlo.reshape %63 : (tensor<4x4x16x1xf32>) -> tensor<4x4x16xf32>
    %65 = stablehlo.broadcast_in_dim %64, dims = [0, 1, 2] : (tensor<4x4x16xf32>) -> tensor<4x4x16x16xf32>
    %66 = stablehlo.divide %60, %65 : tensor<4x4x16x16xf32>
    %67 = stablehlo.dot_general %41, %66, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3], precision = [DEFAULT, DEFAULT] : (tensor<4x16x4x8xf32>, tensor<4x4x16x16xf32>) -> tensor<4x4x8x16xf32>
    %68 = stablehlo.transpose %67, dims = [0, 3, 1, 2] {result_layout = dense<[1, 3, 2, 0]> : tensor<4xindex>, xla_shape = "f32[4,16,4,8]{1,3,2,0}"} : (tensor<4x4x8x16xf32>) -> tensor<4x16x4x8xf32>
    %69 = stablehlo.reshape %68 : (tensor<4x16x4x8xf32>) -> tensor<4x16x32xf32>
    %70 = stablehlo.dot_general %69, %arg4, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x16x32xf32>, tensor<32x32xf32>) -> tensor<4x16x32xf32>
    %71 = stablehlo.add %arg0, %70 : tensor<4x16x32xf32>
    %72 = stablehlo.reduce(%71 init: %0) applies stablehlo.add across dimensions = [2] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<4x16xf32>
    %73 = stablehlo.reshape %72 : (tensor<4x16xf32>) -> tensor<4x16x1xf32>
    %74 = stablehlo.divide %73, %6 : tensor<4x16x1xf32>
    %75 = stablehlo.broadcast_in_dim %74, dims = [0, 1, 2] : (tensor<4x16x1xf32>) -> tensor<4x16x1xf32>
    %76 = stablehlo.reshape %75 : (tensor<4x16x1xf32>) -> tensor<4x16xf32>
    %77 = stablehlo.broadcast_in_dim %76, dims = [0, 1] : (tensor<4x16xf32>) -> tensor<4x16x32xf32>
    %78 = stablehlo.subtract %71, %77 : tensor<4x16x32xf32>
    %79 = stablehlo.broadcast_in_dim %74, dims = [0, 1, 2] : (tensor<4x16x1xf32>) -> tensor<4x16x1xf32>
    %80 = stablehlo.reshape %79 : (tensor<4x16x1xf32>) -> tensor<4x16xf32>
    %81 = stablehlo.broadcast_in_dim %80, dims = [0, 1] : (tensor<4x16xf32>) -> tensor<4x16x32xf32>
    %82 = stablehlo.subtract %71, %81 : tensor<4x16x32xf32>
    %83 = stablehlo.multiply %82, %82 : tensor<4x16x32xf32>
    %84 = stablehlo.reduce(%83 init: %0) applies stablehlo.add across dimensions = [2] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<4x16xf32>
    %85 = stablehlo.reshape %84 : (tensor<4x16xf32>) -> tensor<4x16x1xf32>
    %86 = stablehlo.divide %85, %7 : tensor<4x16x1xf32>
    %87 = stablehlo.add %86, %23 : tensor<4x16x1xf32>
    %88 = stablehlo.rsqrt %87 : tensor<4x16x1xf32>
    %89 = stablehlo.broadcast_in_dim %88, dims = [0, 1, 2] : (tensor<4x16x1xf32>) -> tensor<4x16x1xf32>
    %90 = stablehlo.reshape %89 : (tensor<4x16x1xf32>) -> tensor<4x16xf32>
    %91 = stablehlo.broadcast_in_dim %90, dims = [0, 1] : (tensor<4x16xf32>) -> tensor<4x16x32xf32>
    %92 = stablehlo.multiply %78, %91 : tensor<4x16x32xf32>
    %93 = stablehlo.reshape %arg7 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %94 = stablehlo.broadcast_in_dim %93, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
    %95 = stablehlo.reshape %94 : (tensor<1x1x32xf32>) -> tensor<32xf32>
    %96 = stablehlo.broadcast_in_dim %95, dims = [2] : (tensor<32xf32>) -> tensor<4x16x32xf32>
    %97 = stablehlo.multiply %92, %96 : tensor<4x16x32xf32>
    %98 = stablehlo.reshape %arg8 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %99 = stablehlo.broadcast_in_dim %98, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
    %100 = stablehlo.reshape %99 : (tensor<1x1x32xf32>) -> tensor<32xf32>
    %101 = stablehlo.broadcast_in_dim %100, dims = [2] : (tensor<32xf32>) -> tensor<4x16x32xf32>
    %102 = stablehlo.add %97, %101 : tensor<4x16x32xf32>
    %103 = stablehlo.dot_general %102, %arg5, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x16x32xf32>, tensor<32x64xf32>) -> tensor<4x16x64xf32>
    %104 = stablehlo.multiply %103, %103 : tensor<4x16x64xf32>
    %105 = stablehlo.multiply %104, %103 : tensor<4x16x64xf32>
    %106 = sdy.constant dense<4.471500e-02> : tensor<f32>
    %107 = stablehlo.broadcast_in_dim %106, dims = [] : (tensor<f32>) -> tensor<4x16x64xf32>
    %108 = stablehlo.multiply %105, %107 : tensor<4x16x64xf32>
    %109 = stablehlo.add %103, %108 : tensor<4x16x64xf32>
    %110 = sdy.constant dense<0.797884583> : tensor<f32>
    %111 = stablehlo.broadcast_in_dim %110, dims = [] : (tensor<f32>) -> tensor<4x16x64xf32>
    %112 = stablehlo.multiply %109, %111 : tensor<4x16x64xf32>
    %113 = stablehlo.tanh %112 : tensor<4x16x64xf32>
    %114 = sdy.constant dense<1.000000e+00> : tensor<f32>
    %115 = stablehlo.broadcast_in_dim %114, dims = [] : (tensor<f32>) -> tensor<4x16x64xf32>
    %116 = stablehlo.add %113, %115 : tensor<4x16x64xf32>
    %117 = sdy.constant dense<5.000000e-01> : tensor<f32>
    %118 = stablehlo.broadcast_in_dim %117, dims = [] : (tensor<f32>) -> tensor<4x16x64xf32>
    %119 = stablehlo.multiply %116, %118 : tensor<4x16x64xf32>
    %120 = stablehlo.multiply %103, %119 : tensor<4x16x64xf32>
    %121 = stablehlo.dot_general %120, %arg6, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x16x64xf32>, tensor<64x32xf32>) -> tensor<4x16x32xf32>
    %122 = stablehlo.add %71, %121 : tensor<4x16x32xf32>
    return %122 : tensor<4x16x32xf32>
  }
}
