module @jit_gpt2_forward attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<64x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg1: tensor<8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg2: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg3: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg4: tensor<32x96xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg5: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg6: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg7: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg8: tensor<32x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg9: tensor<128x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg10: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg11: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg12: tensor<32x96xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg13: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg14: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg15: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg16: tensor<32x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg17: tensor<128x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg18: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg19: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg20: tensor<8x8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) -> tensor<8x8x64xf32> {
    %0 = sdy.constant dense<0> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<i32>) -> tensor<8x8xi32>
    %2 = stablehlo.compare LT, %arg20, %1 : (tensor<8x8xi32>, tensor<8x8xi32>) -> tensor<8x8xi1>
    %3 = sdy.constant dense<64> : tensor<i32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<i32>) -> tensor<8x8xi32>
    %5 = stablehlo.add %arg20, %4 : tensor<8x8xi32>
    %6 = stablehlo.select %2, %5, %arg20 : tensor<8x8xi1>, tensor<8x8xi32>
    %7 = stablehlo.reshape %6 : (tensor<8x8xi32>) -> tensor<8x8x1xi32>
    %8 = sdy.constant dense<0> : tensor<i32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [] : (tensor<i32>) -> tensor<8x8x1xi32>
    %10 = stablehlo.compare GE, %7, %9 : (tensor<8x8x1xi32>, tensor<8x8x1xi32>) -> tensor<8x8x1xi1>
    %11 = sdy.constant dense<63> : tensor<i32>
    %12 = stablehlo.broadcast_in_dim %11, dims = [] : (tensor<i32>) -> tensor<8x8x1xi32>
    %13 = stablehlo.compare LE, %7, %12 : (tensor<8x8x1xi32>, tensor<8x8x1xi32>) -> tensor<8x8x1xi1>
    %14 = stablehlo.and %10, %13 : tensor<8x8x1xi1>
    %15 = sdy.constant dense<true> : tensor<i1>
    %16 = stablehlo.reduce(%14 init: %15) applies stablehlo.and across dimensions = [2] : (tensor<8x8x1xi1>, tensor<i1>) -> tensor<8x8xi1>
    %17 = stablehlo.broadcast_in_dim %16, dims = [0, 1] : (tensor<8x8xi1>) -> tensor<8x8x32xi1>
    %18 = "stablehlo.gather"(%arg0, %7) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 32>}> : (tensor<64x32xf32>, tensor<8x8x1xi32>) -> tensor<8x8x32xf32>
    %19 = sdy.constant dense<0x7FC00000> : tensor<f32>
    %20 = stablehlo.broadcast_in_dim %19, dims = [] : (tensor<f32>) -> tensor<8x8x32xf32>
    %21 = stablehlo.select %17, %18, %20 : tensor<8x8x32xi1>, tensor<8x8x32xf32>
    %22 = stablehlo.reshape %arg1 : (tensor<8x32xf32>) -> tensor<1x8x32xf32>
    %23 = stablehlo.broadcast_in_dim %22, dims = [0, 1, 2] : (tensor<1x8x32xf32>) -> tensor<1x8x32xf32>
    %24 = stablehlo.reshape %23 : (tensor<1x8x32xf32>) -> tensor<8x32xf32>
    %25 = stablehlo.broadcast_in_dim %24, dims = [1, 2] : (tensor<8x32xf32>) -> tensor<8x8x32xf32>
    %26 = stablehlo.add %21, %25 : tensor<8x8x32xf32>
    %27 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %28 = stablehlo.reduce(%26 init: %27) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %29 = stablehlo.reshape %28 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %30 = sdy.constant dense<3.200000e+01> : tensor<f32>
    %31 = stablehlo.broadcast_in_dim %30, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %32 = stablehlo.broadcast_in_dim %30, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %33 = stablehlo.broadcast_in_dim %30, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %34 = stablehlo.broadcast_in_dim %30, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %35 = stablehlo.broadcast_in_dim %30, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %36 = stablehlo.broadcast_in_dim %30, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %37 = stablehlo.broadcast_in_dim %30, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %38 = stablehlo.broadcast_in_dim %30, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %39 = stablehlo.broadcast_in_dim %30, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %40 = stablehlo.broadcast_in_dim %30, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %41 = stablehlo.divide %29, %31 : tensor<8x8x1xf32>
    %42 = stablehlo.broadcast_in_dim %41, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %43 = stablehlo.reshape %42 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %44 = stablehlo.broadcast_in_dim %43, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %45 = stablehlo.subtract %26, %44 : tensor<8x8x32xf32>
    %46 = stablehlo.broadcast_in_dim %41, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %47 = stablehlo.reshape %46 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %48 = stablehlo.broadcast_in_dim %47, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %49 = stablehlo.subtract %26, %48 : tensor<8x8x32xf32>
    %50 = stablehlo.multiply %49, %49 : tensor<8x8x32xf32>
    %51 = stablehlo.reduce(%50 init: %27) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %52 = stablehlo.reshape %51 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %53 = stablehlo.divide %52, %32 : tensor<8x8x1xf32>
    %54 = sdy.constant dense<9.99999974E-6> : tensor<f32>
    %55 = stablehlo.broadcast_in_dim %54, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %56 = stablehlo.broadcast_in_dim %54, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %57 = stablehlo.broadcast_in_dim %54, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %58 = stablehlo.broadcast_in_dim %54, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %59 = stablehlo.broadcast_in_dim %54, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %60 = stablehlo.add %53, %55 : tensor<8x8x1xf32>
    %61 = stablehlo.rsqrt %60 : tensor<8x8x1xf32>
    %62 = stablehlo.broadcast_in_dim %61, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %63 = stablehlo.reshape %62 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %64 = stablehlo.broadcast_in_dim %63, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %65 = stablehlo.multiply %45, %64 : tensor<8x8x32xf32>
    %66 = stablehlo.reshape %arg2 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %67 = stablehlo.broadcast_in_dim %66, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
    %68 = stablehlo.reshape %67 : (tensor<1x1x32xf32>) -> tensor<32xf32>
    %69 = stablehlo.broadcast_in_dim %68, dims = [2] : (tensor<32xf32>) -> tensor<8x8x32xf32>
    %70 = stablehlo.multiply %65, %69 : tensor<8x8x32xf32>
    %71 = stablehlo.reshape %arg3 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %72 = stablehlo.broadcast_in_dim %71, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
    %73 = stablehlo.reshape %72 : (tensor<1x1x32xf32>) -> tensor<32xf32>
    %74 = stablehlo.broadcast_in_dim %73, dims = [2] : (tensor<32xf32>) -> tensor<8x8x32xf32>
    %75 = stablehlo.add %70, %74 : tensor<8x8x32xf32>
    %76 = stablehlo.dot_general %75, %arg4, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x96xf32>) -> tensor<8x8x96xf32>
    %77 = stablehlo.slice %76 [0:8, 0:8, 64:96] : (tensor<8x8x96xf32>) -> tensor<8x8x32xf32>
    %78 = stablehlo.reshape %77 : (tensor<8x8x32xf32>) -> tensor<8x8x4x8xf32>
    %79 = stablehlo.iota dim = 0 : tensor<8xi32>
    %80 = stablehlo.iota dim = 0 : tensor<8xi32>
    %81 = stablehlo.broadcast_in_dim %79, dims = [0] : (tensor<8xi32>) -> tensor<8x8xi32>
    %82 = stablehlo.broadcast_in_dim %80, dims = [0] : (tensor<8xi32>) -> tensor<8x8xi32>
    %83 = stablehlo.iota dim = 0 : tensor<8xi32>
    %84 = stablehlo.iota dim = 0 : tensor<8xi32>
    %85 = stablehlo.broadcast_in_dim %83, dims = [1] : (tensor<8xi32>) -> tensor<8x8xi32>
    %86 = stablehlo.broadcast_in_dim %84, dims = [1] : (tensor<8xi32>) -> tensor<8x8xi32>
    %87 = stablehlo.compare GE, %81, %85 : (tensor<8x8xi32>, tensor<8x8xi32>) -> tensor<8x8xi1>
    %88 = stablehlo.compare GE, %82, %86 : (tensor<8x8xi32>, tensor<8x8xi32>) -> tensor<8x8xi1>
    %89 = sdy.constant dense<true> : tensor<i1>
    %90 = stablehlo.broadcast_in_dim %89, dims = [] : (tensor<i1>) -> tensor<8x8xi1>
    %91 = stablehlo.broadcast_in_dim %89, dims = [] : (tensor<i1>) -> tensor<8x8xi1>
    %92 = sdy.constant dense<false> : tensor<i1>
    %93 = stablehlo.broadcast_in_dim %92, dims = [] : (tensor<i1>) -> tensor<8x8xi1>
    %94 = stablehlo.broadcast_in_dim %92, dims = [] : (tensor<i1>) -> tensor<8x8xi1>
    %95 = stablehlo.select %87, %90, %93 : tensor<8x8xi1>, tensor<8x8xi1>
    %96 = stablehlo.select %88, %91, %94 : tensor<8x8xi1>, tensor<8x8xi1>
    %97 = stablehlo.broadcast_in_dim %95, dims = [2, 3] : (tensor<8x8xi1>) -> tensor<8x4x8x8xi1>
    %98 = stablehlo.slice %76 [0:8, 0:8, 0:32] : (tensor<8x8x96xf32>) -> tensor<8x8x32xf32>
    %99 = stablehlo.reshape %98 : (tensor<8x8x32xf32>) -> tensor<8x8x4x8xf32>
    %100 = stablehlo.slice %76 [0:8, 0:8, 32:64] : (tensor<8x8x96xf32>) -> tensor<8x8x32xf32>
    %101 = stablehlo.reshape %100 : (tensor<8x8x32xf32>) -> tensor<8x8x4x8xf32>
    %102 = stablehlo.dot_general %99, %101, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x8x4x8xf32>, tensor<8x8x4x8xf32>) -> tensor<8x4x8x8xf32>
    %103 = sdy.constant dense<2.82842708> : tensor<f32>
    %104 = stablehlo.broadcast_in_dim %103, dims = [] : (tensor<f32>) -> tensor<8x4x8x8xf32>
    %105 = stablehlo.broadcast_in_dim %103, dims = [] : (tensor<f32>) -> tensor<8x4x8x8xf32>
    %106 = stablehlo.divide %102, %104 : tensor<8x4x8x8xf32>
    %107 = sdy.constant dense<-1.000000e+09> : tensor<f32>
    %108 = stablehlo.broadcast_in_dim %107, dims = [] : (tensor<f32>) -> tensor<8x4x8x8xf32>
    %109 = stablehlo.select %97, %106, %108 : tensor<8x4x8x8xi1>, tensor<8x4x8x8xf32>
    %110 = sdy.constant dense<0xFF800000> : tensor<f32>
    %111 = stablehlo.reduce(%109 init: %110) applies stablehlo.maximum across dimensions = [3] : (tensor<8x4x8x8xf32>, tensor<f32>) -> tensor<8x4x8xf32>
    %112 = sdy.constant dense<0xFF800000> : tensor<f32>
    %113 = stablehlo.broadcast_in_dim %112, dims = [] : (tensor<f32>) -> tensor<8x4x8xf32>
    %114 = stablehlo.broadcast_in_dim %112, dims = [] : (tensor<f32>) -> tensor<8x4x8xf32>
    %115 = stablehlo.maximum %111, %113 : tensor<8x4x8xf32>
    %116 = stablehlo.reshape %115 : (tensor<8x4x8xf32>) -> tensor<8x4x8x1xf32>
    %117 = stablehlo.broadcast_in_dim %116, dims = [0, 1, 2, 3] : (tensor<8x4x8x1xf32>) -> tensor<8x4x8x1xf32>
    %118 = stablehlo.reshape %117 : (tensor<8x4x8x1xf32>) -> tensor<8x4x8xf32>
    %119 = stablehlo.broadcast_in_dim %118, dims = [0, 1, 2] : (tensor<8x4x8xf32>) -> tensor<8x4x8x8xf32>
    %120 = stablehlo.subtract %109, %119 : tensor<8x4x8x8xf32>
    %121 = stablehlo.exponential %120 : tensor<8x4x8x8xf32>
    %122 = stablehlo.reduce(%121 init: %27) applies stablehlo.add across dimensions = [3] : (tensor<8x4x8x8xf32>, tensor<f32>) -> tensor<8x4x8xf32>
    %123 = stablehlo.reshape %122 : (tensor<8x4x8xf32>) -> tensor<8x4x8x1xf32>
    %124 = stablehlo.broadcast_in_dim %123, dims = [0, 1, 2, 3] : (tensor<8x4x8x1xf32>) -> tensor<8x4x8x1xf32>
    %125 = stablehlo.reshape %124 : (tensor<8x4x8x1xf32>) -> tensor<8x4x8xf32>
    %126 = stablehlo.broadcast_in_dim %125, dims = [0, 1, 2] : (tensor<8x4x8xf32>) -> tensor<8x4x8x8xf32>
    %127 = stablehlo.divide %121, %126 : tensor<8x4x8x8xf32>
    %128 = stablehlo.dot_general %78, %127, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x8x4x8xf32>, tensor<8x4x8x8xf32>) -> tensor<8x4x8x8xf32>
    %129 = stablehlo.transpose %128, dims = [0, 3, 1, 2] {result_layout = dense<[1, 3, 2, 0]> : tensor<4xindex>, xla_shape = "f32[8,8,4,8]{1,3,2,0}"} : (tensor<8x4x8x8xf32>) -> tensor<8x8x4x8xf32>
    %130 = stablehlo.reshape %129 : (tensor<8x8x4x8xf32>) -> tensor<8x8x32xf32>
    %131 = stablehlo.dot_general %130, %arg5, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x32xf32>) -> tensor<8x8x32xf32>
    %132 = stablehlo.add %26, %131 : tensor<8x8x32xf32>
    %133 = stablehlo.reduce(%132 init: %27) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %134 = stablehlo.reshape %133 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %135 = stablehlo.divide %134, %33 : tensor<8x8x1xf32>
    %136 = stablehlo.broadcast_in_dim %135, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %137 = stablehlo.reshape %136 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %138 = stablehlo.broadcast_in_dim %137, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %139 = stablehlo.subtract %132, %138 : tensor<8x8x32xf32>
    %140 = stablehlo.broadcast_in_dim %135, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %141 = stablehlo.reshape %140 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %142 = stablehlo.broadcast_in_dim %141, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %143 = stablehlo.subtract %132, %142 : tensor<8x8x32xf32>
    %144 = stablehlo.multiply %143, %143 : tensor<8x8x32xf32>
    %145 = stablehlo.reduce(%144 init: %27) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %146 = stablehlo.reshape %145 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %147 = stablehlo.divide %146, %34 : tensor<8x8x1xf32>
    %148 = stablehlo.add %147, %56 : tensor<8x8x1xf32>
    %149 = stablehlo.rsqrt %148 : tensor<8x8x1xf32>
    %150 = stablehlo.broadcast_in_dim %149, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %151 = stablehlo.reshape %150 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %152 = stablehlo.broadcast_in_dim %151, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %153 = stablehlo.multiply %139, %152 : tensor<8x8x32xf32>
    %154 = stablehlo.reshape %arg6 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %155 = stablehlo.broadcast_in_dim %154, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
    %156 = stablehlo.reshape %155 : (tensor<1x1x32xf32>) -> tensor<32xf32>
    %157 = stablehlo.broadcast_in_dim %156, dims = [2] : (tensor<32xf32>) -> tensor<8x8x32xf32>
    %158 = stablehlo.multiply %153, %157 : tensor<8x8x32xf32>
    %159 = stablehlo.reshape %arg7 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %160 = stablehlo.broadcast_in_dim %159, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
    %161 = stablehlo.reshape %160 : (tensor<1x1x32xf32>) -> tensor<32xf32>
    %162 = stablehlo.broadcast_in_dim %161, dims = [2] : (tensor<32xf32>) -> tensor<8x8x32xf32>
    %163 = stablehlo.add %158, %162 : tensor<8x8x32xf32>
    %164 = stablehlo.dot_general %163, %arg8, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x128xf32>) -> tensor<8x8x128xf32>
    %165 = stablehlo.multiply %164, %164 : tensor<8x8x128xf32>
    %166 = stablehlo.multiply %165, %164 : tensor<8x8x128xf32>
    %167 = sdy.constant dense<4.471500e-02> : tensor<f32>
    %168 = stablehlo.broadcast_in_dim %167, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %169 = stablehlo.broadcast_in_dim %167, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %170 = stablehlo.multiply %166, %168 : tensor<8x8x128xf32>
    %171 = stablehlo.add %164, %170 : tensor<8x8x128xf32>
    %172 = sdy.constant dense<0.797884583> : tensor<f32>
    %173 = stablehlo.broadcast_in_dim %172, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %174 = stablehlo.broadcast_in_dim %172, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %175 = stablehlo.multiply %171, %173 : tensor<8x8x128xf32>
    %176 = stablehlo.tanh %175 : tensor<8x8x128xf32>
    %177 = sdy.constant dense<1.000000e+00> : tensor<f32>
    %178 = stablehlo.broadcast_in_dim %177, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %179 = stablehlo.broadcast_in_dim %177, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %180 = stablehlo.add %176, %178 : tensor<8x8x128xf32>
    %181 = sdy.constant dense<5.000000e-01> : tensor<f32>
    %182 = stablehlo.broadcast_in_dim %181, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %183 = stablehlo.broadcast_in_dim %181, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %184 = stablehlo.multiply %180, %182 : tensor<8x8x128xf32>
    %185 = stablehlo.multiply %164, %184 : tensor<8x8x128xf32>
    %186 = stablehlo.dot_general %185, %arg9, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x128xf32>, tensor<128x32xf32>) -> tensor<8x8x32xf32>
    %187 = stablehlo.add %132, %186 : tensor<8x8x32xf32>
    %188 = stablehlo.reduce(%187 init: %27) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %189 = stablehlo.reshape %188 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %190 = stablehlo.divide %189, %35 : tensor<8x8x1xf32>
    %191 = stablehlo.broadcast_in_dim %190, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %192 = stablehlo.reshape %191 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %193 = stablehlo.broadcast_in_dim %192, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %194 = stablehlo.subtract %187, %193 : tensor<8x8x32xf32>
    %195 = stablehlo.broadcast_in_dim %190, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %196 = stablehlo.reshape %195 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %197 = stablehlo.broadcast_in_dim %196, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %198 = stablehlo.subtract %187, %197 : tensor<8x8x32xf32>
    %199 = stablehlo.multiply %198, %198 : tensor<8x8x32xf32>
    %200 = stablehlo.reduce(%199 init: %27) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %201 = stablehlo.reshape %200 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %202 = stablehlo.divide %201, %36 : tensor<8x8x1xf32>
    %203 = stablehlo.add %202, %57 : tensor<8x8x1xf32>
    %204 = stablehlo.rsqrt %203 : tensor<8x8x1xf32>
    %205 = stablehlo.broadcast_in_dim %204, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %206 = stablehlo.reshape %205 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %207 = stablehlo.broadcast_in_dim %206, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %208 = stablehlo.multiply %194, %207 : tensor<8x8x32xf32>
    %209 = stablehlo.reshape %arg10 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %210 = stablehlo.broadcast_in_dim %209, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
    %211 = stablehlo.reshape %210 : (tensor<1x1x32xf32>) -> tensor<32xf32>
    %212 = stablehlo.broadcast_in_dim %211, dims = [2] : (tensor<32xf32>) -> tensor<8x8x32xf32>
    %213 = stablehlo.multiply %208, %212 : tensor<8x8x32xf32>
    %214 = stablehlo.reshape %arg11 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %215 = stablehlo.broadcast_in_dim %214, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
    %216 = stablehlo.reshape %215 : (tensor<1x1x32xf32>) -> tensor<32xf32>
    %217 = stablehlo.broadcast_in_dim %216, dims = [2] : (tensor<32xf32>) -> tensor<8x8x32xf32>
    %218 = stablehlo.add %213, %217 : tensor<8x8x32xf32>
    %219 = stablehlo.dot_general %218, %arg12, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x96xf32>) -> tensor<8x8x96xf32>
    %220 = stablehlo.slice %219 [0:8, 0:8, 64:96] : (tensor<8x8x96xf32>) -> tensor<8x8x32xf32>
    %221 = stablehlo.reshape %220 : (tensor<8x8x32xf32>) -> tensor<8x8x4x8xf32>
    %222 = stablehlo.broadcast_in_dim %96, dims = [2, 3] : (tensor<8x8xi1>) -> tensor<8x4x8x8xi1>
    %223 = stablehlo.slice %219 [0:8, 0:8, 0:32] : (tensor<8x8x96xf32>) -> tensor<8x8x32xf32>
    %224 = stablehlo.reshape %223 : (tensor<8x8x32xf32>) -> tensor<8x8x4x8xf32>
    %225 = stablehlo.slice %219 [0:8, 0:8, 32:64] : (tensor<8x8x96xf32>) -> tensor<8x8x32xf32>
    %226 = stablehlo.reshape %225 : (tensor<8x8x32xf32>) -> tensor<8x8x4x8xf32>
    %227 = stablehlo.dot_general %224, %226, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x8x4x8xf32>, tensor<8x8x4x8xf32>) -> tensor<8x4x8x8xf32>
    %228 = stablehlo.divide %227, %105 : tensor<8x4x8x8xf32>
    %229 = stablehlo.broadcast_in_dim %107, dims = [] : (tensor<f32>) -> tensor<8x4x8x8xf32>
    %230 = stablehlo.select %222, %228, %229 : tensor<8x4x8x8xi1>, tensor<8x4x8x8xf32>
    %231 = stablehlo.reduce(%230 init: %110) applies stablehlo.maximum across dimensions = [3] : (tensor<8x4x8x8xf32>, tensor<f32>) -> tensor<8x4x8xf32>
    %232 = stablehlo.maximum %231, %114 : tensor<8x4x8xf32>
    %233 = stablehlo.reshape %232 : (tensor<8x4x8xf32>) -> tensor<8x4x8x1xf32>
    %234 = stablehlo.broadcast_in_dim %233, dims = [0, 1, 2, 3] : (tensor<8x4x8x1xf32>) -> tensor<8x4x8x1xf32>
    %235 = stablehlo.reshape %234 : (tensor<8x4x8x1xf32>) -> tensor<8x4x8xf32>
    %236 = stablehlo.broadcast_in_dim %235, dims = [0, 1, 2] : (tensor<8x4x8xf32>) -> tensor<8x4x8x8xf32>
    %237 = stablehlo.subtract %230, %236 : tensor<8x4x8x8xf32>
    %238 = stablehlo.exponential %237 : tensor<8x4x8x8xf32>
    %239 = stablehlo.reduce(%238 init: %27) applies stablehlo.add across dimensions = [3] : (tensor<8x4x8x8xf32>, tensor<f32>) -> tensor<8x4x8xf32>
    %240 = stablehlo.reshape %239 : (tensor<8x4x8xf32>) -> tensor<8x4x8x1xf32>
    %241 = stablehlo.broadcast_in_dim %240, dims = [0, 1, 2, 3] : (tensor<8x4x8x1xf32>) -> tensor<8x4x8x1xf32>
    %242 = stablehlo.reshape %241 : (tensor<8x4x8x1xf32>) -> tensor<8x4x8xf32>
    %243 = stablehlo.broadcast_in_dim %242, dims = [0, 1, 2] : (tensor<8x4x8xf32>) -> tensor<8x4x8x8xf32>
    %244 = stablehlo.divide %238, %243 : tensor<8x4x8x8xf32>
    %245 = stablehlo.dot_general %221, %244, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x8x4x8xf32>, tensor<8x4x8x8xf32>) -> tensor<8x4x8x8xf32>
    %246 = stablehlo.transpose %245, dims = [0, 3, 1, 2] {result_layout = dense<[1, 3, 2, 0]> : tensor<4xindex>, xla_shape = "f32[8,8,4,8]{1,3,2,0}"} : (tensor<8x4x8x8xf32>) -> tensor<8x8x4x8xf32>
    %247 = stablehlo.reshape %246 : (tensor<8x8x4x8xf32>) -> tensor<8x8x32xf32>
    %248 = stablehlo.dot_general %247, %arg13, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x32xf32>) -> tensor<8x8x32xf32>
    %249 = stablehlo.add %187, %248 : tensor<8x8x32xf32>
    %250 = stablehlo.reduce(%249 init: %27) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %251 = stablehlo.reshape %250 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %252 = stablehlo.divide %251, %37 : tensor<8x8x1xf32>
    %253 = stablehlo.broadcast_in_dim %252, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %254 = stablehlo.reshape %253 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %255 = stablehlo.broadcast_in_dim %254, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %256 = stablehlo.subtract %249, %255 : tensor<8x8x32xf32>
    %257 = stablehlo.broadcast_in_dim %252, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %258 = stablehlo.reshape %257 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %259 = stablehlo.broadcast_in_dim %258, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %260 = stablehlo.subtract %249, %259 : tensor<8x8x32xf32>
    %261 = stablehlo.multiply %260, %260 : tensor<8x8x32xf32>
    %262 = stablehlo.reduce(%261 init: %27) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %263 = stablehlo.reshape %262 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %264 = stablehlo.divide %263, %38 : tensor<8x8x1xf32>
    %265 = stablehlo.add %264, %58 : tensor<8x8x1xf32>
    %266 = stablehlo.rsqrt %265 : tensor<8x8x1xf32>
    %267 = stablehlo.broadcast_in_dim %266, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %268 = stablehlo.reshape %267 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %269 = stablehlo.broadcast_in_dim %268, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %270 = stablehlo.multiply %256, %269 : tensor<8x8x32xf32>
    %271 = stablehlo.reshape %arg14 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %272 = stablehlo.broadcast_in_dim %271, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
    %273 = stablehlo.reshape %272 : (tensor<1x1x32xf32>) -> tensor<32xf32>
    %274 = stablehlo.broadcast_in_dim %273, dims = [2] : (tensor<32xf32>) -> tensor<8x8x32xf32>
    %275 = stablehlo.multiply %270, %274 : tensor<8x8x32xf32>
    %276 = stablehlo.reshape %arg15 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %277 = stablehlo.broadcast_in_dim %276, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
    %278 = stablehlo.reshape %277 : (tensor<1x1x32xf32>) -> tensor<32xf32>
    %279 = stablehlo.broadcast_in_dim %278, dims = [2] : (tensor<32xf32>) -> tensor<8x8x32xf32>
    %280 = stablehlo.add %275, %279 : tensor<8x8x32xf32>
    %281 = stablehlo.dot_general %280, %arg16, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x128xf32>) -> tensor<8x8x128xf32>
    %282 = stablehlo.multiply %281, %281 : tensor<8x8x128xf32>
    %283 = stablehlo.multiply %282, %281 : tensor<8x8x128xf32>
    %284 = stablehlo.multiply %283, %169 : tensor<8x8x128xf32>
    %285 = stablehlo.add %281, %284 : tensor<8x8x128xf32>
    %286 = stablehlo.multiply %285, %174 : tensor<8x8x128xf32>
    %287 = stablehlo.tanh %286 : tensor<8x8x128xf32>
    %288 = stablehlo.add %287, %179 : tensor<8x8x128xf32>
    %289 = stablehlo.multiply %288, %183 : tensor<8x8x128xf32>
    %290 = stablehlo.multiply %281, %289 : tensor<8x8x128xf32>
    %291 = stablehlo.dot_general %290, %arg17, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x128xf32>, tensor<128x32xf32>) -> tensor<8x8x32xf32>
    %292 = stablehlo.add %249, %291 : tensor<8x8x32xf32>
    %293 = stablehlo.reduce(%292 init: %27) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %294 = stablehlo.reshape %293 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %295 = stablehlo.divide %294, %39 : tensor<8x8x1xf32>
    %296 = stablehlo.broadcast_in_dim %295, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %297 = stablehlo.reshape %296 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %298 = stablehlo.broadcast_in_dim %297, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %299 = stablehlo.subtract %292, %298 : tensor<8x8x32xf32>
    %300 = stablehlo.broadcast_in_dim %295, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %301 = stablehlo.reshape %300 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %302 = stablehlo.broadcast_in_dim %301, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %303 = stablehlo.subtract %292, %302 : tensor<8x8x32xf32>
    %304 = stablehlo.multiply %303, %303 : tensor<8x8x32xf32>
    %305 = stablehlo.reduce(%304 init: %27) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %306 = stablehlo.reshape %305 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %307 = stablehlo.divide %306, %40 : tensor<8x8x1xf32>
    %308 = stablehlo.add %307, %59 : tensor<8x8x1xf32>
    %309 = stablehlo.rsqrt %308 : tensor<8x8x1xf32>
    %310 = stablehlo.broadcast_in_dim %309, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %311 = stablehlo.reshape %310 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %312 = stablehlo.broadcast_in_dim %311, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %313 = stablehlo.multiply %299, %312 : tensor<8x8x32xf32>
    %314 = stablehlo.reshape %arg18 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %315 = stablehlo.broadcast_in_dim %314, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
    %316 = stablehlo.reshape %315 : (tensor<1x1x32xf32>) -> tensor<32xf32>
    %317 = stablehlo.broadcast_in_dim %316, dims = [2] : (tensor<32xf32>) -> tensor<8x8x32xf32>
    %318 = stablehlo.multiply %313, %317 : tensor<8x8x32xf32>
    %319 = stablehlo.reshape %arg19 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %320 = stablehlo.broadcast_in_dim %319, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
    %321 = stablehlo.reshape %320 : (tensor<1x1x32xf32>) -> tensor<32xf32>
    %322 = stablehlo.broadcast_in_dim %321, dims = [2] : (tensor<32xf32>) -> tensor<8x8x32xf32>
    %323 = stablehlo.add %318, %322 : tensor<8x8x32xf32>
    %324 = stablehlo.transpose %arg0, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,64]{0,1}"} : (tensor<64x32xf32>) -> tensor<32x64xf32>
    %325 = stablehlo.dot_general %323, %324, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x64xf32>) -> tensor<8x8x64xf32>
    return %325 : tensor<8x8x64xf32>
  }
}
