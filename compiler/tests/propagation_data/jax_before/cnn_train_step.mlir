module @jit_cnn_train_step attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<8x8x8x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}, {}, {}]>}, %arg1: tensor<8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>}, %arg2: tensor<3x3x3x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}, {}]>}, %arg3: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg4: tensor<3x3x1x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}, {}]>}, %arg5: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg6: tensor<32x10xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg7: tensor<10xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) -> (tensor<f32>, tensor<3x3x3x8xf32>, tensor<8xf32>, tensor<3x3x1x8xf32>, tensor<8xf32>, tensor<32x10xf32>, tensor<10xf32>) {
    %0 = stablehlo.reshape %arg1 : (tensor<8xi32>) -> tensor<8x1xi32>
    %1 = sdy.constant dense<0> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [] : (tensor<i32>) -> tensor<8x1xi32>
    %3 = stablehlo.compare LT, %0, %2 : (tensor<8x1xi32>, tensor<8x1xi32>) -> tensor<8x1xi1>
    %4 = sdy.constant dense<10> : tensor<i32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [] : (tensor<i32>) -> tensor<8x1xi32>
    %6 = stablehlo.add %0, %5 : tensor<8x1xi32>
    %7 = stablehlo.select %3, %6, %0 : tensor<8x1xi1>, tensor<8x1xi32>
    %8 = stablehlo.reshape %7 : (tensor<8x1xi32>) -> tensor<8x1x1xi32>
    %9 = sdy.constant dense<0> : tensor<i32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [] : (tensor<i32>) -> tensor<8x1x1xi32>
    %11 = stablehlo.compare GE, %8, %10 : (tensor<8x1x1xi32>, tensor<8x1x1xi32>) -> tensor<8x1x1xi1>
    %12 = sdy.constant dense<9> : tensor<i32>
    %13 = stablehlo.broadcast_in_dim %12, dims = [] : (tensor<i32>) -> tensor<8x1x1xi32>
    %14 = stablehlo.compare LE, %8, %13 : (tensor<8x1x1xi32>, tensor<8x1x1xi32>) -> tensor<8x1x1xi1>
    %15 = stablehlo.and %11, %14 : tensor<8x1x1xi1>
    %16 = sdy.constant dense<true> : tensor<i1>
    %17 = stablehlo.reduce(%15 init: %16) applies stablehlo.and across dimensions = [2] : (tensor<8x1x1xi1>, tensor<i1>) -> tensor<8x1xi1>
    %18 = stablehlo.convolution(%arg0, %arg2) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<8x8x8x3xf32>, tensor<3x3x3x8xf32>) -> tensor<8x8x8x8xf32>
    %19 = stablehlo.reshape %arg3 : (tensor<8xf32>) -> tensor<1x1x1x8xf32>
    %20 = stablehlo.broadcast_in_dim %19, dims = [0, 1, 2, 3] : (tensor<1x1x1x8xf32>) -> tensor<1x1x1x8xf32>
    %21 = stablehlo.reshape %20 : (tensor<1x1x1x8xf32>) -> tensor<8xf32>
    %22 = stablehlo.broadcast_in_dim %21, dims = [3] : (tensor<8xf32>) -> tensor<8x8x8x8xf32>
    %23 = stablehlo.add %18, %22 : tensor<8x8x8x8xf32>
    %24 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %25 = stablehlo.broadcast_in_dim %24, dims = [] : (tensor<f32>) -> tensor<8x8x8x8xf32>
    %26 = stablehlo.maximum %23, %25 : tensor<8x8x8x8xf32>
    %27 = stablehlo.convolution(%26, %arg4) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[0, 1], [0, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 8 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<8x8x8x8xf32>, tensor<3x3x1x8xf32>) -> tensor<8x4x4x8xf32>
    %28 = stablehlo.reshape %arg5 : (tensor<8xf32>) -> tensor<1x1x1x8xf32>
    %29 = stablehlo.broadcast_in_dim %28, dims = [0, 1, 2, 3] : (tensor<1x1x1x8xf32>) -> tensor<1x1x1x8xf32>
    %30 = stablehlo.reshape %29 : (tensor<1x1x1x8xf32>) -> tensor<8xf32>
    %31 = stablehlo.broadcast_in_dim %30, dims = [3] : (tensor<8xf32>) -> tensor<8x4x4x8xf32>
    %32 = stablehlo.add %27, %31 : tensor<8x4x4x8xf32>
    %33 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %34 = stablehlo.broadcast_in_dim %33, dims = [] : (tensor<f32>) -> tensor<8x4x4x8xf32>
    %35 = stablehlo.maximum %32, %34 : tensor<8x4x4x8xf32>
    %36 = sdy.constant dense<0xFF800000> : tensor<f32>
    %37 = "stablehlo.reduce_window"(%35, %36) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<0> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg8: tensor<f32>, %arg9: tensor<f32>):
      %139 = stablehlo.maximum %arg8, %arg9 : tensor<f32>
      stablehlo.return %139 : tensor<f32>
    }) : (tensor<8x4x4x8xf32>, tensor<f32>) -> tensor<8x2x2x8xf32>
    %38 = stablehlo.reshape %37 : (tensor<8x2x2x8xf32>) -> tensor<8x32xf32>
    %39 = stablehlo.dot %38, %arg6, precision = [DEFAULT, DEFAULT] : (tensor<8x32xf32>, tensor<32x10xf32>) -> tensor<8x10xf32>
    %40 = stablehlo.reshape %arg7 : (tensor<10xf32>) -> tensor<1x10xf32>
    %41 = stablehlo.broadcast_in_dim %40, dims = [0, 1] : (tensor<1x10xf32>) -> tensor<1x10xf32>
    %42 = stablehlo.reshape %41 : (tensor<1x10xf32>) -> tensor<10xf32>
    %43 = stablehlo.broadcast_in_dim %42, dims = [1] : (tensor<10xf32>) -> tensor<8x10xf32>
    %44 = stablehlo.add %39, %43 : tensor<8x10xf32>
    %45 = sdy.constant dense<0xFF800000> : tensor<f32>
    %46 = stablehlo.reduce(%44 init: %45) applies stablehlo.maximum across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %47 = sdy.constant dense<0xFF800000> : tensor<f32>
    %48 = stablehlo.broadcast_in_dim %47, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %49 = stablehlo.maximum %46, %48 : tensor<8xf32>
    %50 = stablehlo.reshape %49 : (tensor<8xf32>) -> tensor<8x1xf32>
    %51 = stablehlo.broadcast_in_dim %50, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x1xf32>
    %52 = stablehlo.reshape %51 : (tensor<8x1xf32>) -> tensor<8xf32>
    %53 = stablehlo.broadcast_in_dim %52, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %54 = stablehlo.subtract %44, %53 : tensor<8x10xf32>
    %55 = stablehlo.exponential %54 : tensor<8x10xf32>
    %56 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %57 = stablehlo.reduce(%55 init: %56) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %58 = stablehlo.reshape %57 : (tensor<8xf32>) -> tensor<8x1xf32>
    %59 = stablehlo.log %58 : tensor<8x1xf32>
    %60 = stablehlo.broadcast_in_dim %59, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x1xf32>
    %61 = stablehlo.reshape %60 : (tensor<8x1xf32>) -> tensor<8xf32>
    %62 = stablehlo.broadcast_in_dim %61, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %63 = stablehlo.subtract %54, %62 : tensor<8x10xf32>
    %64 = "stablehlo.gather"(%63, %8) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<8x10xf32>, tensor<8x1x1xi32>) -> tensor<8x1xf32>
    %65 = sdy.constant dense<0x7FC00000> : tensor<f32>
    %66 = stablehlo.broadcast_in_dim %65, dims = [] : (tensor<f32>) -> tensor<8x1xf32>
    %67 = stablehlo.select %17, %64, %66 : tensor<8x1xi1>, tensor<8x1xf32>
    %68 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %69 = stablehlo.reduce(%67 init: %68) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x1xf32>, tensor<f32>) -> tensor<f32>
    %70 = sdy.constant dense<8.000000e+00> : tensor<f32>
    %71 = stablehlo.divide %69, %70 : tensor<f32>
    %72 = stablehlo.negate %71 : tensor<f32>
    %73 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %74 = stablehlo.broadcast_in_dim %73, dims = [] : (tensor<f32>) -> tensor<8x8x8x8xf32>
    %75 = stablehlo.broadcast_in_dim %73, dims = [] : (tensor<f32>) -> tensor<8x8x8x8xf32>
    %76 = stablehlo.compare GT, %23, %74 : (tensor<8x8x8x8xf32>, tensor<8x8x8x8xf32>) -> tensor<8x8x8x8xi1>
    %77 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %78 = stablehlo.broadcast_in_dim %77, dims = [] : (tensor<f32>) -> tensor<8x4x4x8xf32>
    %79 = stablehlo.broadcast_in_dim %77, dims = [] : (tensor<f32>) -> tensor<8x4x4x8xf32>
    %80 = stablehlo.compare GT, %32, %78 : (tensor<8x4x4x8xf32>, tensor<8x4x4x8xf32>) -> tensor<8x4x4x8xi1>
    %81 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %82 = stablehlo.broadcast_in_dim %81, dims = [] : (tensor<f32>) -> tensor<8x10xf32>
    %83 = sdy.constant dense<-1.250000e-01> : tensor<f32>
    %84 = stablehlo.broadcast_in_dim %83, dims = [] : (tensor<f32>) -> tensor<8x1xf32>
    %85 = "stablehlo.scatter"(%82, %8, %84) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = [0], scatter_dims_to_operand_dims = [1], index_vector_dim = 2>, unique_indices = false}> ({
    ^bb0(%arg8: tensor<f32>, %arg9: tensor<f32>):
      %139 = stablehlo.add %arg8, %arg9 : tensor<f32>
      stablehlo.return %139 : tensor<f32>
    }) : (tensor<8x10xf32>, tensor<8x1x1xi32>, tensor<8x1xf32>) -> tensor<8x10xf32>
    %86 = stablehlo.negate %85 : tensor<8x10xf32>
    %87 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %88 = stablehlo.reduce(%86 init: %87) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %89 = stablehlo.reshape %88 : (tensor<8xf32>) -> tensor<8x1xf32>
    %90 = stablehlo.divide %89, %58 : tensor<8x1xf32>
    %91 = stablehlo.reduce(%90 init: %87) applies stablehlo.add across dimensions = [1] : (tensor<8x1xf32>, tensor<f32>) -> tensor<8xf32>
    %92 = stablehlo.broadcast_in_dim %91, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %93 = stablehlo.multiply %92, %55 : tensor<8x10xf32>
    %94 = stablehlo.add %85, %93 : tensor<8x10xf32>
    %95 = stablehlo.dot_general %94, %arg6, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x10xf32>, tensor<32x10xf32>) -> tensor<8x32xf32>
    %96 = stablehlo.reshape %95 : (tensor<8x32xf32>) -> tensor<8x2x2x8xf32>
    %97 = "stablehlo.select_and_scatter"(%35, %96, %68) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg8: tensor<f32>, %arg9: tensor<f32>):
      %139 = stablehlo.compare GE, %arg8, %arg9 : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %139 : tensor<i1>
    }, {
    ^bb0(%arg8: tensor<f32>, %arg9: tensor<f32>):
      %139 = stablehlo.add %arg8, %arg9 : tensor<f32>
      stablehlo.return %139 : tensor<f32>
    }) : (tensor<8x4x4x8xf32>, tensor<8x2x2x8xf32>, tensor<f32>) -> tensor<8x4x4x8xf32>
    %98 = stablehlo.select %80, %97, %79 : tensor<8x4x4x8xi1>, tensor<8x4x4x8xf32>
    %99 = stablehlo.reshape %arg4 : (tensor<3x3x1x8xf32>) -> tensor<3x3x8x1xf32>
    %100 = stablehlo.reverse %99, dims = [0, 1] : tensor<3x3x8x1xf32>
    %101 = stablehlo.convolution(%98, %100) dim_numbers = [b, 0, 1, f]x[0, 1, o, i]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[2, 1], [2, 1]], lhs_dilate = [2, 2], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 8 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<8x4x4x8xf32>, tensor<3x3x8x1xf32>) -> tensor<8x8x8x8xf32>
    %102 = stablehlo.select %76, %101, %75 : tensor<8x8x8x8xi1>, tensor<8x8x8x8xf32>
    %103 = stablehlo.convolution(%arg0, %102) dim_numbers = [f, 0, 1, b]x[i, 0, 1, o]->[0, 1, b, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<8x8x8x3xf32>, tensor<8x8x8x8xf32>) -> tensor<3x3x3x8xf32>
    %104 = sdy.constant dense<1.000000e-01> : tensor<f32>
    %105 = stablehlo.broadcast_in_dim %104, dims = [] : (tensor<f32>) -> tensor<3x3x3x8xf32>
    %106 = stablehlo.multiply %103, %105 : tensor<3x3x3x8xf32>
    %107 = stablehlo.subtract %arg2, %106 : tensor<3x3x3x8xf32>
    %108 = stablehlo.reduce(%102 init: %68) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<8x8x8x8xf32>, tensor<f32>) -> tensor<8xf32>
    %109 = stablehlo.reshape %108 : (tensor<8xf32>) -> tensor<1x1x1x8xf32>
    %110 = stablehlo.reduce(%109 init: %68) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<1x1x1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %111 = sdy.constant dense<1.000000e-01> : tensor<f32>
    %112 = stablehlo.broadcast_in_dim %111, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %113 = stablehlo.broadcast_in_dim %111, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %114 = stablehlo.multiply %110, %112 : tensor<8xf32>
    %115 = stablehlo.subtract %arg3, %114 : tensor<8xf32>
    %116 = stablehlo.convolution(%26, %98) dim_numbers = [f, 0, 1, b]x[i, 0, 1, o]->[0, 1, b, f], window = {stride = [1, 1], pad = [[0, 1], [0, 1]], lhs_dilate = [1, 1], rhs_dilate = [2, 2], reverse = [false, false]} {batch_group_count = 8 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<8x8x8x8xf32>, tensor<8x4x4x8xf32>) -> tensor<3x3x1x8xf32>
    %117 = sdy.constant dense<1.000000e-01> : tensor<f32>
    %118 = stablehlo.broadcast_in_dim %117, dims = [] : (tensor<f32>) -> tensor<3x3x1x8xf32>
    %119 = stablehlo.multiply %116, %118 : tensor<3x3x1x8xf32>
    %120 = stablehlo.subtract %arg4, %119 : tensor<3x3x1x8xf32>
    %121 = stablehlo.reduce(%98 init: %68) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<8x4x4x8xf32>, tensor<f32>) -> tensor<8xf32>
    %122 = stablehlo.reshape %121 : (tensor<8xf32>) -> tensor<1x1x1x8xf32>
    %123 = stablehlo.reduce(%122 init: %68) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<1x1x1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %124 = stablehlo.multiply %123, %113 : tensor<8xf32>
    %125 = stablehlo.subtract %arg5, %124 : tensor<8xf32>
    %126 = stablehlo.dot_general %94, %38, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x10xf32>, tensor<8x32xf32>) -> tensor<10x32xf32>
    %127 = stablehlo.transpose %126, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,10]{0,1}"} : (tensor<10x32xf32>) -> tensor<32x10xf32>
    %128 = sdy.constant dense<1.000000e-01> : tensor<f32>
    %129 = stablehlo.broadcast_in_dim %128, dims = [] : (tensor<f32>) -> tensor<32x10xf32>
    %130 = stablehlo.multiply %127, %129 {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,10]{0,1}"} : tensor<32x10xf32>
    %131 = stablehlo.subtract %arg6, %130 : tensor<32x10xf32>
    %132 = stablehlo.reduce(%94 init: %68) applies stablehlo.add across dimensions = [0] : (tensor<8x10xf32>, tensor<f32>) -> tensor<10xf32>
    %133 = stablehlo.reshape %132 : (tensor<10xf32>) -> tensor<1x10xf32>
    %134 = stablehlo.reduce(%133 init: %68) applies stablehlo.add across dimensions = [0] : (tensor<1x10xf32>, tensor<f32>) -> tensor<10xf32>
    %135 = sdy.constant dense<1.000000e-01> : tensor<f32>
    %136 = stablehlo.broadcast_in_dim %135, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %137 = stablehlo.multiply %134, %136 : tensor<10xf32>
    %138 = stablehlo.subtract %arg7, %137 : tensor<10xf32>
    return %72, %107, %115, %120, %125, %131, %138 : tensor<f32>, tensor<3x3x3x8xf32>, tensor<8xf32>, tensor<3x3x1x8xf32>, tensor<8xf32>, tensor<32x10xf32>, tensor<10xf32>
  }
}
