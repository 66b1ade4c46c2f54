module @jit_gpt2_train_step attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<64x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg1: tensor<8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg2: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg3: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg4: tensor<32x96xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg5: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg6: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg7: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg8: tensor<32x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg9: tensor<128x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg10: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg11: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg12: tensor<32x96xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg13: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg14: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg15: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg16: tensor<32x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg17: tensor<128x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg18: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg19: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg20: tensor<8x8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg21: tensor<8x8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) -> (tensor<f32>, tensor<64x32xf32>, tensor<8x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x128xf32>, tensor<128x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x128xf32>, tensor<128x32xf32>, tensor<32xf32>, tensor<32xf32>) {
    %0 = stablehlo.reshape %arg21 : (tensor<8x8xi32>) -> tensor<8x8x1xi32>
    %1 = sdy.constant dense<0> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [] : (tensor<i32>) -> tensor<8x8x1xi32>
    %3 = stablehlo.compare LT, %0, %2 : (tensor<8x8x1xi32>, tensor<8x8x1xi32>) -> tensor<8x8x1xi1>
    %4 = sdy.constant dense<64> : tensor<i32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [] : (tensor<i32>) -> tensor<8x8x1xi32>
    %6 = stablehlo.add %0, %5 : tensor<8x8x1xi32>
    %7 = stablehlo.select %3, %6, %0 : tensor<8x8x1xi1>, tensor<8x8x1xi32>
    %8 = stablehlo.reshape %7 : (tensor<8x8x1xi32>) -> tensor<8x8x1x1xi32>
    %9 = sdy.constant dense<0> : tensor<i32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [] : (tensor<i32>) -> tensor<8x8x1x1xi32>
    %11 = stablehlo.compare GE, %8, %10 : (tensor<8x8x1x1xi32>, tensor<8x8x1x1xi32>) -> tensor<8x8x1x1xi1>
    %12 = sdy.constant dense<63> : tensor<i32>
    %13 = stablehlo.broadcast_in_dim %12, dims = [] : (tensor<i32>) -> tensor<8x8x1x1xi32>
    %14 = stablehlo.compare LE, %8, %13 : (tensor<8x8x1x1xi32>, tensor<8x8x1x1xi32>) -> tensor<8x8x1x1xi1>
    %15 = stablehlo.and %11, %14 : tensor<8x8x1x1xi1>
    %16 = sdy.constant dense<true> : tensor<i1>
    %17 = stablehlo.reduce(%15 init: %16) applies stablehlo.and across dimensions = [3] : (tensor<8x8x1x1xi1>, tensor<i1>) -> tensor<8x8x1xi1>
    %18 = sdy.constant dense<0> : tensor<i32>
    %19 = stablehlo.broadcast_in_dim %18, dims = [] : (tensor<i32>) -> tensor<8x8xi32>
    %20 = stablehlo.compare LT, %arg20, %19 : (tensor<8x8xi32>, tensor<8x8xi32>) -> tensor<8x8xi1>
    %21 = sdy.constant dense<64> : tensor<i32>
    %22 = stablehlo.broadcast_in_dim %21, dims = [] : (tensor<i32>) -> tensor<8x8xi32>
    %23 = stablehlo.add %arg20, %22 : tensor<8x8xi32>
    %24 = stablehlo.select %20, %23, %arg20 : tensor<8x8xi1>, tensor<8x8xi32>
    %25 = stablehlo.reshape %24 : (tensor<8x8xi32>) -> tensor<8x8x1xi32>
    %26 = sdy.constant dense<0> : tensor<i32>
    %27 = stablehlo.broadcast_in_dim %26, dims = [] : (tensor<i32>) -> tensor<8x8x1xi32>
    %28 = stablehlo.compare GE, %25, %27 : (tensor<8x8x1xi32>, tensor<8x8x1xi32>) -> tensor<8x8x1xi1>
    %29 = sdy.constant dense<63> : tensor<i32>
    %30 = stablehlo.broadcast_in_dim %29, dims = [] : (tensor<i32>) -> tensor<8x8x1xi32>
    %31 = stablehlo.compare LE, %25, %30 : (tensor<8x8x1xi32>, tensor<8x8x1xi32>) -> tensor<8x8x1xi1>
    %32 = stablehlo.and %28, %31 : tensor<8x8x1xi1>
    %33 = sdy.constant dense<true> : tensor<i1>
    %34 = stablehlo.reduce(%32 init: %33) applies stablehlo.and across dimensions = [2] : (tensor<8x8x1xi1>, tensor<i1>) -> tensor<8x8xi1>
    %35 = stablehlo.broadcast_in_dim %34, dims = [0, 1] : (tensor<8x8xi1>) -> tensor<8x8x32xi1>
    %36 = "stablehlo.gather"(%arg0, %25) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 32>}> : (tensor<64x32xf32>, tensor<8x8x1xi32>) -> tensor<8x8x32xf32>
    %37 = sdy.constant dense<0x7FC00000> : tensor<f32>
    %38 = stablehlo.broadcast_in_dim %37, dims = [] : (tensor<f32>) -> tensor<8x8x32xf32>
    %39 = stablehlo.select %35, %36, %38 : tensor<8x8x32xi1>, tensor<8x8x32xf32>
    %40 = stablehlo.reshape %arg1 : (tensor<8x32xf32>) -> tensor<1x8x32xf32>
    %41 = stablehlo.broadcast_in_dim %40, dims = [0, 1, 2] : (tensor<1x8x32xf32>) -> tensor<1x8x32xf32>
    %42 = stablehlo.reshape %41 : (tensor<1x8x32xf32>) -> tensor<8x32xf32>
    %43 = stablehlo.broadcast_in_dim %42, dims = [1, 2] : (tensor<8x32xf32>) -> tensor<8x8x32xf32>
    %44 = stablehlo.add %39, %43 : tensor<8x8x32xf32>
    %45 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %46 = stablehlo.reduce(%44 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %47 = stablehlo.reshape %46 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %48 = sdy.constant dense<3.200000e+01> : tensor<f32>
    %49 = stablehlo.broadcast_in_dim %48, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %50 = stablehlo.broadcast_in_dim %48, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %51 = stablehlo.broadcast_in_dim %48, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %52 = stablehlo.broadcast_in_dim %48, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %53 = stablehlo.broadcast_in_dim %48, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %54 = stablehlo.broadcast_in_dim %48, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %55 = stablehlo.broadcast_in_dim %48, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %56 = stablehlo.broadcast_in_dim %48, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %57 = stablehlo.broadcast_in_dim %48, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %58 = stablehlo.broadcast_in_dim %48, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %59 = stablehlo.broadcast_in_dim %48, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %60 = stablehlo.broadcast_in_dim %48, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %61 = stablehlo.broadcast_in_dim %48, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %62 = stablehlo.broadcast_in_dim %48, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %63 = stablehlo.broadcast_in_dim %48, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %64 = stablehlo.broadcast_in_dim %48, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %65 = stablehlo.broadcast_in_dim %48, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %66 = stablehlo.broadcast_in_dim %48, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %67 = stablehlo.broadcast_in_dim %48, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %68 = stablehlo.broadcast_in_dim %48, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %69 = stablehlo.divide %47, %49 : tensor<8x8x1xf32>
    %70 = stablehlo.broadcast_in_dim %69, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %71 = stablehlo.reshape %70 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %72 = stablehlo.broadcast_in_dim %71, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %73 = stablehlo.subtract %44, %72 : tensor<8x8x32xf32>
    %74 = stablehlo.broadcast_in_dim %69, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %75 = stablehlo.reshape %74 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %76 = stablehlo.broadcast_in_dim %75, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %77 = stablehlo.subtract %44, %76 : tensor<8x8x32xf32>
    %78 = stablehlo.multiply %77, %77 : tensor<8x8x32xf32>
    %79 = stablehlo.reduce(%78 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %80 = stablehlo.reshape %79 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %81 = stablehlo.divide %80, %50 : tensor<8x8x1xf32>
    %82 = sdy.constant dense<9.99999974E-6> : tensor<f32>
    %83 = stablehlo.broadcast_in_dim %82, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %84 = stablehlo.broadcast_in_dim %82, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %85 = stablehlo.broadcast_in_dim %82, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %86 = stablehlo.broadcast_in_dim %82, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %87 = stablehlo.broadcast_in_dim %82, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %88 = stablehlo.add %81, %83 : tensor<8x8x1xf32>
    %89 = stablehlo.rsqrt %88 : tensor<8x8x1xf32>
    %90 = stablehlo.broadcast_in_dim %89, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %91 = stablehlo.reshape %90 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %92 = stablehlo.broadcast_in_dim %91, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %93 = stablehlo.multiply %73, %92 : tensor<8x8x32xf32>
    %94 = stablehlo.reshape %arg2 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %95 = stablehlo.broadcast_in_dim %94, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
    %96 = stablehlo.reshape %95 : (tensor<1x1x32xf32>) -> tensor<32xf32>
    %97 = stablehlo.broadcast_in_dim %96, dims = [2] : (tensor<32xf32>) -> tensor<8x8x32xf32>
    %98 = stablehlo.multiply %93, %97 : tensor<8x8x32xf32>
    %99 = stablehlo.reshape %arg3 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %100 = stablehlo.broadcast_in_dim %99, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
    %101 = stablehlo.reshape %100 : (tensor<1x1x32xf32>) -> tensor<32xf32>
    %102 = stablehlo.broadcast_in_dim %101, dims = [2] : (tensor<32xf32>) -> tensor<8x8x32xf32>
    %103 = stablehlo.add %98, %102 : tensor<8x8x32xf32>
    %104 = stablehlo.dot_general %103, %arg4, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x96xf32>) -> tensor<8x8x96xf32>
    %105 = stablehlo.slice %104 [0:8, 0:8, 64:96] : (tensor<8x8x96xf32>) -> tensor<8x8x32xf32>
    %106 = stablehlo.reshape %105 : (tensor<8x8x32xf32>) -> tensor<8x8x4x8xf32>
    %107 = stablehlo.iota dim = 0 : tensor<8xi32>
    %108 = stablehlo.iota dim = 0 : tensor<8xi32>
    %109 = stablehlo.iota dim = 0 : tensor<8xi32>
    %110 = stablehlo.iota dim = 0 : tensor<8xi32>
    %111 = stablehlo.broadcast_in_dim %107, dims = [0] : (tensor<8xi32>) -> tensor<8x8xi32>
    %112 = stablehlo.broadcast_in_dim %108, dims = [0] : (tensor<8xi32>) -> tensor<8x8xi32>
    %113 = stablehlo.broadcast_in_dim %109, dims = [0] : (tensor<8xi32>) -> tensor<8x8xi32>
    %114 = stablehlo.broadcast_in_dim %110, dims = [0] : (tensor<8xi32>) -> tensor<8x8xi32>
    %115 = stablehlo.iota dim = 0 : tensor<8xi32>
    %116 = stablehlo.iota dim = 0 : tensor<8xi32>
    %117 = stablehlo.iota dim = 0 : tensor<8xi32>
    %118 = stablehlo.iota dim = 0 : tensor<8xi32>
    %119 = stablehlo.broadcast_in_dim %115, dims = [1] : (tensor<8xi32>) -> tensor<8x8xi32>
    %120 = stablehlo.broadcast_in_dim %116, dims = [1] : (tensor<8xi32>) -> tensor<8x8xi32>
    %121 = stablehlo.broadcast_in_dim %117, dims = [1] : (tensor<8xi32>) -> tensor<8x8xi32>
    %122 = stablehlo.broadcast_in_dim %118, dims = [1] : (tensor<8xi32>) -> tensor<8x8xi32>
    %123 = stablehlo.compare GE, %111, %119 : (tensor<8x8xi32>, tensor<8x8xi32>) -> tensor<8x8xi1>
    %124 = stablehlo.compare GE, %112, %120 : (tensor<8x8xi32>, tensor<8x8xi32>) -> tensor<8x8xi1>
    %125 = stablehlo.compare GE, %113, %121 : (tensor<8x8xi32>, tensor<8x8xi32>) -> tensor<8x8xi1>
    %126 = stablehlo.compare GE, %114, %122 : (tensor<8x8xi32>, tensor<8x8xi32>) -> tensor<8x8xi1>
    %127 = sdy.constant dense<true> : tensor<i1>
    %128 = stablehlo.broadcast_in_dim %127, dims = [] : (tensor<i1>) -> tensor<8x8xi1>
    %129 = stablehlo.broadcast_in_dim %127, dims = [] : (tensor<i1>) -> tensor<8x8xi1>
    %130 = stablehlo.broadcast_in_dim %127, dims = [] : (tensor<i1>) -> tensor<8x8xi1>
    %131 = stablehlo.broadcast_in_dim %127, dims = [] : (tensor<i1>) -> tensor<8x8xi1>
    %132 = sdy.constant dense<false> : tensor<i1>
    %133 = stablehlo.broadcast_in_dim %132, dims = [] : (tensor<i1>) -> tensor<8x8xi1>
    %134 = stablehlo.broadcast_in_dim %132, dims = [] : (tensor<i1>) -> tensor<8x8xi1>
    %135 = stablehlo.broadcast_in_dim %132, dims = [] : (tensor<i1>) -> tensor<8x8xi1>
    %136 = stablehlo.broadcast_in_dim %132, dims = [] : (tensor<i1>) -> tensor<8x8xi1>
    %137 = stablehlo.select %123, %128, %133 : tensor<8x8xi1>, tensor<8x8xi1>
    %138 = stablehlo.select %124, %129, %134 : tensor<8x8xi1>, tensor<8x8xi1>
    %139 = stablehlo.select %125, %130, %135 : tensor<8x8xi1>, tensor<8x8xi1>
    %140 = stablehlo.select %126, %131, %136 : tensor<8x8xi1>, tensor<8x8xi1>
    %141 = stablehlo.broadcast_in_dim %137, dims = [2, 3] : (tensor<8x8xi1>) -> tensor<8x4x8x8xi1>
    %142 = stablehlo.broadcast_in_dim %140, dims = [2, 3] : (tensor<8x8xi1>) -> tensor<8x4x8x8xi1>
    %143 = stablehlo.slice %104 [0:8, 0:8, 0:32] : (tensor<8x8x96xf32>) -> tensor<8x8x32xf32>
    %144 = stablehlo.reshape %143 : (tensor<8x8x32xf32>) -> tensor<8x8x4x8xf32>
    %145 = stablehlo.slice %104 [0:8, 0:8, 32:64] : (tensor<8x8x96xf32>) -> tensor<8x8x32xf32>
    %146 = stablehlo.reshape %145 : (tensor<8x8x32xf32>) -> tensor<8x8x4x8xf32>
    %147 = stablehlo.dot_general %144, %146, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x8x4x8xf32>, tensor<8x8x4x8xf32>) -> tensor<8x4x8x8xf32>
    %148 = sdy.constant dense<2.82842708> : tensor<f32>
    %149 = stablehlo.broadcast_in_dim %148, dims = [] : (tensor<f32>) -> tensor<8x4x8x8xf32>
    %150 = stablehlo.broadcast_in_dim %148, dims = [] : (tensor<f32>) -> tensor<8x4x8x8xf32>
    %151 = stablehlo.broadcast_in_dim %148, dims = [] : (tensor<f32>) -> tensor<8x4x8x8xf32>
    %152 = stablehlo.broadcast_in_dim %148, dims = [] : (tensor<f32>) -> tensor<8x4x8x8xf32>
    %153 = stablehlo.divide %147, %149 : tensor<8x4x8x8xf32>
    %154 = sdy.constant dense<-1.000000e+09> : tensor<f32>
    %155 = stablehlo.broadcast_in_dim %154, dims = [] : (tensor<f32>) -> tensor<8x4x8x8xf32>
    %156 = stablehlo.select %141, %153, %155 : tensor<8x4x8x8xi1>, tensor<8x4x8x8xf32>
    %157 = sdy.constant dense<0xFF800000> : tensor<f32>
    %158 = stablehlo.reduce(%156 init: %157) applies stablehlo.maximum across dimensions = [3] : (tensor<8x4x8x8xf32>, tensor<f32>) -> tensor<8x4x8xf32>
    %159 = sdy.constant dense<0xFF800000> : tensor<f32>
    %160 = stablehlo.broadcast_in_dim %159, dims = [] : (tensor<f32>) -> tensor<8x4x8xf32>
    %161 = stablehlo.broadcast_in_dim %159, dims = [] : (tensor<f32>) -> tensor<8x4x8xf32>
    %162 = stablehlo.maximum %158, %160 : tensor<8x4x8xf32>
    %163 = stablehlo.reshape %162 : (tensor<8x4x8xf32>) -> tensor<8x4x8x1xf32>
    %164 = stablehlo.broadcast_in_dim %163, dims = [0, 1, 2, 3] : (tensor<8x4x8x1xf32>) -> tensor<8x4x8x1xf32>
    %165 = stablehlo.reshape %164 : (tensor<8x4x8x1xf32>) -> tensor<8x4x8xf32>
    %166 = stablehlo.broadcast_in_dim %165, dims = [0, 1, 2] : (tensor<8x4x8xf32>) -> tensor<8x4x8x8xf32>
    %167 = stablehlo.subtract %156, %166 : tensor<8x4x8x8xf32>
    %168 = stablehlo.exponential %167 : tensor<8x4x8x8xf32>
    %169 = stablehlo.reduce(%168 init: %45) applies stablehlo.add across dimensions = [3] : (tensor<8x4x8x8xf32>, tensor<f32>) -> tensor<8x4x8xf32>
    %170 = stablehlo.reshape %169 : (tensor<8x4x8xf32>) -> tensor<8x4x8x1xf32>
    %171 = stablehlo.broadcast_in_dim %170, dims = [0, 1, 2, 3] : (tensor<8x4x8x1xf32>) -> tensor<8x4x8x1xf32>
    %172 = stablehlo.reshape %171 : (tensor<8x4x8x1xf32>) -> tensor<8x4x8xf32>
    %173 = stablehlo.broadcast_in_dim %172, dims = [0, 1, 2] : (tensor<8x4x8xf32>) -> tensor<8x4x8x8xf32>
    %174 = stablehlo.divide %168, %173 : tensor<8x4x8x8xf32>
    %175 = stablehlo.dot_general %106, %174, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x8x4x8xf32>, tensor<8x4x8x8xf32>) -> tensor<8x4x8x8xf32>
    %176 = stablehlo.transpose %175, dims = [0, 3, 1, 2] {result_layout = dense<[1, 3, 2, 0]> : tensor<4xindex>, xla_shape = "f32[8,8,4,8]{1,3,2,0}"} : (tensor<8x4x8x8xf32>) -> tensor<8x8x4x8xf32>
    %177 = stablehlo.reshape %176 : (tensor<8x8x4x8xf32>) -> tensor<8x8x32xf32>
    %178 = stablehlo.dot_general %177, %arg5, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x32xf32>) -> tensor<8x8x32xf32>
    %179 = stablehlo.add %44, %178 : tensor<8x8x32xf32>
    %180 = stablehlo.reduce(%179 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %181 = stablehlo.reshape %180 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %182 = stablehlo.divide %181, %51 : tensor<8x8x1xf32>
    %183 = stablehlo.broadcast_in_dim %182, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %184 = stablehlo.reshape %183 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %185 = stablehlo.broadcast_in_dim %184, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %186 = stablehlo.subtract %179, %185 : tensor<8x8x32xf32>
    %187 = stablehlo.broadcast_in_dim %182, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %188 = stablehlo.reshape %187 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %189 = stablehlo.broadcast_in_dim %188, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %190 = stablehlo.subtract %179, %189 : tensor<8x8x32xf32>
    %191 = stablehlo.multiply %190, %190 : tensor<8x8x32xf32>
    %192 = stablehlo.reduce(%191 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %193 = stablehlo.reshape %192 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %194 = stablehlo.divide %193, %52 : tensor<8x8x1xf32>
    %195 = stablehlo.add %194, %84 : tensor<8x8x1xf32>
    %196 = stablehlo.rsqrt %195 : tensor<8x8x1xf32>
    %197 = stablehlo.broadcast_in_dim %196, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %198 = stablehlo.reshape %197 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %199 = stablehlo.broadcast_in_dim %198, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %200 = stablehlo.multiply %186, %199 : tensor<8x8x32xf32>
    %201 = stablehlo.reshape %arg6 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %202 = stablehlo.broadcast_in_dim %201, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
    %203 = stablehlo.reshape %202 : (tensor<1x1x32xf32>) -> tensor<32xf32>
    %204 = stablehlo.broadcast_in_dim %203, dims = [2] : (tensor<32xf32>) -> tensor<8x8x32xf32>
    %205 = stablehlo.multiply %200, %204 : tensor<8x8x32xf32>
    %206 = stablehlo.reshape %arg7 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %207 = stablehlo.broadcast_in_dim %206, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
    %208 = stablehlo.reshape %207 : (tensor<1x1x32xf32>) -> tensor<32xf32>
    %209 = stablehlo.broadcast_in_dim %208, dims = [2] : (tensor<32xf32>) -> tensor<8x8x32xf32>
    %210 = stablehlo.add %205, %209 : tensor<8x8x32xf32>
    %211 = stablehlo.dot_general %210, %arg8, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x128xf32>) -> tensor<8x8x128xf32>
    %212 = stablehlo.multiply %211, %211 : tensor<8x8x128xf32>
    %213 = stablehlo.multiply %212, %211 : tensor<8x8x128xf32>
    %214 = sdy.constant dense<4.471500e-02> : tensor<f32>
    %215 = stablehlo.broadcast_in_dim %214, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %216 = stablehlo.broadcast_in_dim %214, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %217 = stablehlo.broadcast_in_dim %214, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %218 = stablehlo.broadcast_in_dim %214, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %219 = stablehlo.multiply %213, %215 : tensor<8x8x128xf32>
    %220 = stablehlo.add %211, %219 : tensor<8x8x128xf32>
    %221 = sdy.constant dense<0.797884583> : tensor<f32>
    %222 = stablehlo.broadcast_in_dim %221, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %223 = stablehlo.broadcast_in_dim %221, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %224 = stablehlo.broadcast_in_dim %221, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %225 = stablehlo.broadcast_in_dim %221, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %226 = stablehlo.multiply %220, %222 : tensor<8x8x128xf32>
    %227 = stablehlo.tanh %226 : tensor<8x8x128xf32>
    %228 = sdy.constant dense<1.000000e+00> : tensor<f32>
    %229 = stablehlo.broadcast_in_dim %228, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %230 = stablehlo.broadcast_in_dim %228, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %231 = stablehlo.broadcast_in_dim %228, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %232 = stablehlo.broadcast_in_dim %228, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %233 = stablehlo.add %227, %229 : tensor<8x8x128xf32>
    %234 = sdy.constant dense<5.000000e-01> : tensor<f32>
    %235 = stablehlo.broadcast_in_dim %234, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %236 = stablehlo.broadcast_in_dim %234, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %237 = stablehlo.broadcast_in_dim %234, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %238 = stablehlo.broadcast_in_dim %234, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %239 = stablehlo.multiply %233, %235 : tensor<8x8x128xf32>
    %240 = stablehlo.multiply %211, %239 : tensor<8x8x128xf32>
    %241 = stablehlo.dot_general %240, %arg9, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x128xf32>, tensor<128x32xf32>) -> tensor<8x8x32xf32>
    %242 = stablehlo.add %179, %241 : tensor<8x8x32xf32>
    %243 = stablehlo.reduce(%242 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %244 = stablehlo.reshape %243 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %245 = stablehlo.divide %244, %53 : tensor<8x8x1xf32>
    %246 = stablehlo.broadcast_in_dim %245, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %247 = stablehlo.reshape %246 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %248 = stablehlo.broadcast_in_dim %247, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %249 = stablehlo.subtract %242, %248 : tensor<8x8x32xf32>
    %250 = stablehlo.broadcast_in_dim %245, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %251 = stablehlo.reshape %250 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %252 = stablehlo.broadcast_in_dim %251, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %253 = stablehlo.subtract %242, %252 : tensor<8x8x32xf32>
    %254 = stablehlo.multiply %253, %253 : tensor<8x8x32xf32>
    %255 = stablehlo.reduce(%254 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %256 = stablehlo.reshape %255 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %257 = stablehlo.divide %256, %54 : tensor<8x8x1xf32>
    %258 = stablehlo.add %257, %85 : tensor<8x8x1xf32>
    %259 = stablehlo.rsqrt %258 : tensor<8x8x1xf32>
    %260 = stablehlo.broadcast_in_dim %259, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %261 = stablehlo.reshape %260 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %262 = stablehlo.broadcast_in_dim %261, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %263 = stablehlo.multiply %249, %262 : tensor<8x8x32xf32>
    %264 = stablehlo.reshape %arg10 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %265 = stablehlo.broadcast_in_dim %264, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
    %266 = stablehlo.reshape %265 : (tensor<1x1x32xf32>) -> tensor<32xf32>
    %267 = stablehlo.broadcast_in_dim %266, dims = [2] : (tensor<32xf32>) -> tensor<8x8x32xf32>
    %268 = stablehlo.multiply %263, %267 : tensor<8x8x32xf32>
    %269 = stablehlo.reshape %arg11 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %270 = stablehlo.broadcast_in_dim %269, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
    %271 = stablehlo.reshape %270 : (tensor<1x1x32xf32>) -> tensor<32xf32>
    %272 = stablehlo.broadcast_in_dim %271, dims = [2] : (tensor<32xf32>) -> tensor<8x8x32xf32>
    %273 = stablehlo.add %268, %272 : tensor<8x8x32xf32>
    %274 = stablehlo.dot_general %273, %arg12, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x96xf32>) -> tensor<8x8x96xf32>
    %275 = stablehlo.slice %274 [0:8, 0:8, 64:96] : (tensor<8x8x96xf32>) -> tensor<8x8x32xf32>
    %276 = stablehlo.reshape %275 : (tensor<8x8x32xf32>) -> tensor<8x8x4x8xf32>
    %277 = stablehlo.broadcast_in_dim %138, dims = [2, 3] : (tensor<8x8xi1>) -> tensor<8x4x8x8xi1>
    %278 = stablehlo.broadcast_in_dim %139, dims = [2, 3] : (tensor<8x8xi1>) -> tensor<8x4x8x8xi1>
    %279 = stablehlo.slice %274 [0:8, 0:8, 0:32] : (tensor<8x8x96xf32>) -> tensor<8x8x32xf32>
    %280 = stablehlo.reshape %279 : (tensor<8x8x32xf32>) -> tensor<8x8x4x8xf32>
    %281 = stablehlo.slice %274 [0:8, 0:8, 32:64] : (tensor<8x8x96xf32>) -> tensor<8x8x32xf32>
    %282 = stablehlo.reshape %281 : (tensor<8x8x32xf32>) -> tensor<8x8x4x8xf32>
    %283 = stablehlo.dot_general %280, %282, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x8x4x8xf32>, tensor<8x8x4x8xf32>) -> tensor<8x4x8x8xf32>
    %284 = stablehlo.divide %283, %150 : tensor<8x4x8x8xf32>
    %285 = stablehlo.broadcast_in_dim %154, dims = [] : (tensor<f32>) -> tensor<8x4x8x8xf32>
    %286 = stablehlo.select %277, %284, %285 : tensor<8x4x8x8xi1>, tensor<8x4x8x8xf32>
    %287 = stablehlo.reduce(%286 init: %157) applies stablehlo.maximum across dimensions = [3] : (tensor<8x4x8x8xf32>, tensor<f32>) -> tensor<8x4x8xf32>
    %288 = stablehlo.maximum %287, %161 : tensor<8x4x8xf32>
    %289 = stablehlo.reshape %288 : (tensor<8x4x8xf32>) -> tensor<8x4x8x1xf32>
    %290 = stablehlo.broadcast_in_dim %289, dims = [0, 1, 2, 3] : (tensor<8x4x8x1xf32>) -> tensor<8x4x8x1xf32>
    %291 = stablehlo.reshape %290 : (tensor<8x4x8x1xf32>) -> tensor<8x4x8xf32>
    %292 = stablehlo.broadcast_in_dim %291, dims = [0, 1, 2] : (tensor<8x4x8xf32>) -> tensor<8x4x8x8xf32>
    %293 = stablehlo.subtract %286, %292 : tensor<8x4x8x8xf32>
    %294 = stablehlo.exponential %293 : tensor<8x4x8x8xf32>
    %295 = stablehlo.reduce(%294 init: %45) applies stablehlo.add across dimensions = [3] : (tensor<8x4x8x8xf32>, tensor<f32>) -> tensor<8x4x8xf32>
    %296 = stablehlo.reshape %295 : (tensor<8x4x8xf32>) -> tensor<8x4x8x1xf32>
    %297 = stablehlo.broadcast_in_dim %296, dims = [0, 1, 2, 3] : (tensor<8x4x8x1xf32>) -> tensor<8x4x8x1xf32>
    %298 = stablehlo.reshape %297 : (tensor<8x4x8x1xf32>) -> tensor<8x4x8xf32>
    %299 = stablehlo.broadcast_in_dim %298, dims = [0, 1, 2] : (tensor<8x4x8xf32>) -> tensor<8x4x8x8xf32>
    %300 = stablehlo.divide %294, %299 : tensor<8x4x8x8xf32>
    %301 = stablehlo.dot_general %276, %300, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x8x4x8xf32>, tensor<8x4x8x8xf32>) -> tensor<8x4x8x8xf32>
    %302 = stablehlo.transpose %301, dims = [0, 3, 1, 2] {result_layout = dense<[1, 3, 2, 0]> : tensor<4xindex>, xla_shape = "f32[8,8,4,8]{1,3,2,0}"} : (tensor<8x4x8x8xf32>) -> tensor<8x8x4x8xf32>
    %303 = stablehlo.reshape %302 : (tensor<8x8x4x8xf32>) -> tensor<8x8x32xf32>
    %304 = stablehlo.dot_general %303, %arg13, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x32xf32>) -> tensor<8x8x32xf32>
    %305 = stablehlo.add %242, %304 : tensor<8x8x32xf32>
    %306 = stablehlo.reduce(%305 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %307 = stablehlo.reshape %306 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %308 = stablehlo.divide %307, %55 : tensor<8x8x1xf32>
    %309 = stablehlo.broadcast_in_dim %308, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %310 = stablehlo.reshape %309 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %311 = stablehlo.broadcast_in_dim %310, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %312 = stablehlo.subtract %305, %311 : tensor<8x8x32xf32>
    %313 = stablehlo.broadcast_in_dim %308, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %314 = stablehlo.reshape %313 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %315 = stablehlo.broadcast_in_dim %314, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %316 = stablehlo.subtract %305, %315 : tensor<8x8x32xf32>
    %317 = stablehlo.multiply %316, %316 : tensor<8x8x32xf32>
    %318 = stablehlo.reduce(%317 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %319 = stablehlo.reshape %318 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %320 = stablehlo.divide %319, %56 : tensor<8x8x1xf32>
    %321 = stablehlo.add %320, %86 : tensor<8x8x1xf32>
    %322 = stablehlo.rsqrt %321 : tensor<8x8x1xf32>
    %323 = stablehlo.broadcast_in_dim %322, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %324 = stablehlo.reshape %323 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %325 = stablehlo.broadcast_in_dim %324, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %326 = stablehlo.multiply %312, %325 : tensor<8x8x32xf32>
    %327 = stablehlo.reshape %arg14 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %328 = stablehlo.broadcast_in_dim %327, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
    %329 = stablehlo.reshape %328 : (tensor<1x1x32xf32>) -> tensor<32xf32>
    %330 = stablehlo.broadcast_in_dim %329, dims = [2] : (tensor<32xf32>) -> tensor<8x8x32xf32>
    %331 = stablehlo.multiply %326, %330 : tensor<8x8x32xf32>
    %332 = stablehlo.reshape %arg15 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %333 = stablehlo.broadcast_in_dim %332, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
    %334 = stablehlo.reshape %333 : (tensor<1x1x32xf32>) -> tensor<32xf32>
    %335 = stablehlo.broadcast_in_dim %334, dims = [2] : (tensor<32xf32>) -> tensor<8x8x32xf32>
    %336 = stablehlo.add %331, %335 : tensor<8x8x32xf32>
    %337 = stablehlo.dot_general %336, %arg16, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x128xf32>) -> tensor<8x8x128xf32>
    %338 = stablehlo.multiply %337, %337 : tensor<8x8x128xf32>
    %339 = stablehlo.multiply %338, %337 : tensor<8x8x128xf32>
    %340 = stablehlo.multiply %339, %216 : tensor<8x8x128xf32>
    %341 = stablehlo.add %337, %340 : tensor<8x8x128xf32>
    %342 = stablehlo.multiply %341, %223 : tensor<8x8x128xf32>
    %343 = stablehlo.tanh %342 : tensor<8x8x128xf32>
    %344 = stablehlo.add %343, %230 : tensor<8x8x128xf32>
    %345 = stablehlo.multiply %344, %236 : tensor<8x8x128xf32>
    %346 = stablehlo.multiply %337, %345 : tensor<8x8x128xf32>
    %347 = stablehlo.dot_general %346, %arg17, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x128xf32>, tensor<128x32xf32>) -> tensor<8x8x32xf32>
    %348 = stablehlo.add %305, %347 : tensor<8x8x32xf32>
    %349 = stablehlo.reduce(%348 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %350 = stablehlo.reshape %349 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %351 = stablehlo.divide %350, %57 : tensor<8x8x1xf32>
    %352 = stablehlo.broadcast_in_dim %351, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %353 = stablehlo.reshape %352 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %354 = stablehlo.broadcast_in_dim %353, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %355 = stablehlo.subtract %348, %354 : tensor<8x8x32xf32>
    %356 = stablehlo.broadcast_in_dim %351, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %357 = stablehlo.reshape %356 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %358 = stablehlo.broadcast_in_dim %357, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %359 = stablehlo.subtract %348, %358 : tensor<8x8x32xf32>
    %360 = stablehlo.multiply %359, %359 : tensor<8x8x32xf32>
    %361 = stablehlo.reduce(%360 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %362 = stablehlo.reshape %361 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %363 = stablehlo.divide %362, %58 : tensor<8x8x1xf32>
    %364 = stablehlo.add %363, %87 : tensor<8x8x1xf32>
    %365 = stablehlo.rsqrt %364 : tensor<8x8x1xf32>
    %366 = stablehlo.broadcast_in_dim %365, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %367 = stablehlo.reshape %366 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %368 = stablehlo.broadcast_in_dim %367, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %369 = stablehlo.multiply %355, %368 : tensor<8x8x32xf32>
    %370 = stablehlo.reshape %arg18 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %371 = stablehlo.broadcast_in_dim %370, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
    %372 = stablehlo.reshape %371 : (tensor<1x1x32xf32>) -> tensor<32xf32>
    %373 = stablehlo.broadcast_in_dim %372, dims = [2] : (tensor<32xf32>) -> tensor<8x8x32xf32>
    %374 = stablehlo.multiply %369, %373 : tensor<8x8x32xf32>
    %375 = stablehlo.reshape %arg19 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %376 = stablehlo.broadcast_in_dim %375, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
    %377 = stablehlo.reshape %376 : (tensor<1x1x32xf32>) -> tensor<32xf32>
    %378 = stablehlo.broadcast_in_dim %377, dims = [2] : (tensor<32xf32>) -> tensor<8x8x32xf32>
    %379 = stablehlo.add %374, %378 : tensor<8x8x32xf32>
    %380 = stablehlo.transpose %arg0, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,64]{0,1}"} : (tensor<64x32xf32>) -> tensor<32x64xf32>
    %381 = stablehlo.dot_general %379, %380, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x64xf32>) -> tensor<8x8x64xf32>
    %382 = sdy.constant dense<0xFF800000> : tensor<f32>
    %383 = stablehlo.reduce(%381 init: %382) applies stablehlo.maximum across dimensions = [2] : (tensor<8x8x64xf32>, tensor<f32>) -> tensor<8x8xf32>
    %384 = sdy.constant dense<0xFF800000> : tensor<f32>
    %385 = stablehlo.broadcast_in_dim %384, dims = [] : (tensor<f32>) -> tensor<8x8xf32>
    %386 = stablehlo.maximum %383, %385 : tensor<8x8xf32>
    %387 = stablehlo.reshape %386 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %388 = stablehlo.broadcast_in_dim %387, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %389 = stablehlo.reshape %388 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %390 = stablehlo.broadcast_in_dim %389, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x64xf32>
    %391 = stablehlo.subtract %381, %390 : tensor<8x8x64xf32>
    %392 = stablehlo.exponential %391 : tensor<8x8x64xf32>
    %393 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %394 = stablehlo.reduce(%392 init: %393) applies stablehlo.add across dimensions = [2] : (tensor<8x8x64xf32>, tensor<f32>) -> tensor<8x8xf32>
    %395 = stablehlo.reshape %394 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %396 = stablehlo.log %395 : tensor<8x8x1xf32>
    %397 = stablehlo.broadcast_in_dim %396, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %398 = stablehlo.reshape %397 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %399 = stablehlo.broadcast_in_dim %398, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x64xf32>
    %400 = stablehlo.subtract %391, %399 : tensor<8x8x64xf32>
    %401 = "stablehlo.gather"(%400, %8) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [2], operand_batching_dims = [0, 1], start_indices_batching_dims = [0, 1], start_index_map = [2], index_vector_dim = 3>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1, 1>}> : (tensor<8x8x64xf32>, tensor<8x8x1x1xi32>) -> tensor<8x8x1xf32>
    %402 = sdy.constant dense<0x7FC00000> : tensor<f32>
    %403 = stablehlo.broadcast_in_dim %402, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %404 = stablehlo.select %17, %401, %403 : tensor<8x8x1xi1>, tensor<8x8x1xf32>
    %405 = stablehlo.reduce(%404 init: %45) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<f32>
    %406 = sdy.constant dense<6.400000e+01> : tensor<f32>
    %407 = stablehlo.divide %405, %406 : tensor<f32>
    %408 = stablehlo.negate %407 : tensor<f32>
    %409 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %410 = stablehlo.broadcast_in_dim %409, dims = [] : (tensor<f32>) -> tensor<8x8x64xf32>
    %411 = sdy.constant dense<-1.562500e-02> : tensor<f32>
    %412 = stablehlo.broadcast_in_dim %411, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %413 = "stablehlo.scatter"(%410, %8, %412) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [2], input_batching_dims = [0, 1], scatter_indices_batching_dims = [0, 1], scatter_dims_to_operand_dims = [2], index_vector_dim = 3>, unique_indices = false}> ({
    ^bb0(%arg22: tensor<f32>, %arg23: tensor<f32>):
      %833 = stablehlo.add %arg22, %arg23 : tensor<f32>
      stablehlo.return %833 : tensor<f32>
    }) : (tensor<8x8x64xf32>, tensor<8x8x1x1xi32>, tensor<8x8x1xf32>) -> tensor<8x8x64xf32>
    %414 = stablehlo.negate %413 : tensor<8x8x64xf32>
    %415 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %416 = stablehlo.reduce(%414 init: %415) applies stablehlo.add across dimensions = [2] : (tensor<8x8x64xf32>, tensor<f32>) -> tensor<8x8xf32>
    %417 = stablehlo.reshape %416 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %418 = stablehlo.divide %417, %395 : tensor<8x8x1xf32>
    %419 = stablehlo.reduce(%418 init: %415) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %420 = stablehlo.broadcast_in_dim %419, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x64xf32>
    %421 = stablehlo.multiply %420, %392 : tensor<8x8x64xf32>
    %422 = stablehlo.add %413, %421 : tensor<8x8x64xf32>
    %423 = stablehlo.dot_general %422, %379, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x64xf32>, tensor<8x8x32xf32>) -> tensor<64x32xf32>
    %424 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %425 = stablehlo.broadcast_in_dim %424, dims = [] : (tensor<f32>) -> tensor<64x32xf32>
    %426 = stablehlo.dot_general %422, %380, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x64xf32>, tensor<32x64xf32>) -> tensor<8x8x32xf32>
    %427 = stablehlo.broadcast_in_dim %370, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
    %428 = stablehlo.reshape %427 : (tensor<1x1x32xf32>) -> tensor<32xf32>
    %429 = stablehlo.broadcast_in_dim %428, dims = [2] : (tensor<32xf32>) -> tensor<8x8x32xf32>
    %430 = stablehlo.multiply %426, %429 : tensor<8x8x32xf32>
    %431 = stablehlo.broadcast_in_dim %365, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %432 = stablehlo.reshape %431 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %433 = stablehlo.broadcast_in_dim %432, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %434 = stablehlo.multiply %430, %433 : tensor<8x8x32xf32>
    %435 = stablehlo.multiply %355, %430 : tensor<8x8x32xf32>
    %436 = stablehlo.reduce(%435 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %437 = stablehlo.reshape %436 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %438 = stablehlo.divide %365, %364 : tensor<8x8x1xf32>
    %439 = sdy.constant dense<-5.000000e-01> : tensor<f32>
    %440 = stablehlo.broadcast_in_dim %439, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %441 = stablehlo.broadcast_in_dim %439, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %442 = stablehlo.broadcast_in_dim %439, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %443 = stablehlo.broadcast_in_dim %439, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %444 = stablehlo.broadcast_in_dim %439, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %445 = stablehlo.multiply %438, %440 : tensor<8x8x1xf32>
    %446 = stablehlo.multiply %437, %445 : tensor<8x8x1xf32>
    %447 = stablehlo.divide %446, %59 : tensor<8x8x1xf32>
    %448 = stablehlo.reduce(%447 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %449 = stablehlo.broadcast_in_dim %448, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %450 = sdy.constant dense<2.000000e+00> : tensor<f32>
    %451 = stablehlo.broadcast_in_dim %450, dims = [] : (tensor<f32>) -> tensor<8x8x32xf32>
    %452 = stablehlo.broadcast_in_dim %450, dims = [] : (tensor<f32>) -> tensor<8x8x32xf32>
    %453 = stablehlo.broadcast_in_dim %450, dims = [] : (tensor<f32>) -> tensor<8x8x32xf32>
    %454 = stablehlo.broadcast_in_dim %450, dims = [] : (tensor<f32>) -> tensor<8x8x32xf32>
    %455 = stablehlo.broadcast_in_dim %450, dims = [] : (tensor<f32>) -> tensor<8x8x32xf32>
    %456 = stablehlo.multiply %359, %451 : tensor<8x8x32xf32>
    %457 = stablehlo.multiply %449, %456 : tensor<8x8x32xf32>
    %458 = stablehlo.add %434, %457 : tensor<8x8x32xf32>
    %459 = stablehlo.negate %434 : tensor<8x8x32xf32>
    %460 = stablehlo.reduce(%459 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %461 = stablehlo.reshape %460 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %462 = stablehlo.negate %457 : tensor<8x8x32xf32>
    %463 = stablehlo.reduce(%462 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %464 = stablehlo.reshape %463 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %465 = stablehlo.add %461, %464 : tensor<8x8x1xf32>
    %466 = stablehlo.divide %465, %60 : tensor<8x8x1xf32>
    %467 = stablehlo.reduce(%466 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %468 = stablehlo.broadcast_in_dim %467, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %469 = stablehlo.add %458, %468 : tensor<8x8x32xf32>
    %470 = stablehlo.dot_general %469, %arg17, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<128x32xf32>) -> tensor<8x8x128xf32>
    %471 = stablehlo.multiply %470, %345 : tensor<8x8x128xf32>
    %472 = stablehlo.multiply %337, %470 : tensor<8x8x128xf32>
    %473 = stablehlo.multiply %472, %237 : tensor<8x8x128xf32>
    %474 = stablehlo.subtract %231, %343 : tensor<8x8x128xf32>
    %475 = stablehlo.multiply %473, %474 : tensor<8x8x128xf32>
    %476 = stablehlo.multiply %475, %343 : tensor<8x8x128xf32>
    %477 = stablehlo.add %475, %476 : tensor<8x8x128xf32>
    %478 = stablehlo.multiply %477, %224 : tensor<8x8x128xf32>
    %479 = stablehlo.add %471, %478 : tensor<8x8x128xf32>
    %480 = stablehlo.multiply %478, %217 : tensor<8x8x128xf32>
    %481 = stablehlo.multiply %337, %337 : tensor<8x8x128xf32>
    %482 = sdy.constant dense<3.000000e+00> : tensor<f32>
    %483 = stablehlo.broadcast_in_dim %482, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %484 = stablehlo.broadcast_in_dim %482, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %485 = stablehlo.multiply %481, %483 : tensor<8x8x128xf32>
    %486 = stablehlo.multiply %480, %485 : tensor<8x8x128xf32>
    %487 = stablehlo.add %479, %486 : tensor<8x8x128xf32>
    %488 = stablehlo.dot_general %487, %arg16, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x128xf32>, tensor<32x128xf32>) -> tensor<8x8x32xf32>
    %489 = stablehlo.broadcast_in_dim %327, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
    %490 = stablehlo.reshape %489 : (tensor<1x1x32xf32>) -> tensor<32xf32>
    %491 = stablehlo.broadcast_in_dim %490, dims = [2] : (tensor<32xf32>) -> tensor<8x8x32xf32>
    %492 = stablehlo.multiply %488, %491 : tensor<8x8x32xf32>
    %493 = stablehlo.broadcast_in_dim %322, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %494 = stablehlo.reshape %493 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %495 = stablehlo.broadcast_in_dim %494, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %496 = stablehlo.multiply %492, %495 : tensor<8x8x32xf32>
    %497 = stablehlo.add %469, %496 : tensor<8x8x32xf32>
    %498 = stablehlo.multiply %312, %492 : tensor<8x8x32xf32>
    %499 = stablehlo.reduce(%498 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %500 = stablehlo.reshape %499 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %501 = stablehlo.divide %322, %321 : tensor<8x8x1xf32>
    %502 = stablehlo.multiply %501, %441 : tensor<8x8x1xf32>
    %503 = stablehlo.multiply %500, %502 : tensor<8x8x1xf32>
    %504 = stablehlo.divide %503, %61 : tensor<8x8x1xf32>
    %505 = stablehlo.reduce(%504 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %506 = stablehlo.broadcast_in_dim %505, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %507 = stablehlo.multiply %316, %452 : tensor<8x8x32xf32>
    %508 = stablehlo.multiply %506, %507 : tensor<8x8x32xf32>
    %509 = stablehlo.add %497, %508 : tensor<8x8x32xf32>
    %510 = stablehlo.negate %496 : tensor<8x8x32xf32>
    %511 = stablehlo.reduce(%510 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %512 = stablehlo.reshape %511 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %513 = stablehlo.negate %508 : tensor<8x8x32xf32>
    %514 = stablehlo.reduce(%513 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %515 = stablehlo.reshape %514 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %516 = stablehlo.add %512, %515 : tensor<8x8x1xf32>
    %517 = stablehlo.divide %516, %62 : tensor<8x8x1xf32>
    %518 = stablehlo.reduce(%517 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %519 = stablehlo.broadcast_in_dim %518, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %520 = stablehlo.add %509, %519 : tensor<8x8x32xf32>
    %521 = stablehlo.dot_general %520, %arg13, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x32xf32>) -> tensor<8x8x32xf32>
    %522 = stablehlo.reshape %521 : (tensor<8x8x32xf32>) -> tensor<8x8x4x8xf32>
    %523 = stablehlo.transpose %522, dims = [0, 2, 3, 1] {result_layout = dense<[2, 1, 3, 0]> : tensor<4xindex>, xla_shape = "f32[8,4,8,8]{2,1,3,0}"} : (tensor<8x8x4x8xf32>) -> tensor<8x4x8x8xf32>
    %524 = stablehlo.dot_general %523, %276, batching_dims = [0, 1] x [0, 2], contracting_dims = [2] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x4x8x8xf32>, tensor<8x8x4x8xf32>) -> tensor<8x4x8x8xf32>
    %525 = stablehlo.broadcast_in_dim %296, dims = [0, 1, 2, 3] : (tensor<8x4x8x1xf32>) -> tensor<8x4x8x1xf32>
    %526 = stablehlo.reshape %525 : (tensor<8x4x8x1xf32>) -> tensor<8x4x8xf32>
    %527 = stablehlo.broadcast_in_dim %526, dims = [0, 1, 2] : (tensor<8x4x8xf32>) -> tensor<8x4x8x8xf32>
    %528 = stablehlo.divide %524, %527 : tensor<8x4x8x8xf32>
    %529 = sdy.constant dense<1.000000e+00> : tensor<f32>
    %530 = stablehlo.broadcast_in_dim %529, dims = [] : (tensor<f32>) -> tensor<8x4x8x1xf32>
    %531 = stablehlo.broadcast_in_dim %529, dims = [] : (tensor<f32>) -> tensor<8x4x8x1xf32>
    %532 = stablehlo.multiply %296, %296 : tensor<8x4x8x1xf32>
    %533 = stablehlo.divide %530, %532 : tensor<8x4x8x1xf32>
    %534 = stablehlo.broadcast_in_dim %533, dims = [0, 1, 2, 3] : (tensor<8x4x8x1xf32>) -> tensor<8x4x8x1xf32>
    %535 = stablehlo.reshape %534 : (tensor<8x4x8x1xf32>) -> tensor<8x4x8xf32>
    %536 = stablehlo.broadcast_in_dim %535, dims = [0, 1, 2] : (tensor<8x4x8xf32>) -> tensor<8x4x8x8xf32>
    %537 = stablehlo.multiply %524, %536 : tensor<8x4x8x8xf32>
    %538 = stablehlo.multiply %537, %294 : tensor<8x4x8x8xf32>
    %539 = stablehlo.reduce(%538 init: %45) applies stablehlo.add across dimensions = [3] : (tensor<8x4x8x8xf32>, tensor<f32>) -> tensor<8x4x8xf32>
    %540 = stablehlo.reshape %539 : (tensor<8x4x8xf32>) -> tensor<8x4x8x1xf32>
    %541 = stablehlo.negate %540 : tensor<8x4x8x1xf32>
    %542 = stablehlo.reduce(%541 init: %45) applies stablehlo.add across dimensions = [3] : (tensor<8x4x8x1xf32>, tensor<f32>) -> tensor<8x4x8xf32>
    %543 = stablehlo.broadcast_in_dim %542, dims = [0, 1, 2] : (tensor<8x4x8xf32>) -> tensor<8x4x8x8xf32>
    %544 = stablehlo.add %528, %543 : tensor<8x4x8x8xf32>
    %545 = stablehlo.multiply %544, %294 : tensor<8x4x8x8xf32>
    %546 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %547 = stablehlo.broadcast_in_dim %546, dims = [] : (tensor<f32>) -> tensor<8x4x8x8xf32>
    %548 = stablehlo.select %278, %545, %547 : tensor<8x4x8x8xi1>, tensor<8x4x8x8xf32>
    %549 = stablehlo.divide %548, %151 : tensor<8x4x8x8xf32>
    %550 = stablehlo.dot_general %549, %282, batching_dims = [0, 1] x [0, 2], contracting_dims = [3] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x4x8x8xf32>, tensor<8x8x4x8xf32>) -> tensor<8x4x8x8xf32>
    %551 = stablehlo.transpose %550, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[8,8,4,8]{3,1,2,0}"} : (tensor<8x4x8x8xf32>) -> tensor<8x8x4x8xf32>
    %552 = stablehlo.reshape %551 : (tensor<8x8x4x8xf32>) -> tensor<8x8x32xf32>
    %553 = stablehlo.dot_general %549, %280, batching_dims = [0, 1] x [0, 2], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x4x8x8xf32>, tensor<8x8x4x8xf32>) -> tensor<8x4x8x8xf32>
    %554 = stablehlo.transpose %553, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[8,8,4,8]{3,1,2,0}"} : (tensor<8x4x8x8xf32>) -> tensor<8x8x4x8xf32>
    %555 = stablehlo.reshape %554 : (tensor<8x8x4x8xf32>) -> tensor<8x8x32xf32>
    %556 = stablehlo.dot_general %523, %300, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<8x4x8x8xf32>, tensor<8x4x8x8xf32>) -> tensor<8x4x8x8xf32>
    %557 = stablehlo.transpose %556, dims = [0, 3, 1, 2] {result_layout = dense<[1, 3, 2, 0]> : tensor<4xindex>, xla_shape = "f32[8,8,4,8]{1,3,2,0}"} : (tensor<8x4x8x8xf32>) -> tensor<8x8x4x8xf32>
    %558 = stablehlo.reshape %557 : (tensor<8x8x4x8xf32>) -> tensor<8x8x32xf32>
    %559 = stablehlo.concatenate %552, %555, %558, dim = 2 : (tensor<8x8x32xf32>, tensor<8x8x32xf32>, tensor<8x8x32xf32>) -> tensor<8x8x96xf32>
    %560 = stablehlo.dot_general %559, %arg12, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x96xf32>, tensor<32x96xf32>) -> tensor<8x8x32xf32>
    %561 = stablehlo.broadcast_in_dim %264, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
    %562 = stablehlo.reshape %561 : (tensor<1x1x32xf32>) -> tensor<32xf32>
    %563 = stablehlo.broadcast_in_dim %562, dims = [2] : (tensor<32xf32>) -> tensor<8x8x32xf32>
    %564 = stablehlo.multiply %560, %563 : tensor<8x8x32xf32>
    %565 = stablehlo.broadcast_in_dim %259, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %566 = stablehlo.reshape %565 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %567 = stablehlo.broadcast_in_dim %566, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %568 = stablehlo.multiply %564, %567 : tensor<8x8x32xf32>
    %569 = stablehlo.add %520, %568 : tensor<8x8x32xf32>
    %570 = stablehlo.multiply %249, %564 : tensor<8x8x32xf32>
    %571 = stablehlo.reduce(%570 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %572 = stablehlo.reshape %571 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %573 = stablehlo.divide %259, %258 : tensor<8x8x1xf32>
    %574 = stablehlo.multiply %573, %442 : tensor<8x8x1xf32>
    %575 = stablehlo.multiply %572, %574 : tensor<8x8x1xf32>
    %576 = stablehlo.divide %575, %63 : tensor<8x8x1xf32>
    %577 = stablehlo.reduce(%576 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %578 = stablehlo.broadcast_in_dim %577, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %579 = stablehlo.multiply %253, %453 : tensor<8x8x32xf32>
    %580 = stablehlo.multiply %578, %579 : tensor<8x8x32xf32>
    %581 = stablehlo.add %569, %580 : tensor<8x8x32xf32>
    %582 = stablehlo.negate %568 : tensor<8x8x32xf32>
    %583 = stablehlo.reduce(%582 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %584 = stablehlo.reshape %583 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %585 = stablehlo.negate %580 : tensor<8x8x32xf32>
    %586 = stablehlo.reduce(%585 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %587 = stablehlo.reshape %586 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %588 = stablehlo.add %584, %587 : tensor<8x8x1xf32>
    %589 = stablehlo.divide %588, %64 : tensor<8x8x1xf32>
    %590 = stablehlo.reduce(%589 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %591 = stablehlo.broadcast_in_dim %590, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %592 = stablehlo.add %581, %591 : tensor<8x8x32xf32>
    %593 = stablehlo.dot_general %592, %arg9, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<128x32xf32>) -> tensor<8x8x128xf32>
    %594 = stablehlo.multiply %593, %239 : tensor<8x8x128xf32>
    %595 = stablehlo.multiply %211, %593 : tensor<8x8x128xf32>
    %596 = stablehlo.multiply %595, %238 : tensor<8x8x128xf32>
    %597 = stablehlo.subtract %232, %227 : tensor<8x8x128xf32>
    %598 = stablehlo.multiply %596, %597 : tensor<8x8x128xf32>
    %599 = stablehlo.multiply %598, %227 : tensor<8x8x128xf32>
    %600 = stablehlo.add %598, %599 : tensor<8x8x128xf32>
    %601 = stablehlo.multiply %600, %225 : tensor<8x8x128xf32>
    %602 = stablehlo.add %594, %601 : tensor<8x8x128xf32>
    %603 = stablehlo.multiply %601, %218 : tensor<8x8x128xf32>
    %604 = stablehlo.multiply %211, %211 : tensor<8x8x128xf32>
    %605 = stablehlo.multiply %604, %484 : tensor<8x8x128xf32>
    %606 = stablehlo.multiply %603, %605 : tensor<8x8x128xf32>
    %607 = stablehlo.add %602, %606 : tensor<8x8x128xf32>
    %608 = stablehlo.dot_general %607, %arg8, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x128xf32>, tensor<32x128xf32>) -> tensor<8x8x32xf32>
    %609 = stablehlo.broadcast_in_dim %201, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
    %610 = stablehlo.reshape %609 : (tensor<1x1x32xf32>) -> tensor<32xf32>
    %611 = stablehlo.broadcast_in_dim %610, dims = [2] : (tensor<32xf32>) -> tensor<8x8x32xf32>
    %612 = stablehlo.multiply %608, %611 : tensor<8x8x32xf32>
    %613 = stablehlo.broadcast_in_dim %196, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %614 = stablehlo.reshape %613 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %615 = stablehlo.broadcast_in_dim %614, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %616 = stablehlo.multiply %612, %615 : tensor<8x8x32xf32>
    %617 = stablehlo.add %592, %616 : tensor<8x8x32xf32>
    %618 = stablehlo.multiply %186, %612 : tensor<8x8x32xf32>
    %619 = stablehlo.reduce(%618 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %620 = stablehlo.reshape %619 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %621 = stablehlo.divide %196, %195 : tensor<8x8x1xf32>
    %622 = stablehlo.multiply %621, %443 : tensor<8x8x1xf32>
    %623 = stablehlo.multiply %620, %622 : tensor<8x8x1xf32>
    %624 = stablehlo.divide %623, %65 : tensor<8x8x1xf32>
    %625 = stablehlo.reduce(%624 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %626 = stablehlo.broadcast_in_dim %625, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %627 = stablehlo.multiply %190, %454 : tensor<8x8x32xf32>
    %628 = stablehlo.multiply %626, %627 : tensor<8x8x32xf32>
    %629 = stablehlo.add %617, %628 : tensor<8x8x32xf32>
    %630 = stablehlo.negate %616 : tensor<8x8x32xf32>
    %631 = stablehlo.reduce(%630 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %632 = stablehlo.reshape %631 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %633 = stablehlo.negate %628 : tensor<8x8x32xf32>
    %634 = stablehlo.reduce(%633 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %635 = stablehlo.reshape %634 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %636 = stablehlo.add %632, %635 : tensor<8x8x1xf32>
    %637 = stablehlo.divide %636, %66 : tensor<8x8x1xf32>
    %638 = stablehlo.reduce(%637 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %639 = stablehlo.broadcast_in_dim %638, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %640 = stablehlo.add %629, %639 : tensor<8x8x32xf32>
    %641 = stablehlo.dot_general %640, %arg5, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x32xf32>) -> tensor<8x8x32xf32>
    %642 = stablehlo.reshape %641 : (tensor<8x8x32xf32>) -> tensor<8x8x4x8xf32>
    %643 = stablehlo.transpose %642, dims = [0, 2, 3, 1] {result_layout = dense<[2, 1, 3, 0]> : tensor<4xindex>, xla_shape = "f32[8,4,8,8]{2,1,3,0}"} : (tensor<8x8x4x8xf32>) -> tensor<8x4x8x8xf32>
    %644 = stablehlo.dot_general %643, %106, batching_dims = [0, 1] x [0, 2], contracting_dims = [2] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x4x8x8xf32>, tensor<8x8x4x8xf32>) -> tensor<8x4x8x8xf32>
    %645 = stablehlo.broadcast_in_dim %170, dims = [0, 1, 2, 3] : (tensor<8x4x8x1xf32>) -> tensor<8x4x8x1xf32>
    %646 = stablehlo.reshape %645 : (tensor<8x4x8x1xf32>) -> tensor<8x4x8xf32>
    %647 = stablehlo.broadcast_in_dim %646, dims = [0, 1, 2] : (tensor<8x4x8xf32>) -> tensor<8x4x8x8xf32>
    %648 = stablehlo.divide %644, %647 : tensor<8x4x8x8xf32>
    %649 = stablehlo.multiply %170, %170 : tensor<8x4x8x1xf32>
    %650 = stablehlo.divide %531, %649 : tensor<8x4x8x1xf32>
    %651 = stablehlo.broadcast_in_dim %650, dims = [0, 1, 2, 3] : (tensor<8x4x8x1xf32>) -> tensor<8x4x8x1xf32>
    %652 = stablehlo.reshape %651 : (tensor<8x4x8x1xf32>) -> tensor<8x4x8xf32>
    %653 = stablehlo.broadcast_in_dim %652, dims = [0, 1, 2] : (tensor<8x4x8xf32>) -> tensor<8x4x8x8xf32>
    %654 = stablehlo.multiply %644, %653 : tensor<8x4x8x8xf32>
    %655 = stablehlo.multiply %654, %168 : tensor<8x4x8x8xf32>
    %656 = stablehlo.reduce(%655 init: %45) applies stablehlo.add across dimensions = [3] : (tensor<8x4x8x8xf32>, tensor<f32>) -> tensor<8x4x8xf32>
    %657 = stablehlo.reshape %656 : (tensor<8x4x8xf32>) -> tensor<8x4x8x1xf32>
    %658 = stablehlo.negate %657 : tensor<8x4x8x1xf32>
    %659 = stablehlo.reduce(%658 init: %45) applies stablehlo.add across dimensions = [3] : (tensor<8x4x8x1xf32>, tensor<f32>) -> tensor<8x4x8xf32>
    %660 = stablehlo.broadcast_in_dim %659, dims = [0, 1, 2] : (tensor<8x4x8xf32>) -> tensor<8x4x8x8xf32>
    %661 = stablehlo.add %648, %660 : tensor<8x4x8x8xf32>
    %662 = stablehlo.multiply %661, %168 : tensor<8x4x8x8xf32>
    %663 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %664 = stablehlo.broadcast_in_dim %663, dims = [] : (tensor<f32>) -> tensor<8x4x8x8xf32>
    %665 = stablehlo.select %142, %662, %664 : tensor<8x4x8x8xi1>, tensor<8x4x8x8xf32>
    %666 = stablehlo.divide %665, %152 : tensor<8x4x8x8xf32>
    %667 = stablehlo.dot_general %666, %146, batching_dims = [0, 1] x [0, 2], contracting_dims = [3] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x4x8x8xf32>, tensor<8x8x4x8xf32>) -> tensor<8x4x8x8xf32>
    %668 = stablehlo.transpose %667, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[8,8,4,8]{3,1,2,0}"} : (tensor<8x4x8x8xf32>) -> tensor<8x8x4x8xf32>
    %669 = stablehlo.reshape %668 : (tensor<8x8x4x8xf32>) -> tensor<8x8x32xf32>
    %670 = stablehlo.dot_general %666, %144, batching_dims = [0, 1] x [0, 2], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x4x8x8xf32>, tensor<8x8x4x8xf32>) -> tensor<8x4x8x8xf32>
    %671 = stablehlo.transpose %670, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[8,8,4,8]{3,1,2,0}"} : (tensor<8x4x8x8xf32>) -> tensor<8x8x4x8xf32>
    %672 = stablehlo.reshape %671 : (tensor<8x8x4x8xf32>) -> tensor<8x8x32xf32>
    %673 = stablehlo.dot_general %643, %174, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<8x4x8x8xf32>, tensor<8x4x8x8xf32>) -> tensor<8x4x8x8xf32>
    %674 = stablehlo.transpose %673, dims = [0, 3, 1, 2] {result_layout = dense<[1, 3, 2, 0]> : tensor<4xindex>, xla_shape = "f32[8,8,4,8]{1,3,2,0}"} : (tensor<8x4x8x8xf32>) -> tensor<8x8x4x8xf32>
    %675 = stablehlo.reshape %674 : (tensor<8x8x4x8xf32>) -> tensor<8x8x32xf32>
    %676 = stablehlo.concatenate %669, %672, %675, dim = 2 : (tensor<8x8x32xf32>, tensor<8x8x32xf32>, tensor<8x8x32xf32>) -> tensor<8x8x96xf32>
    %677 = stablehlo.dot_general %676, %arg4, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x96xf32>, tensor<32x96xf32>) -> tensor<8x8x32xf32>
    %678 = stablehlo.broadcast_in_dim %94, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
    %679 = stablehlo.reshape %678 : (tensor<1x1x32xf32>) -> tensor<32xf32>
    %680 = stablehlo.broadcast_in_dim %679, dims = [2] : (tensor<32xf32>) -> tensor<8x8x32xf32>
    %681 = stablehlo.multiply %677, %680 : tensor<8x8x32xf32>
    %682 = stablehlo.broadcast_in_dim %89, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x1xf32>
    %683 = stablehlo.reshape %682 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %684 = stablehlo.broadcast_in_dim %683, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %685 = stablehlo.multiply %681, %684 : tensor<8x8x32xf32>
    %686 = stablehlo.add %640, %685 : tensor<8x8x32xf32>
    %687 = stablehlo.multiply %73, %681 : tensor<8x8x32xf32>
    %688 = stablehlo.reduce(%687 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %689 = stablehlo.reshape %688 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %690 = stablehlo.divide %89, %88 : tensor<8x8x1xf32>
    %691 = stablehlo.multiply %690, %444 : tensor<8x8x1xf32>
    %692 = stablehlo.multiply %689, %691 : tensor<8x8x1xf32>
    %693 = stablehlo.divide %692, %67 : tensor<8x8x1xf32>
    %694 = stablehlo.reduce(%693 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %695 = stablehlo.broadcast_in_dim %694, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %696 = stablehlo.multiply %77, %455 : tensor<8x8x32xf32>
    %697 = stablehlo.multiply %695, %696 : tensor<8x8x32xf32>
    %698 = stablehlo.add %686, %697 : tensor<8x8x32xf32>
    %699 = stablehlo.negate %685 : tensor<8x8x32xf32>
    %700 = stablehlo.reduce(%699 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %701 = stablehlo.reshape %700 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %702 = stablehlo.negate %697 : tensor<8x8x32xf32>
    %703 = stablehlo.reduce(%702 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %704 = stablehlo.reshape %703 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %705 = stablehlo.add %701, %704 : tensor<8x8x1xf32>
    %706 = stablehlo.divide %705, %68 : tensor<8x8x1xf32>
    %707 = stablehlo.reduce(%706 init: %45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %708 = stablehlo.broadcast_in_dim %707, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %709 = stablehlo.add %698, %708 : tensor<8x8x32xf32>
    %710 = "stablehlo.scatter"(%425, %25, %709) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 2>, unique_indices = false}> ({
    ^bb0(%arg22: tensor<f32>, %arg23: tensor<f32>):
      %833 = stablehlo.add %arg22, %arg23 : tensor<f32>
      stablehlo.return %833 : tensor<f32>
    }) : (tensor<64x32xf32>, tensor<8x8x1xi32>, tensor<8x8x32xf32>) -> tensor<64x32xf32>
    %711 = stablehlo.add %423, %710 : tensor<64x32xf32>
    %712 = sdy.constant dense<1.000000e-01> : tensor<f32>
    %713 = stablehlo.broadcast_in_dim %712, dims = [] : (tensor<f32>) -> tensor<64x32xf32>
    %714 = stablehlo.multiply %711, %713 : tensor<64x32xf32>
    %715 = stablehlo.subtract %arg0, %714 : tensor<64x32xf32>
    %716 = stablehlo.reduce(%709 init: %45) applies stablehlo.add across dimensions = [0] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x32xf32>
    %717 = stablehlo.reshape %716 : (tensor<8x32xf32>) -> tensor<1x8x32xf32>
    %718 = stablehlo.reduce(%717 init: %45) applies stablehlo.add across dimensions = [0] : (tensor<1x8x32xf32>, tensor<f32>) -> tensor<8x32xf32>
    %719 = sdy.constant dense<1.000000e-01> : tensor<f32>
    %720 = stablehlo.broadcast_in_dim %719, dims = [] : (tensor<f32>) -> tensor<8x32xf32>
    %721 = stablehlo.multiply %718, %720 : tensor<8x32xf32>
    %722 = stablehlo.subtract %arg1, %721 : tensor<8x32xf32>
    %723 = stablehlo.multiply %93, %677 : tensor<8x8x32xf32>
    %724 = stablehlo.reduce(%723 init: %45) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %725 = stablehlo.reshape %724 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %726 = stablehlo.reduce(%725 init: %45) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %727 = sdy.constant dense<1.000000e-01> : tensor<f32>
    %728 = stablehlo.broadcast_in_dim %727, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %729 = stablehlo.broadcast_in_dim %727, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %730 = stablehlo.broadcast_in_dim %727, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %731 = stablehlo.broadcast_in_dim %727, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %732 = stablehlo.broadcast_in_dim %727, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %733 = stablehlo.broadcast_in_dim %727, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %734 = stablehlo.broadcast_in_dim %727, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %735 = stablehlo.broadcast_in_dim %727, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %736 = stablehlo.broadcast_in_dim %727, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %737 = stablehlo.broadcast_in_dim %727, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %738 = stablehlo.multiply %726, %728 : tensor<32xf32>
    %739 = stablehlo.subtract %arg2, %738 : tensor<32xf32>
    %740 = stablehlo.reduce(%677 init: %45) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %741 = stablehlo.reshape %740 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %742 = stablehlo.reduce(%741 init: %45) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %743 = stablehlo.multiply %742, %729 : tensor<32xf32>
    %744 = stablehlo.subtract %arg3, %743 : tensor<32xf32>
    %745 = stablehlo.dot_general %676, %103, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x96xf32>, tensor<8x8x32xf32>) -> tensor<96x32xf32>
    %746 = stablehlo.transpose %745, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,96]{0,1}"} : (tensor<96x32xf32>) -> tensor<32x96xf32>
    %747 = sdy.constant dense<1.000000e-01> : tensor<f32>
    %748 = stablehlo.broadcast_in_dim %747, dims = [] : (tensor<f32>) -> tensor<32x96xf32>
    %749 = stablehlo.broadcast_in_dim %747, dims = [] : (tensor<f32>) -> tensor<32x96xf32>
    %750 = stablehlo.multiply %746, %748 {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,96]{0,1}"} : tensor<32x96xf32>
    %751 = stablehlo.subtract %arg4, %750 : tensor<32x96xf32>
    %752 = stablehlo.dot_general %640, %177, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<8x8x32xf32>) -> tensor<32x32xf32>
    %753 = stablehlo.transpose %752, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,32]{0,1}"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
    %754 = sdy.constant dense<1.000000e-01> : tensor<f32>
    %755 = stablehlo.broadcast_in_dim %754, dims = [] : (tensor<f32>) -> tensor<32x32xf32>
    %756 = stablehlo.broadcast_in_dim %754, dims = [] : (tensor<f32>) -> tensor<32x32xf32>
    %757 = stablehlo.multiply %753, %755 {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,32]{0,1}"} : tensor<32x32xf32>
    %758 = stablehlo.subtract %arg5, %757 : tensor<32x32xf32>
    %759 = stablehlo.multiply %200, %608 : tensor<8x8x32xf32>
    %760 = stablehlo.reduce(%759 init: %45) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %761 = stablehlo.reshape %760 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %762 = stablehlo.reduce(%761 init: %45) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %763 = stablehlo.multiply %762, %730 : tensor<32xf32>
    %764 = stablehlo.subtract %arg6, %763 : tensor<32xf32>
    %765 = stablehlo.reduce(%608 init: %45) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %766 = stablehlo.reshape %765 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %767 = stablehlo.reduce(%766 init: %45) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %768 = stablehlo.multiply %767, %731 : tensor<32xf32>
    %769 = stablehlo.subtract %arg7, %768 : tensor<32xf32>
    %770 = stablehlo.dot_general %607, %210, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x128xf32>, tensor<8x8x32xf32>) -> tensor<128x32xf32>
    %771 = stablehlo.transpose %770, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,128]{0,1}"} : (tensor<128x32xf32>) -> tensor<32x128xf32>
    %772 = sdy.constant dense<1.000000e-01> : tensor<f32>
    %773 = stablehlo.broadcast_in_dim %772, dims = [] : (tensor<f32>) -> tensor<32x128xf32>
    %774 = stablehlo.broadcast_in_dim %772, dims = [] : (tensor<f32>) -> tensor<32x128xf32>
    %775 = stablehlo.multiply %771, %773 {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,128]{0,1}"} : tensor<32x128xf32>
    %776 = stablehlo.subtract %arg8, %775 : tensor<32x128xf32>
    %777 = stablehlo.dot_general %592, %240, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<8x8x128xf32>) -> tensor<32x128xf32>
    %778 = stablehlo.transpose %777, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[128,32]{0,1}"} : (tensor<32x128xf32>) -> tensor<128x32xf32>
    %779 = sdy.constant dense<1.000000e-01> : tensor<f32>
    %780 = stablehlo.broadcast_in_dim %779, dims = [] : (tensor<f32>) -> tensor<128x32xf32>
    %781 = stablehlo.broadcast_in_dim %779, dims = [] : (tensor<f32>) -> tensor<128x32xf32>
    %782 = stablehlo.multiply %778, %780 {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[128,32]{0,1}"} : tensor<128x32xf32>
    %783 = stablehlo.subtract %arg9, %782 : tensor<128x32xf32>
    %784 = stablehlo.multiply %263, %560 : tensor<8x8x32xf32>
    %785 = stablehlo.reduce(%784 init: %45) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %786 = stablehlo.reshape %785 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %787 = stablehlo.reduce(%786 init: %45) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %788 = stablehlo.multiply %787, %732 : tensor<32xf32>
    %789 = stablehlo.subtract %arg10, %788 : tensor<32xf32>
    %790 = stablehlo.reduce(%560 init: %45) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %791 = stablehlo.reshape %790 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %792 = stablehlo.reduce(%791 init: %45) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %793 = stablehlo.multiply %792, %733 : tensor<32xf32>
    %794 = stablehlo.subtract %arg11, %793 : tensor<32xf32>
    %795 = stablehlo.dot_general %559, %273, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x96xf32>, tensor<8x8x32xf32>) -> tensor<96x32xf32>
    %796 = stablehlo.transpose %795, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,96]{0,1}"} : (tensor<96x32xf32>) -> tensor<32x96xf32>
    %797 = stablehlo.multiply %796, %749 {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,96]{0,1}"} : tensor<32x96xf32>
    %798 = stablehlo.subtract %arg12, %797 : tensor<32x96xf32>
    %799 = stablehlo.dot_general %520, %303, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<8x8x32xf32>) -> tensor<32x32xf32>
    %800 = stablehlo.transpose %799, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,32]{0,1}"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
    %801 = stablehlo.multiply %800, %756 {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,32]{0,1}"} : tensor<32x32xf32>
    %802 = stablehlo.subtract %arg13, %801 : tensor<32x32xf32>
    %803 = stablehlo.multiply %326, %488 : tensor<8x8x32xf32>
    %804 = stablehlo.reduce(%803 init: %45) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %805 = stablehlo.reshape %804 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %806 = stablehlo.reduce(%805 init: %45) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %807 = stablehlo.multiply %806, %734 : tensor<32xf32>
    %808 = stablehlo.subtract %arg14, %807 : tensor<32xf32>
    %809 = stablehlo.reduce(%488 init: %45) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %810 = stablehlo.reshape %809 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %811 = stablehlo.reduce(%810 init: %45) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %812 = stablehlo.multiply %811, %735 : tensor<32xf32>
    %813 = stablehlo.subtract %arg15, %812 : tensor<32xf32>
    %814 = stablehlo.dot_general %487, %336, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x128xf32>, tensor<8x8x32xf32>) -> tensor<128x32xf32>
    %815 = stablehlo.transpose %814, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,128]{0,1}"} : (tensor<128x32xf32>) -> tensor<32x128xf32>
    %816 = stablehlo.multiply %815, %774 {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,128]{0,1}"} : tensor<32x128xf32>
    %817 = stablehlo.subtract %arg16, %816 : tensor<32x128xf32>
    %818 = stablehlo.dot_general %469, %346, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<8x8x128xf32>) -> tensor<32x128xf32>
    %819 = stablehlo.transpose %818, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[128,32]{0,1}"} : (tensor<32x128xf32>) -> tensor<128x32xf32>
    %820 = stablehlo.multiply %819, %781 {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[128,32]{0,1}"} : tensor<128x32xf32>
    %821 = stablehlo.subtract %arg17, %820 : tensor<128x32xf32>
    %822 = stablehlo.multiply %369, %426 : tensor<8x8x32xf32>
    %823 = stablehlo.reduce(%822 init: %45) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %824 = stablehlo.reshape %823 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %825 = stablehlo.reduce(%824 init: %45) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %826 = stablehlo.multiply %825, %736 : tensor<32xf32>
    %827 = stablehlo.subtract %arg18, %826 : tensor<32xf32>
    %828 = stablehlo.reduce(%426 init: %45) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %829 = stablehlo.reshape %828 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %830 = stablehlo.reduce(%829 init: %45) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %831 = stablehlo.multiply %830, %737 : tensor<32xf32>
    %832 = stablehlo.subtract %arg19, %831 : tensor<32xf32>
    return %408, %715, %722, %739, %744, %751, %758, %764, %769, %776, %783, %789, %794, %798, %802, %808, %813, %817, %821, %827, %832 : tensor<f32>, tensor<64x32xf32>, tensor<8x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x128xf32>, tensor<128x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x128xf32>, tensor<128x32xf32>, tensor<32xf32>, tensor<32xf32>
  }
}
