module @jit_gpt2_train_step attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<2048x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg1: tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg2: tensor<128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg3: tensor<128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg4: tensor<128x384xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg5: tensor<128x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg6: tensor<128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg7: tensor<128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg8: tensor<128x512xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg9: tensor<512x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg10: tensor<128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg11: tensor<128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg12: tensor<128x384xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg13: tensor<128x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg14: tensor<128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg15: tensor<128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg16: tensor<128x512xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg17: tensor<512x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg18: tensor<128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg19: tensor<128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg20: tensor<16x64xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg21: tensor<16x64xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) -> (tensor<f32> {jax.result_info = "result[0]"}, tensor<2048x128xf32> {jax.result_info = "result[1]"}, tensor<64x128xf32> {jax.result_info = "result[2]"}, tensor<128xf32> {jax.result_info = "result[3]"}, tensor<128xf32> {jax.result_info = "result[4]"}, tensor<128x384xf32> {jax.result_info = "result[5]"}, tensor<128x128xf32> {jax.result_info = "result[6]"}, tensor<128xf32> {jax.result_info = "result[7]"}, tensor<128xf32> {jax.result_info = "result[8]"}, tensor<128x512xf32> {jax.result_info = "result[9]"}, tensor<512x128xf32> {jax.result_info = "result[10]"}, tensor<128xf32> {jax.result_info = "result[11]"}, tensor<128xf32> {jax.result_info = "result[12]"}, tensor<128x384xf32> {jax.result_info = "result[13]"}, tensor<128x128xf32> {jax.result_info = "result[14]"}, tensor<128xf32> {jax.result_info = "result[15]"}, tensor<128xf32> {jax.result_info = "result[16]"}, tensor<128x512xf32> {jax.result_info = "result[17]"}, tensor<512x128xf32> {jax.result_info = "result[18]"}, tensor<128xf32> {jax.result_info = "result[19]"}, tensor<128xf32> {jax.result_info = "result[20]"}) {
    %0:2 = call @_take(%arg0, %arg20) : (tensor<2048x128xf32>, tensor<16x64xi32>) -> (tensor<16x64x128xf32>, tensor<16x64x1xi32>)
    %1 = stablehlo.broadcast_in_dim %arg1, dims = [1, 2] : (tensor<64x128xf32>) -> tensor<1x64x128xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1, 2] : (tensor<1x64x128xf32>) -> tensor<16x64x128xf32>
    %3 = stablehlo.add %0#0, %2 : tensor<16x64x128xf32>
    %c = stablehlo.constant dense<true> : tensor<i1>
    %4 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i1>) -> tensor<64x64xi1>
    %5 = call @tril(%4) : (tensor<64x64xi1>) -> tensor<64x64xi1>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %6 = stablehlo.reduce(%3 init: %cst) applies stablehlo.add across dimensions = [2] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<16x64xf32>
    %7 = stablehlo.broadcast_in_dim %6, dims = [0, 1] : (tensor<16x64xf32>) -> tensor<16x64x1xf32>
    %cst_0 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
    %8 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<16x64x1xf32>
    %9 = stablehlo.divide %7, %8 : tensor<16x64x1xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0, 1, 2] : (tensor<16x64x1xf32>) -> tensor<16x64x128xf32>
    %11 = stablehlo.subtract %3, %10 : tensor<16x64x128xf32>
    %12 = stablehlo.multiply %11, %11 : tensor<16x64x128xf32>
    %cst_1 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %13 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<16x64x128xf32>
    %14 = stablehlo.multiply %13, %11 : tensor<16x64x128xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %15 = stablehlo.reduce(%12 init: %cst_2) applies stablehlo.add across dimensions = [2] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<16x64xf32>
    %16 = stablehlo.broadcast_in_dim %15, dims = [0, 1] : (tensor<16x64xf32>) -> tensor<16x64x1xf32>
    %cst_3 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
    %17 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<16x64x1xf32>
    %18 = stablehlo.divide %16, %17 : tensor<16x64x1xf32>
    %19 = stablehlo.broadcast_in_dim %9, dims = [0, 1, 2] : (tensor<16x64x1xf32>) -> tensor<16x64x128xf32>
    %20 = stablehlo.subtract %3, %19 : tensor<16x64x128xf32>
    %cst_4 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %21 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<16x64x1xf32>
    %22 = stablehlo.add %18, %21 : tensor<16x64x1xf32>
    %23 = stablehlo.rsqrt %22 : tensor<16x64x1xf32>
    %24 = stablehlo.divide %23, %22 : tensor<16x64x1xf32>
    %cst_5 = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
    %25 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<16x64x1xf32>
    %26 = stablehlo.multiply %25, %24 : tensor<16x64x1xf32>
    %27 = stablehlo.broadcast_in_dim %23, dims = [0, 1, 2] : (tensor<16x64x1xf32>) -> tensor<16x64x128xf32>
    %28 = stablehlo.multiply %20, %27 : tensor<16x64x128xf32>
    %29 = stablehlo.broadcast_in_dim %arg2, dims = [2] : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %30 = stablehlo.broadcast_in_dim %29, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<16x64x128xf32>
    %31 = stablehlo.multiply %28, %30 : tensor<16x64x128xf32>
    %32 = stablehlo.broadcast_in_dim %arg3, dims = [2] : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %33 = stablehlo.broadcast_in_dim %32, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<16x64x128xf32>
    %34 = stablehlo.add %31, %33 : tensor<16x64x128xf32>
    %35 = stablehlo.dot_general %34, %arg4, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x64x128xf32>, tensor<128x384xf32>) -> tensor<16x64x384xf32>
    %36 = stablehlo.slice %35 [0:16, 0:64, 0:128] : (tensor<16x64x384xf32>) -> tensor<16x64x128xf32>
    %37 = stablehlo.slice %35 [0:16, 0:64, 128:256] : (tensor<16x64x384xf32>) -> tensor<16x64x128xf32>
    %38 = stablehlo.slice %35 [0:16, 0:64, 256:384] : (tensor<16x64x384xf32>) -> tensor<16x64x128xf32>
    %39 = stablehlo.reshape %36 : (tensor<16x64x128xf32>) -> tensor<16x64x4x32xf32>
    %40 = stablehlo.reshape %37 : (tensor<16x64x128xf32>) -> tensor<16x64x4x32xf32>
    %41 = stablehlo.reshape %38 : (tensor<16x64x128xf32>) -> tensor<16x64x4x32xf32>
    %42 = stablehlo.dot_general %39, %40, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<16x64x4x32xf32>, tensor<16x64x4x32xf32>) -> tensor<16x4x64x64xf32>
    %cst_6 = stablehlo.constant dense<5.65685415> : tensor<f32>
    %43 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<16x4x64x64xf32>
    %44 = stablehlo.divide %42, %43 : tensor<16x4x64x64xf32>
    %cst_7 = stablehlo.constant dense<-1.000000e+09> : tensor<f32>
    %45:2 = call @_where_0(%5, %44, %cst_7) : (tensor<64x64xi1>, tensor<16x4x64x64xf32>, tensor<f32>) -> (tensor<16x4x64x64xf32>, tensor<16x4x64x64xi1>)
    %cst_8 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %46 = stablehlo.reduce(%45#0 init: %cst_8) applies stablehlo.maximum across dimensions = [3] : (tensor<16x4x64x64xf32>, tensor<f32>) -> tensor<16x4x64xf32>
    %cst_9 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %47 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<16x4x64xf32>
    %48 = stablehlo.maximum %47, %46 : tensor<16x4x64xf32>
    %49 = stablehlo.broadcast_in_dim %48, dims = [0, 1, 2] : (tensor<16x4x64xf32>) -> tensor<16x4x64x1xf32>
    %50 = stablehlo.broadcast_in_dim %49, dims = [0, 1, 2, 3] : (tensor<16x4x64x1xf32>) -> tensor<16x4x64x64xf32>
    %51 = stablehlo.subtract %45#0, %50 : tensor<16x4x64x64xf32>
    %52 = stablehlo.exponential %51 : tensor<16x4x64x64xf32>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %53 = stablehlo.reduce(%52 init: %cst_10) applies stablehlo.add across dimensions = [3] : (tensor<16x4x64x64xf32>, tensor<f32>) -> tensor<16x4x64xf32>
    %54 = stablehlo.broadcast_in_dim %53, dims = [0, 1, 2] : (tensor<16x4x64xf32>) -> tensor<16x4x64x1xf32>
    %55 = stablehlo.broadcast_in_dim %54, dims = [0, 1, 2, 3] : (tensor<16x4x64x1xf32>) -> tensor<16x4x64x64xf32>
    %56 = stablehlo.divide %52, %55 : tensor<16x4x64x64xf32>
    %57 = stablehlo.multiply %54, %54 : tensor<16x4x64x1xf32>
    %cst_11 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %58 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<16x4x64x1xf32>
    %59 = stablehlo.divide %58, %57 : tensor<16x4x64x1xf32>
    %60 = stablehlo.dot_general %41, %56, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3], precision = [DEFAULT, DEFAULT] : (tensor<16x64x4x32xf32>, tensor<16x4x64x64xf32>) -> tensor<16x4x32x64xf32>
    %61 = stablehlo.transpose %60, dims = [0, 3, 1, 2] : (tensor<16x4x32x64xf32>) -> tensor<16x64x4x32xf32>
    %62 = stablehlo.reshape %61 : (tensor<16x64x4x32xf32>) -> tensor<16x64x128xf32>
    %63 = stablehlo.dot_general %62, %arg5, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x64x128xf32>, tensor<128x128xf32>) -> tensor<16x64x128xf32>
    %64 = stablehlo.add %3, %63 : tensor<16x64x128xf32>
    %cst_12 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %65 = stablehlo.reduce(%64 init: %cst_12) applies stablehlo.add across dimensions = [2] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<16x64xf32>
    %66 = stablehlo.broadcast_in_dim %65, dims = [0, 1] : (tensor<16x64xf32>) -> tensor<16x64x1xf32>
    %cst_13 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
    %67 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<16x64x1xf32>
    %68 = stablehlo.divide %66, %67 : tensor<16x64x1xf32>
    %69 = stablehlo.broadcast_in_dim %68, dims = [0, 1, 2] : (tensor<16x64x1xf32>) -> tensor<16x64x128xf32>
    %70 = stablehlo.subtract %64, %69 : tensor<16x64x128xf32>
    %71 = stablehlo.multiply %70, %70 : tensor<16x64x128xf32>
    %cst_14 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %72 = stablehlo.broadcast_in_dim %cst_14, dims = [] : (tensor<f32>) -> tensor<16x64x128xf32>
    %73 = stablehlo.multiply %72, %70 : tensor<16x64x128xf32>
    %cst_15 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %74 = stablehlo.reduce(%71 init: %cst_15) applies stablehlo.add across dimensions = [2] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<16x64xf32>
    %75 = stablehlo.broadcast_in_dim %74, dims = [0, 1] : (tensor<16x64xf32>) -> tensor<16x64x1xf32>
    %cst_16 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
    %76 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<f32>) -> tensor<16x64x1xf32>
    %77 = stablehlo.divide %75, %76 : tensor<16x64x1xf32>
    %78 = stablehlo.broadcast_in_dim %68, dims = [0, 1, 2] : (tensor<16x64x1xf32>) -> tensor<16x64x128xf32>
    %79 = stablehlo.subtract %64, %78 : tensor<16x64x128xf32>
    %cst_17 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %80 = stablehlo.broadcast_in_dim %cst_17, dims = [] : (tensor<f32>) -> tensor<16x64x1xf32>
    %81 = stablehlo.add %77, %80 : tensor<16x64x1xf32>
    %82 = stablehlo.rsqrt %81 : tensor<16x64x1xf32>
    %83 = stablehlo.divide %82, %81 : tensor<16x64x1xf32>
    %cst_18 = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
    %84 = stablehlo.broadcast_in_dim %cst_18, dims = [] : (tensor<f32>) -> tensor<16x64x1xf32>
    %85 = stablehlo.multiply %84, %83 : tensor<16x64x1xf32>
    %86 = stablehlo.broadcast_in_dim %82, dims = [0, 1, 2] : (tensor<16x64x1xf32>) -> tensor<16x64x128xf32>
    %87 = stablehlo.multiply %79, %86 : tensor<16x64x128xf32>
    %88 = stablehlo.broadcast_in_dim %arg6, dims = [2] : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %89 = stablehlo.broadcast_in_dim %88, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<16x64x128xf32>
    %90 = stablehlo.multiply %87, %89 : tensor<16x64x128xf32>
    %91 = stablehlo.broadcast_in_dim %arg7, dims = [2] : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %92 = stablehlo.broadcast_in_dim %91, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<16x64x128xf32>
    %93 = stablehlo.add %90, %92 : tensor<16x64x128xf32>
    %94 = stablehlo.dot_general %93, %arg8, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x64x128xf32>, tensor<128x512xf32>) -> tensor<16x64x512xf32>
    %95 = stablehlo.multiply %94, %94 : tensor<16x64x512xf32>
    %96 = stablehlo.multiply %95, %94 : tensor<16x64x512xf32>
    %97 = stablehlo.multiply %94, %94 : tensor<16x64x512xf32>
    %cst_19 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %98 = stablehlo.broadcast_in_dim %cst_19, dims = [] : (tensor<f32>) -> tensor<16x64x512xf32>
    %99 = stablehlo.multiply %98, %97 : tensor<16x64x512xf32>
    %cst_20 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %100 = stablehlo.broadcast_in_dim %cst_20, dims = [] : (tensor<f32>) -> tensor<16x64x512xf32>
    %101 = stablehlo.multiply %100, %96 : tensor<16x64x512xf32>
    %102 = stablehlo.add %94, %101 : tensor<16x64x512xf32>
    %cst_21 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %103 = stablehlo.broadcast_in_dim %cst_21, dims = [] : (tensor<f32>) -> tensor<16x64x512xf32>
    %104 = stablehlo.multiply %103, %102 : tensor<16x64x512xf32>
    %105 = stablehlo.tanh %104 : tensor<16x64x512xf32>
    %cst_22 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %106 = stablehlo.broadcast_in_dim %cst_22, dims = [] : (tensor<f32>) -> tensor<16x64x512xf32>
    %107 = stablehlo.subtract %106, %105 : tensor<16x64x512xf32>
    %cst_23 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %108 = stablehlo.broadcast_in_dim %cst_23, dims = [] : (tensor<f32>) -> tensor<16x64x512xf32>
    %109 = stablehlo.add %108, %105 : tensor<16x64x512xf32>
    %cst_24 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %110 = stablehlo.broadcast_in_dim %cst_24, dims = [] : (tensor<f32>) -> tensor<16x64x512xf32>
    %111 = stablehlo.multiply %110, %109 : tensor<16x64x512xf32>
    %112 = stablehlo.multiply %94, %111 : tensor<16x64x512xf32>
    %113 = stablehlo.dot_general %112, %arg9, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x64x512xf32>, tensor<512x128xf32>) -> tensor<16x64x128xf32>
    %114 = stablehlo.add %64, %113 : tensor<16x64x128xf32>
    %cst_25 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %115 = stablehlo.reduce(%114 init: %cst_25) applies stablehlo.add across dimensions = [2] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<16x64xf32>
    %116 = stablehlo.broadcast_in_dim %115, dims = [0, 1] : (tensor<16x64xf32>) -> tensor<16x64x1xf32>
    %cst_26 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
    %117 = stablehlo.broadcast_in_dim %cst_26, dims = [] : (tensor<f32>) -> tensor<16x64x1xf32>
    %118 = stablehlo.divide %116, %117 : tensor<16x64x1xf32>
    %119 = stablehlo.broadcast_in_dim %118, dims = [0, 1, 2] : (tensor<16x64x1xf32>) -> tensor<16x64x128xf32>
    %120 = stablehlo.subtract %114, %119 : tensor<16x64x128xf32>
    %121 = stablehlo.multiply %120, %120 : tensor<16x64x128xf32>
    %cst_27 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %122 = stablehlo.broadcast_in_dim %cst_27, dims = [] : (tensor<f32>) -> tensor<16x64x128xf32>
    %123 = stablehlo.multiply %122, %120 : tensor<16x64x128xf32>
    %cst_28 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %124 = stablehlo.reduce(%121 init: %cst_28) applies stablehlo.add across dimensions = [2] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<16x64xf32>
    %125 = stablehlo.broadcast_in_dim %124, dims = [0, 1] : (tensor<16x64xf32>) -> tensor<16x64x1xf32>
    %cst_29 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
    %126 = stablehlo.broadcast_in_dim %cst_29, dims = [] : (tensor<f32>) -> tensor<16x64x1xf32>
    %127 = stablehlo.divide %125, %126 : tensor<16x64x1xf32>
    %128 = stablehlo.broadcast_in_dim %118, dims = [0, 1, 2] : (tensor<16x64x1xf32>) -> tensor<16x64x128xf32>
    %129 = stablehlo.subtract %114, %128 : tensor<16x64x128xf32>
    %cst_30 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %130 = stablehlo.broadcast_in_dim %cst_30, dims = [] : (tensor<f32>) -> tensor<16x64x1xf32>
    %131 = stablehlo.add %127, %130 : tensor<16x64x1xf32>
    %132 = stablehlo.rsqrt %131 : tensor<16x64x1xf32>
    %133 = stablehlo.divide %132, %131 : tensor<16x64x1xf32>
    %cst_31 = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
    %134 = stablehlo.broadcast_in_dim %cst_31, dims = [] : (tensor<f32>) -> tensor<16x64x1xf32>
    %135 = stablehlo.multiply %134, %133 : tensor<16x64x1xf32>
    %136 = stablehlo.broadcast_in_dim %132, dims = [0, 1, 2] : (tensor<16x64x1xf32>) -> tensor<16x64x128xf32>
    %137 = stablehlo.multiply %129, %136 : tensor<16x64x128xf32>
    %138 = stablehlo.broadcast_in_dim %arg10, dims = [2] : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %139 = stablehlo.broadcast_in_dim %138, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<16x64x128xf32>
    %140 = stablehlo.multiply %137, %139 : tensor<16x64x128xf32>
    %141 = stablehlo.broadcast_in_dim %arg11, dims = [2] : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %142 = stablehlo.broadcast_in_dim %141, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<16x64x128xf32>
    %143 = stablehlo.add %140, %142 : tensor<16x64x128xf32>
    %144 = stablehlo.dot_general %143, %arg12, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x64x128xf32>, tensor<128x384xf32>) -> tensor<16x64x384xf32>
    %145 = stablehlo.slice %144 [0:16, 0:64, 0:128] : (tensor<16x64x384xf32>) -> tensor<16x64x128xf32>
    %146 = stablehlo.slice %144 [0:16, 0:64, 128:256] : (tensor<16x64x384xf32>) -> tensor<16x64x128xf32>
    %147 = stablehlo.slice %144 [0:16, 0:64, 256:384] : (tensor<16x64x384xf32>) -> tensor<16x64x128xf32>
    %148 = stablehlo.reshape %145 : (tensor<16x64x128xf32>) -> tensor<16x64x4x32xf32>
    %149 = stablehlo.reshape %146 : (tensor<16x64x128xf32>) -> tensor<16x64x4x32xf32>
    %150 = stablehlo.reshape %147 : (tensor<16x64x128xf32>) -> tensor<16x64x4x32xf32>
    %151 = stablehlo.dot_general %148, %149, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<16x64x4x32xf32>, tensor<16x64x4x32xf32>) -> tensor<16x4x64x64xf32>
    %cst_32 = stablehlo.constant dense<5.65685415> : tensor<f32>
    %152 = stablehlo.broadcast_in_dim %cst_32, dims = [] : (tensor<f32>) -> tensor<16x4x64x64xf32>
    %153 = stablehlo.divide %151, %152 : tensor<16x4x64x64xf32>
    %cst_33 = stablehlo.constant dense<-1.000000e+09> : tensor<f32>
    %154:2 = call @_where_0(%5, %153, %cst_33) : (tensor<64x64xi1>, tensor<16x4x64x64xf32>, tensor<f32>) -> (tensor<16x4x64x64xf32>, tensor<16x4x64x64xi1>)
    %cst_34 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %155 = stablehlo.reduce(%154#0 init: %cst_34) applies stablehlo.maximum across dimensions = [3] : (tensor<16x4x64x64xf32>, tensor<f32>) -> tensor<16x4x64xf32>
    %cst_35 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %156 = stablehlo.broadcast_in_dim %cst_35, dims = [] : (tensor<f32>) -> tensor<16x4x64xf32>
    %157 = stablehlo.maximum %156, %155 : tensor<16x4x64xf32>
    %158 = stablehlo.broadcast_in_dim %157, dims = [0, 1, 2] : (tensor<16x4x64xf32>) -> tensor<16x4x64x1xf32>
    %159 = stablehlo.broadcast_in_dim %158, dims = [0, 1, 2, 3] : (tensor<16x4x64x1xf32>) -> tensor<16x4x64x64xf32>
    %160 = stablehlo.subtract %154#0, %159 : tensor<16x4x64x64xf32>
    %161 = stablehlo.exponential %160 : tensor<16x4x64x64xf32>
    %cst_36 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %162 = stablehlo.reduce(%161 init: %cst_36) applies stablehlo.add across dimensions = [3] : (tensor<16x4x64x64xf32>, tensor<f32>) -> tensor<16x4x64xf32>
    %163 = stablehlo.broadcast_in_dim %162, dims = [0, 1, 2] : (tensor<16x4x64xf32>) -> tensor<16x4x64x1xf32>
    %164 = stablehlo.broadcast_in_dim %163, dims = [0, 1, 2, 3] : (tensor<16x4x64x1xf32>) -> tensor<16x4x64x64xf32>
    %165 = stablehlo.divide %161, %164 : tensor<16x4x64x64xf32>
    %166 = stablehlo.multiply %163, %163 : tensor<16x4x64x1xf32>
    %cst_37 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %167 = stablehlo.broadcast_in_dim %cst_37, dims = [] : (tensor<f32>) -> tensor<16x4x64x1xf32>
    %168 = stablehlo.divide %167, %166 : tensor<16x4x64x1xf32>
    %169 = stablehlo.dot_general %150, %165, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3], precision = [DEFAULT, DEFAULT] : (tensor<16x64x4x32xf32>, tensor<16x4x64x64xf32>) -> tensor<16x4x32x64xf32>
    %170 = stablehlo.transpose %169, dims = [0, 3, 1, 2] : (tensor<16x4x32x64xf32>) -> tensor<16x64x4x32xf32>
    %171 = stablehlo.reshape %170 : (tensor<16x64x4x32xf32>) -> tensor<16x64x128xf32>
    %172 = stablehlo.dot_general %171, %arg13, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x64x128xf32>, tensor<128x128xf32>) -> tensor<16x64x128xf32>
    %173 = stablehlo.add %114, %172 : tensor<16x64x128xf32>
    %cst_38 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %174 = stablehlo.reduce(%173 init: %cst_38) applies stablehlo.add across dimensions = [2] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<16x64xf32>
    %175 = stablehlo.broadcast_in_dim %174, dims = [0, 1] : (tensor<16x64xf32>) -> tensor<16x64x1xf32>
    %cst_39 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
    %176 = stablehlo.broadcast_in_dim %cst_39, dims = [] : (tensor<f32>) -> tensor<16x64x1xf32>
    %177 = stablehlo.divide %175, %176 : tensor<16x64x1xf32>
    %178 = stablehlo.broadcast_in_dim %177, dims = [0, 1, 2] : (tensor<16x64x1xf32>) -> tensor<16x64x128xf32>
    %179 = stablehlo.subtract %173, %178 : tensor<16x64x128xf32>
    %180 = stablehlo.multiply %179, %179 : tensor<16x64x128xf32>
    %cst_40 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %181 = stablehlo.broadcast_in_dim %cst_40, dims = [] : (tensor<f32>) -> tensor<16x64x128xf32>
    %182 = stablehlo.multiply %181, %179 : tensor<16x64x128xf32>
    %cst_41 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %183 = stablehlo.reduce(%180 init: %cst_41) applies stablehlo.add across dimensions = [2] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<16x64xf32>
    %184 = stablehlo.broadcast_in_dim %183, dims = [0, 1] : (tensor<16x64xf32>) -> tensor<16x64x1xf32>
    %cst_42 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
    %185 = stablehlo.broadcast_in_dim %cst_42, dims = [] : (tensor<f32>) -> tensor<16x64x1xf32>
    %186 = stablehlo.divide %184, %185 : tensor<16x64x1xf32>
    %187 = stablehlo.broadcast_in_dim %177, dims = [0, 1, 2] : (tensor<16x64x1xf32>) -> tensor<16x64x128xf32>
    %188 = stablehlo.subtract %173, %187 : tensor<16x64x128xf32>
    %cst_43 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %189 = stablehlo.broadcast_in_dim %cst_43, dims = [] : (tensor<f32>) -> tensor<16x64x1xf32>
    %190 = stablehlo.add %186, %189 : tensor<16x64x1xf32>
    %191 = stablehlo.rsqrt %190 : tensor<16x64x1xf32>
    %192 = stablehlo.divide %191, %190 : tensor<16x64x1xf32>
    %cst_44 = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
    %193 = stablehlo.broadcast_in_dim %cst_44, dims = [] : (tensor<f32>) -> tensor<16x64x1xf32>
    %194 = stablehlo.multiply %193, %192 : tensor<16x64x1xf32>
    %195 = stablehlo.broadcast_in_dim %191, dims = [0, 1, 2] : (tensor<16x64x1xf32>) -> tensor<16x64x128xf32>
    %196 = stablehlo.multiply %188, %195 : tensor<16x64x128xf32>
    %197 = stablehlo.broadcast_in_dim %arg14, dims = [2] : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %198 = stablehlo.broadcast_in_dim %197, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<16x64x128xf32>
    %199 = stablehlo.multiply %196, %198 : tensor<16x64x128xf32>
    %200 = stablehlo.broadcast_in_dim %arg15, dims = [2] : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %201 = stablehlo.broadcast_in_dim %200, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<16x64x128xf32>
    %202 = stablehlo.add %199, %201 : tensor<16x64x128xf32>
    %203 = stablehlo.dot_general %202, %arg16, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x64x128xf32>, tensor<128x512xf32>) -> tensor<16x64x512xf32>
    %204 = stablehlo.multiply %203, %203 : tensor<16x64x512xf32>
    %205 = stablehlo.multiply %204, %203 : tensor<16x64x512xf32>
    %206 = stablehlo.multiply %203, %203 : tensor<16x64x512xf32>
    %cst_45 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %207 = stablehlo.broadcast_in_dim %cst_45, dims = [] : (tensor<f32>) -> tensor<16x64x512xf32>
    %208 = stablehlo.multiply %207, %206 : tensor<16x64x512xf32>
    %cst_46 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %209 = stablehlo.broadcast_in_dim %cst_46, dims = [] : (tensor<f32>) -> tensor<16x64x512xf32>
    %210 = stablehlo.multiply %209, %205 : tensor<16x64x512xf32>
    %211 = stablehlo.add %203, %210 : tensor<16x64x512xf32>
    %cst_47 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %212 = stablehlo.broadcast_in_dim %cst_47, dims = [] : (tensor<f32>) -> tensor<16x64x512xf32>
    %213 = stablehlo.multiply %212, %211 : tensor<16x64x512xf32>
    %214 = stablehlo.tanh %213 : tensor<16x64x512xf32>
    %cst_48 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %215 = stablehlo.broadcast_in_dim %cst_48, dims = [] : (tensor<f32>) -> tensor<16x64x512xf32>
    %216 = stablehlo.subtract %215, %214 : tensor<16x64x512xf32>
    %cst_49 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %217 = stablehlo.broadcast_in_dim %cst_49, dims = [] : (tensor<f32>) -> tensor<16x64x512xf32>
    %218 = stablehlo.add %217, %214 : tensor<16x64x512xf32>
    %cst_50 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %219 = stablehlo.broadcast_in_dim %cst_50, dims = [] : (tensor<f32>) -> tensor<16x64x512xf32>
    %220 = stablehlo.multiply %219, %218 : tensor<16x64x512xf32>
    %221 = stablehlo.multiply %203, %220 : tensor<16x64x512xf32>
    %222 = stablehlo.dot_general %221, %arg17, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x64x512xf32>, tensor<512x128xf32>) -> tensor<16x64x128xf32>
    %223 = stablehlo.add %173, %222 : tensor<16x64x128xf32>
    %cst_51 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %224 = stablehlo.reduce(%223 init: %cst_51) applies stablehlo.add across dimensions = [2] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<16x64xf32>
    %225 = stablehlo.broadcast_in_dim %224, dims = [0, 1] : (tensor<16x64xf32>) -> tensor<16x64x1xf32>
    %cst_52 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
    %226 = stablehlo.broadcast_in_dim %cst_52, dims = [] : (tensor<f32>) -> tensor<16x64x1xf32>
    %227 = stablehlo.divide %225, %226 : tensor<16x64x1xf32>
    %228 = stablehlo.broadcast_in_dim %227, dims = [0, 1, 2] : (tensor<16x64x1xf32>) -> tensor<16x64x128xf32>
    %229 = stablehlo.subtract %223, %228 : tensor<16x64x128xf32>
    %230 = stablehlo.multiply %229, %229 : tensor<16x64x128xf32>
    %cst_53 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %231 = stablehlo.broadcast_in_dim %cst_53, dims = [] : (tensor<f32>) -> tensor<16x64x128xf32>
    %232 = stablehlo.multiply %231, %229 : tensor<16x64x128xf32>
    %cst_54 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %233 = stablehlo.reduce(%230 init: %cst_54) applies stablehlo.add across dimensions = [2] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<16x64xf32>
    %234 = stablehlo.broadcast_in_dim %233, dims = [0, 1] : (tensor<16x64xf32>) -> tensor<16x64x1xf32>
    %cst_55 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
    %235 = stablehlo.broadcast_in_dim %cst_55, dims = [] : (tensor<f32>) -> tensor<16x64x1xf32>
    %236 = stablehlo.divide %234, %235 : tensor<16x64x1xf32>
    %237 = stablehlo.broadcast_in_dim %227, dims = [0, 1, 2] : (tensor<16x64x1xf32>) -> tensor<16x64x128xf32>
    %238 = stablehlo.subtract %223, %237 : tensor<16x64x128xf32>
    %cst_56 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %239 = stablehlo.broadcast_in_dim %cst_56, dims = [] : (tensor<f32>) -> tensor<16x64x1xf32>
    %240 = stablehlo.add %236, %239 : tensor<16x64x1xf32>
    %241 = stablehlo.rsqrt %240 : tensor<16x64x1xf32>
    %242 = stablehlo.divide %241, %240 : tensor<16x64x1xf32>
    %cst_57 = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
    %243 = stablehlo.broadcast_in_dim %cst_57, dims = [] : (tensor<f32>) -> tensor<16x64x1xf32>
    %244 = stablehlo.multiply %243, %242 : tensor<16x64x1xf32>
    %245 = stablehlo.broadcast_in_dim %241, dims = [0, 1, 2] : (tensor<16x64x1xf32>) -> tensor<16x64x128xf32>
    %246 = stablehlo.multiply %238, %245 : tensor<16x64x128xf32>
    %247 = stablehlo.broadcast_in_dim %arg18, dims = [2] : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %248 = stablehlo.broadcast_in_dim %247, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<16x64x128xf32>
    %249 = stablehlo.multiply %246, %248 : tensor<16x64x128xf32>
    %250 = stablehlo.broadcast_in_dim %arg19, dims = [2] : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %251 = stablehlo.broadcast_in_dim %250, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<16x64x128xf32>
    %252 = stablehlo.add %249, %251 : tensor<16x64x128xf32>
    %253 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<2048x128xf32>) -> tensor<128x2048xf32>
    %254 = stablehlo.dot_general %252, %253, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x64x128xf32>, tensor<128x2048xf32>) -> tensor<16x64x2048xf32>
    %255:3 = call @log_softmax(%254) : (tensor<16x64x2048xf32>) -> (tensor<16x64x2048xf32>, tensor<16x64x2048xf32>, tensor<16x64x1xf32>)
    %256 = stablehlo.broadcast_in_dim %arg21, dims = [0, 1] : (tensor<16x64xi32>) -> tensor<16x64x1xi32>
    %257:2 = call @take_along_axis(%255#0, %256) : (tensor<16x64x2048xf32>, tensor<16x64x1xi32>) -> (tensor<16x64x1xf32>, tensor<16x64x1x1xi32>)
    %cst_58 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %258 = stablehlo.reduce(%257#0 init: %cst_58) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<16x64x1xf32>, tensor<f32>) -> tensor<f32>
    %cst_59 = stablehlo.constant dense<1.024000e+03> : tensor<f32>
    %259 = stablehlo.divide %258, %cst_59 : tensor<f32>
    %260 = stablehlo.negate %259 : tensor<f32>
    %cst_60 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %261 = stablehlo.negate %cst_60 : tensor<f32>
    %cst_61 = stablehlo.constant dense<1.024000e+03> : tensor<f32>
    %262 = stablehlo.divide %261, %cst_61 : tensor<f32>
    %263 = stablehlo.broadcast_in_dim %262, dims = [] : (tensor<f32>) -> tensor<16x64x1xf32>
    %264 = call @take_along_axis_1(%257#1, %263) : (tensor<16x64x1x1xi32>, tensor<16x64x1xf32>) -> tensor<16x64x2048xf32>
    %265 = call @log_softmax_2(%255#1, %255#2, %264) : (tensor<16x64x2048xf32>, tensor<16x64x1xf32>, tensor<16x64x2048xf32>) -> tensor<16x64x2048xf32>
    %266 = stablehlo.dot_general %265, %252, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<16x64x2048xf32>, tensor<16x64x128xf32>) -> tensor<2048x128xf32>
    %267 = stablehlo.transpose %266, dims = [1, 0] : (tensor<2048x128xf32>) -> tensor<128x2048xf32>
    %268 = stablehlo.dot_general %265, %253, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x64x2048xf32>, tensor<128x2048xf32>) -> tensor<16x64x128xf32>
    %269 = stablehlo.transpose %267, dims = [1, 0] : (tensor<128x2048xf32>) -> tensor<2048x128xf32>
    %cst_62 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %270 = stablehlo.reduce(%268 init: %cst_62) applies stablehlo.add across dimensions = [0, 1] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<128xf32>
    %271 = stablehlo.reshape %270 : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %cst_63 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %272 = stablehlo.reduce(%271 init: %cst_63) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x128xf32>, tensor<f32>) -> tensor<128xf32>
    %273 = stablehlo.multiply %246, %268 : tensor<16x64x128xf32>
    %cst_64 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %274 = stablehlo.reduce(%273 init: %cst_64) applies stablehlo.add across dimensions = [0, 1] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<128xf32>
    %275 = stablehlo.reshape %274 : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %276 = stablehlo.broadcast_in_dim %247, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<16x64x128xf32>
    %277 = stablehlo.multiply %268, %276 : tensor<16x64x128xf32>
    %cst_65 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %278 = stablehlo.reduce(%275 init: %cst_65) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x128xf32>, tensor<f32>) -> tensor<128xf32>
    %279 = stablehlo.multiply %238, %277 : tensor<16x64x128xf32>
    %cst_66 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %280 = stablehlo.reduce(%279 init: %cst_66) applies stablehlo.add across dimensions = [2] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<16x64xf32>
    %281 = stablehlo.reshape %280 : (tensor<16x64xf32>) -> tensor<16x64x1xf32>
    %282 = stablehlo.broadcast_in_dim %241, dims = [0, 1, 2] : (tensor<16x64x1xf32>) -> tensor<16x64x128xf32>
    %283 = stablehlo.multiply %277, %282 : tensor<16x64x128xf32>
    %284 = stablehlo.multiply %281, %244 : tensor<16x64x1xf32>
    %285 = stablehlo.negate %283 : tensor<16x64x128xf32>
    %cst_67 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %286 = stablehlo.reduce(%285 init: %cst_67) applies stablehlo.add across dimensions = [2] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<16x64xf32>
    %287 = stablehlo.reshape %286 : (tensor<16x64xf32>) -> tensor<16x64x1xf32>
    %cst_68 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
    %288 = stablehlo.broadcast_in_dim %cst_68, dims = [] : (tensor<f32>) -> tensor<16x64x1xf32>
    %289 = stablehlo.divide %284, %288 : tensor<16x64x1xf32>
    %cst_69 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %290 = stablehlo.reduce(%289 init: %cst_69) applies stablehlo.add across dimensions = [2] : (tensor<16x64x1xf32>, tensor<f32>) -> tensor<16x64xf32>
    %291 = stablehlo.broadcast_in_dim %290, dims = [0, 1] : (tensor<16x64xf32>) -> tensor<16x64x128xf32>
    %292 = stablehlo.multiply %291, %232 : tensor<16x64x128xf32>
    %293 = stablehlo.negate %292 : tensor<16x64x128xf32>
    %cst_70 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %294 = stablehlo.reduce(%293 init: %cst_70) applies stablehlo.add across dimensions = [2] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<16x64xf32>
    %295 = stablehlo.reshape %294 : (tensor<16x64xf32>) -> tensor<16x64x1xf32>
    %296 = stablehlo.add %283, %292 : tensor<16x64x128xf32>
    %297 = stablehlo.add %287, %295 : tensor<16x64x1xf32>
    %cst_71 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
    %298 = stablehlo.broadcast_in_dim %cst_71, dims = [] : (tensor<f32>) -> tensor<16x64x1xf32>
    %299 = stablehlo.divide %297, %298 : tensor<16x64x1xf32>
    %cst_72 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %300 = stablehlo.reduce(%299 init: %cst_72) applies stablehlo.add across dimensions = [2] : (tensor<16x64x1xf32>, tensor<f32>) -> tensor<16x64xf32>
    %301 = stablehlo.broadcast_in_dim %300, dims = [0, 1] : (tensor<16x64xf32>) -> tensor<16x64x128xf32>
    %302 = stablehlo.add %296, %301 : tensor<16x64x128xf32>
    %303 = stablehlo.dot_general %302, %221, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<16x64x128xf32>, tensor<16x64x512xf32>) -> tensor<128x512xf32>
    %304 = stablehlo.transpose %303, dims = [1, 0] : (tensor<128x512xf32>) -> tensor<512x128xf32>
    %305 = stablehlo.dot_general %302, %arg17, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x64x128xf32>, tensor<512x128xf32>) -> tensor<16x64x512xf32>
    %306 = stablehlo.multiply %203, %305 : tensor<16x64x512xf32>
    %307 = stablehlo.multiply %305, %220 : tensor<16x64x512xf32>
    %cst_73 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %308 = stablehlo.broadcast_in_dim %cst_73, dims = [] : (tensor<f32>) -> tensor<16x64x512xf32>
    %309 = stablehlo.multiply %308, %306 : tensor<16x64x512xf32>
    %310 = stablehlo.multiply %309, %216 : tensor<16x64x512xf32>
    %311 = stablehlo.multiply %310, %214 : tensor<16x64x512xf32>
    %312 = stablehlo.add %310, %311 : tensor<16x64x512xf32>
    %cst_74 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %313 = stablehlo.broadcast_in_dim %cst_74, dims = [] : (tensor<f32>) -> tensor<16x64x512xf32>
    %314 = stablehlo.multiply %313, %312 : tensor<16x64x512xf32>
    %315 = stablehlo.add %307, %314 : tensor<16x64x512xf32>
    %cst_75 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %316 = stablehlo.broadcast_in_dim %cst_75, dims = [] : (tensor<f32>) -> tensor<16x64x512xf32>
    %317 = stablehlo.multiply %316, %314 : tensor<16x64x512xf32>
    %318 = stablehlo.multiply %317, %208 : tensor<16x64x512xf32>
    %319 = stablehlo.add %315, %318 : tensor<16x64x512xf32>
    %320 = stablehlo.dot_general %319, %202, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<16x64x512xf32>, tensor<16x64x128xf32>) -> tensor<512x128xf32>
    %321 = stablehlo.transpose %320, dims = [1, 0] : (tensor<512x128xf32>) -> tensor<128x512xf32>
    %322 = stablehlo.dot_general %319, %arg16, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x64x512xf32>, tensor<128x512xf32>) -> tensor<16x64x128xf32>
    %cst_76 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %323 = stablehlo.reduce(%322 init: %cst_76) applies stablehlo.add across dimensions = [0, 1] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<128xf32>
    %324 = stablehlo.reshape %323 : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %cst_77 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %325 = stablehlo.reduce(%324 init: %cst_77) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x128xf32>, tensor<f32>) -> tensor<128xf32>
    %326 = stablehlo.multiply %196, %322 : tensor<16x64x128xf32>
    %cst_78 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %327 = stablehlo.reduce(%326 init: %cst_78) applies stablehlo.add across dimensions = [0, 1] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<128xf32>
    %328 = stablehlo.reshape %327 : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %329 = stablehlo.broadcast_in_dim %197, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<16x64x128xf32>
    %330 = stablehlo.multiply %322, %329 : tensor<16x64x128xf32>
    %cst_79 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %331 = stablehlo.reduce(%328 init: %cst_79) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x128xf32>, tensor<f32>) -> tensor<128xf32>
    %332 = stablehlo.multiply %188, %330 : tensor<16x64x128xf32>
    %cst_80 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %333 = stablehlo.reduce(%332 init: %cst_80) applies stablehlo.add across dimensions = [2] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<16x64xf32>
    %334 = stablehlo.reshape %333 : (tensor<16x64xf32>) -> tensor<16x64x1xf32>
    %335 = stablehlo.broadcast_in_dim %191, dims = [0, 1, 2] : (tensor<16x64x1xf32>) -> tensor<16x64x128xf32>
    %336 = stablehlo.multiply %330, %335 : tensor<16x64x128xf32>
    %337 = stablehlo.multiply %334, %194 : tensor<16x64x1xf32>
    %338 = stablehlo.negate %336 : tensor<16x64x128xf32>
    %cst_81 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %339 = stablehlo.reduce(%338 init: %cst_81) applies stablehlo.add across dimensions = [2] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<16x64xf32>
    %340 = stablehlo.reshape %339 : (tensor<16x64xf32>) -> tensor<16x64x1xf32>
    %341 = stablehlo.add %302, %336 : tensor<16x64x128xf32>
    %cst_82 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
    %342 = stablehlo.broadcast_in_dim %cst_82, dims = [] : (tensor<f32>) -> tensor<16x64x1xf32>
    %343 = stablehlo.divide %337, %342 : tensor<16x64x1xf32>
    %cst_83 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %344 = stablehlo.reduce(%343 init: %cst_83) applies stablehlo.add across dimensions = [2] : (tensor<16x64x1xf32>, tensor<f32>) -> tensor<16x64xf32>
    %345 = stablehlo.broadcast_in_dim %344, dims = [0, 1] : (tensor<16x64xf32>) -> tensor<16x64x128xf32>
    %346 = stablehlo.multiply %345, %182 : tensor<16x64x128xf32>
    %347 = stablehlo.negate %346 : tensor<16x64x128xf32>
    %cst_84 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %348 = stablehlo.reduce(%347 init: %cst_84) applies stablehlo.add across dimensions = [2] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<16x64xf32>
    %349 = stablehlo.reshape %348 : (tensor<16x64xf32>) -> tensor<16x64x1xf32>
    %350 = stablehlo.add %341, %346 : tensor<16x64x128xf32>
    %351 = stablehlo.add %340, %349 : tensor<16x64x1xf32>
    %cst_85 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
    %352 = stablehlo.broadcast_in_dim %cst_85, dims = [] : (tensor<f32>) -> tensor<16x64x1xf32>
    %353 = stablehlo.divide %351, %352 : tensor<16x64x1xf32>
    %cst_86 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %354 = stablehlo.reduce(%353 init: %cst_86) applies stablehlo.add across dimensions = [2] : (tensor<16x64x1xf32>, tensor<f32>) -> tensor<16x64xf32>
    %355 = stablehlo.broadcast_in_dim %354, dims = [0, 1] : (tensor<16x64xf32>) -> tensor<16x64x128xf32>
    %356 = stablehlo.add %350, %355 : tensor<16x64x128xf32>
    %357 = stablehlo.dot_general %356, %171, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<16x64x128xf32>, tensor<16x64x128xf32>) -> tensor<128x128xf32>
    %358 = stablehlo.transpose %357, dims = [1, 0] : (tensor<128x128xf32>) -> tensor<128x128xf32>
    %359 = stablehlo.dot_general %356, %arg13, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x64x128xf32>, tensor<128x128xf32>) -> tensor<16x64x128xf32>
    %360 = stablehlo.reshape %359 : (tensor<16x64x128xf32>) -> tensor<16x64x4x32xf32>
    %361 = stablehlo.transpose %360, dims = [0, 2, 3, 1] : (tensor<16x64x4x32xf32>) -> tensor<16x4x32x64xf32>
    %362 = stablehlo.dot_general %361, %150, batching_dims = [0, 1] x [0, 2], contracting_dims = [2] x [3], precision = [DEFAULT, DEFAULT] : (tensor<16x4x32x64xf32>, tensor<16x64x4x32xf32>) -> tensor<16x4x64x64xf32>
    %363 = stablehlo.dot_general %361, %165, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<16x4x32x64xf32>, tensor<16x4x64x64xf32>) -> tensor<16x4x32x64xf32>
    %364 = stablehlo.transpose %363, dims = [0, 3, 1, 2] : (tensor<16x4x32x64xf32>) -> tensor<16x64x4x32xf32>
    %365 = stablehlo.broadcast_in_dim %168, dims = [0, 1, 2, 3] : (tensor<16x4x64x1xf32>) -> tensor<16x4x64x64xf32>
    %366 = stablehlo.multiply %362, %365 : tensor<16x4x64x64xf32>
    %367 = stablehlo.multiply %366, %161 : tensor<16x4x64x64xf32>
    %cst_87 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %368 = stablehlo.reduce(%367 init: %cst_87) applies stablehlo.add across dimensions = [3] : (tensor<16x4x64x64xf32>, tensor<f32>) -> tensor<16x4x64xf32>
    %369 = stablehlo.reshape %368 : (tensor<16x4x64xf32>) -> tensor<16x4x64x1xf32>
    %370 = stablehlo.negate %369 : tensor<16x4x64x1xf32>
    %371 = stablehlo.broadcast_in_dim %163, dims = [0, 1, 2, 3] : (tensor<16x4x64x1xf32>) -> tensor<16x4x64x64xf32>
    %372 = stablehlo.divide %362, %371 : tensor<16x4x64x64xf32>
    %cst_88 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %373 = stablehlo.reduce(%370 init: %cst_88) applies stablehlo.add across dimensions = [3] : (tensor<16x4x64x1xf32>, tensor<f32>) -> tensor<16x4x64xf32>
    %374 = stablehlo.broadcast_in_dim %373, dims = [0, 1, 2] : (tensor<16x4x64xf32>) -> tensor<16x4x64x64xf32>
    %375 = stablehlo.add %372, %374 : tensor<16x4x64x64xf32>
    %376 = stablehlo.multiply %375, %161 : tensor<16x4x64x64xf32>
    %377 = call @_where_3(%154#1, %376) : (tensor<16x4x64x64xi1>, tensor<16x4x64x64xf32>) -> tensor<16x4x64x64xf32>
    %cst_89 = stablehlo.constant dense<5.65685415> : tensor<f32>
    %378 = stablehlo.broadcast_in_dim %cst_89, dims = [] : (tensor<f32>) -> tensor<16x4x64x64xf32>
    %379 = stablehlo.divide %377, %378 : tensor<16x4x64x64xf32>
    %380 = stablehlo.dot_general %379, %148, batching_dims = [0, 1] x [0, 2], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x4x64x64xf32>, tensor<16x64x4x32xf32>) -> tensor<16x4x64x32xf32>
    %381 = stablehlo.transpose %380, dims = [0, 2, 1, 3] : (tensor<16x4x64x32xf32>) -> tensor<16x64x4x32xf32>
    %382 = stablehlo.dot_general %379, %149, batching_dims = [0, 1] x [0, 2], contracting_dims = [3] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x4x64x64xf32>, tensor<16x64x4x32xf32>) -> tensor<16x4x64x32xf32>
    %383 = stablehlo.transpose %382, dims = [0, 2, 1, 3] : (tensor<16x4x64x32xf32>) -> tensor<16x64x4x32xf32>
    %384 = stablehlo.reshape %364 : (tensor<16x64x4x32xf32>) -> tensor<16x64x128xf32>
    %385 = stablehlo.reshape %381 : (tensor<16x64x4x32xf32>) -> tensor<16x64x128xf32>
    %386 = stablehlo.reshape %383 : (tensor<16x64x4x32xf32>) -> tensor<16x64x128xf32>
    %387 = stablehlo.concatenate %386, %385, %384, dim = 2 : (tensor<16x64x128xf32>, tensor<16x64x128xf32>, tensor<16x64x128xf32>) -> tensor<16x64x384xf32>
    %388 = stablehlo.dot_general %387, %143, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<16x64x384xf32>, tensor<16x64x128xf32>) -> tensor<384x128xf32>
    %389 = stablehlo.transpose %388, dims = [1, 0] : (tensor<384x128xf32>) -> tensor<128x384xf32>
    %390 = stablehlo.dot_general %387, %arg12, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x64x384xf32>, tensor<128x384xf32>) -> tensor<16x64x128xf32>
    %cst_90 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %391 = stablehlo.reduce(%390 init: %cst_90) applies stablehlo.add across dimensions = [0, 1] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<128xf32>
    %392 = stablehlo.reshape %391 : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %cst_91 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %393 = stablehlo.reduce(%392 init: %cst_91) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x128xf32>, tensor<f32>) -> tensor<128xf32>
    %394 = stablehlo.multiply %137, %390 : tensor<16x64x128xf32>
    %cst_92 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %395 = stablehlo.reduce(%394 init: %cst_92) applies stablehlo.add across dimensions = [0, 1] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<128xf32>
    %396 = stablehlo.reshape %395 : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %397 = stablehlo.broadcast_in_dim %138, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<16x64x128xf32>
    %398 = stablehlo.multiply %390, %397 : tensor<16x64x128xf32>
    %cst_93 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %399 = stablehlo.reduce(%396 init: %cst_93) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x128xf32>, tensor<f32>) -> tensor<128xf32>
    %400 = stablehlo.multiply %129, %398 : tensor<16x64x128xf32>
    %cst_94 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %401 = stablehlo.reduce(%400 init: %cst_94) applies stablehlo.add across dimensions = [2] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<16x64xf32>
    %402 = stablehlo.reshape %401 : (tensor<16x64xf32>) -> tensor<16x64x1xf32>
    %403 = stablehlo.broadcast_in_dim %132, dims = [0, 1, 2] : (tensor<16x64x1xf32>) -> tensor<16x64x128xf32>
    %404 = stablehlo.multiply %398, %403 : tensor<16x64x128xf32>
    %405 = stablehlo.multiply %402, %135 : tensor<16x64x1xf32>
    %406 = stablehlo.negate %404 : tensor<16x64x128xf32>
    %cst_95 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %407 = stablehlo.reduce(%406 init: %cst_95) applies stablehlo.add across dimensions = [2] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<16x64xf32>
    %408 = stablehlo.reshape %407 : (tensor<16x64xf32>) -> tensor<16x64x1xf32>
    %409 = stablehlo.add %356, %404 : tensor<16x64x128xf32>
    %cst_96 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
    %410 = stablehlo.broadcast_in_dim %cst_96, dims = [] : (tensor<f32>) -> tensor<16x64x1xf32>
    %411 = stablehlo.divide %405, %410 : tensor<16x64x1xf32>
    %cst_97 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %412 = stablehlo.reduce(%411 init: %cst_97) applies stablehlo.add across dimensions = [2] : (tensor<16x64x1xf32>, tensor<f32>) -> tensor<16x64xf32>
    %413 = stablehlo.broadcast_in_dim %412, dims = [0, 1] : (tensor<16x64xf32>) -> tensor<16x64x128xf32>
    %414 = stablehlo.multiply %413, %123 : tensor<16x64x128xf32>
    %415 = stablehlo.negate %414 : tensor<16x64x128xf32>
    %cst_98 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %416 = stablehlo.reduce(%415 init: %cst_98) applies stablehlo.add across dimensions = [2] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<16x64xf32>
    %417 = stablehlo.reshape %416 : (tensor<16x64xf32>) -> tensor<16x64x1xf32>
    %418 = stablehlo.add %409, %414 : tensor<16x64x128xf32>
    %419 = stablehlo.add %408, %417 : tensor<16x64x1xf32>
    %cst_99 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
    %420 = stablehlo.broadcast_in_dim %cst_99, dims = [] : (tensor<f32>) -> tensor<16x64x1xf32>
    %421 = stablehlo.divide %419, %420 : tensor<16x64x1xf32>
    %cst_100 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %422 = stablehlo.reduce(%421 init: %cst_100) applies stablehlo.add across dimensions = [2] : (tensor<16x64x1xf32>, tensor<f32>) -> tensor<16x64xf32>
    %423 = stablehlo.broadcast_in_dim %422, dims = [0, 1] : (tensor<16x64xf32>) -> tensor<16x64x128xf32>
    %424 = stablehlo.add %418, %423 : tensor<16x64x128xf32>
    %425 = stablehlo.dot_general %424, %112, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<16x64x128xf32>, tensor<16x64x512xf32>) -> tensor<128x512xf32>
    %426 = stablehlo.transpose %425, dims = [1, 0] : (tensor<128x512xf32>) -> tensor<512x128xf32>
    %427 = stablehlo.dot_general %424, %arg9, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x64x128xf32>, tensor<512x128xf32>) -> tensor<16x64x512xf32>
    %428 = stablehlo.multiply %94, %427 : tensor<16x64x512xf32>
    %429 = stablehlo.multiply %427, %111 : tensor<16x64x512xf32>
    %cst_101 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %430 = stablehlo.broadcast_in_dim %cst_101, dims = [] : (tensor<f32>) -> tensor<16x64x512xf32>
    %431 = stablehlo.multiply %430, %428 : tensor<16x64x512xf32>
    %432 = stablehlo.multiply %431, %107 : tensor<16x64x512xf32>
    %433 = stablehlo.multiply %432, %105 : tensor<16x64x512xf32>
    %434 = stablehlo.add %432, %433 : tensor<16x64x512xf32>
    %cst_102 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %435 = stablehlo.broadcast_in_dim %cst_102, dims = [] : (tensor<f32>) -> tensor<16x64x512xf32>
    %436 = stablehlo.multiply %435, %434 : tensor<16x64x512xf32>
    %437 = stablehlo.add %429, %436 : tensor<16x64x512xf32>
    %cst_103 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %438 = stablehlo.broadcast_in_dim %cst_103, dims = [] : (tensor<f32>) -> tensor<16x64x512xf32>
    %439 = stablehlo.multiply %438, %436 : tensor<16x64x512xf32>
    %440 = stablehlo.multiply %439, %99 : tensor<16x64x512xf32>
    %441 = stablehlo.add %437, %440 : tensor<16x64x512xf32>
    %442 = stablehlo.dot_general %441, %93, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<16x64x512xf32>, tensor<16x64x128xf32>) -> tensor<512x128xf32>
    %443 = stablehlo.transpose %442, dims = [1, 0] : (tensor<512x128xf32>) -> tensor<128x512xf32>
    %444 = stablehlo.dot_general %441, %arg8, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x64x512xf32>, tensor<128x512xf32>) -> tensor<16x64x128xf32>
    %cst_104 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %445 = stablehlo.reduce(%444 init: %cst_104) applies stablehlo.add across dimensions = [0, 1] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<128xf32>
    %446 = stablehlo.reshape %445 : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %cst_105 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %447 = stablehlo.reduce(%446 init: %cst_105) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x128xf32>, tensor<f32>) -> tensor<128xf32>
    %448 = stablehlo.multiply %87, %444 : tensor<16x64x128xf32>
    %cst_106 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %449 = stablehlo.reduce(%448 init: %cst_106) applies stablehlo.add across dimensions = [0, 1] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<128xf32>
    %450 = stablehlo.reshape %449 : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %451 = stablehlo.broadcast_in_dim %88, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<16x64x128xf32>
    %452 = stablehlo.multiply %444, %451 : tensor<16x64x128xf32>
    %cst_107 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %453 = stablehlo.reduce(%450 init: %cst_107) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x128xf32>, tensor<f32>) -> tensor<128xf32>
    %454 = stablehlo.multiply %79, %452 : tensor<16x64x128xf32>
    %cst_108 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %455 = stablehlo.reduce(%454 init: %cst_108) applies stablehlo.add across dimensions = [2] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<16x64xf32>
    %456 = stablehlo.reshape %455 : (tensor<16x64xf32>) -> tensor<16x64x1xf32>
    %457 = stablehlo.broadcast_in_dim %82, dims = [0, 1, 2] : (tensor<16x64x1xf32>) -> tensor<16x64x128xf32>
    %458 = stablehlo.multiply %452, %457 : tensor<16x64x128xf32>
    %459 = stablehlo.multiply %456, %85 : tensor<16x64x1xf32>
    %460 = stablehlo.negate %458 : tensor<16x64x128xf32>
    %cst_109 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %461 = stablehlo.reduce(%460 init: %cst_109) applies stablehlo.add across dimensions = [2] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<16x64xf32>
    %462 = stablehlo.reshape %461 : (tensor<16x64xf32>) -> tensor<16x64x1xf32>
    %463 = stablehlo.add %424, %458 : tensor<16x64x128xf32>
    %cst_110 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
    %464 = stablehlo.broadcast_in_dim %cst_110, dims = [] : (tensor<f32>) -> tensor<16x64x1xf32>
    %465 = stablehlo.divide %459, %464 : tensor<16x64x1xf32>
    %cst_111 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %466 = stablehlo.reduce(%465 init: %cst_111) applies stablehlo.add across dimensions = [2] : (tensor<16x64x1xf32>, tensor<f32>) -> tensor<16x64xf32>
    %467 = stablehlo.broadcast_in_dim %466, dims = [0, 1] : (tensor<16x64xf32>) -> tensor<16x64x128xf32>
    %468 = stablehlo.multiply %467, %73 : tensor<16x64x128xf32>
    %469 = stablehlo.negate %468 : tensor<16x64x128xf32>
    %cst_112 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %470 = stablehlo.reduce(%469 init: %cst_112) applies stablehlo.add across dimensions = [2] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<16x64xf32>
    %471 = stablehlo.reshape %470 : (tensor<16x64xf32>) -> tensor<16x64x1xf32>
    %472 = stablehlo.add %463, %468 : tensor<16x64x128xf32>
    %473 = stablehlo.add %462, %471 : tensor<16x64x1xf32>
    %cst_113 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
    %474 = stablehlo.broadcast_in_dim %cst_113, dims = [] : (tensor<f32>) -> tensor<16x64x1xf32>
    %475 = stablehlo.divide %473, %474 : tensor<16x64x1xf32>
    %cst_114 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %476 = stablehlo.reduce(%475 init: %cst_114) applies stablehlo.add across dimensions = [2] : (tensor<16x64x1xf32>, tensor<f32>) -> tensor<16x64xf32>
    %477 = stablehlo.broadcast_in_dim %476, dims = [0, 1] : (tensor<16x64xf32>) -> tensor<16x64x128xf32>
    %478 = stablehlo.add %472, %477 : tensor<16x64x128xf32>
    %479 = stablehlo.dot_general %478, %62, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<16x64x128xf32>, tensor<16x64x128xf32>) -> tensor<128x128xf32>
    %480 = stablehlo.transpose %479, dims = [1, 0] : (tensor<128x128xf32>) -> tensor<128x128xf32>
    %481 = stablehlo.dot_general %478, %arg5, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x64x128xf32>, tensor<128x128xf32>) -> tensor<16x64x128xf32>
    %482 = stablehlo.reshape %481 : (tensor<16x64x128xf32>) -> tensor<16x64x4x32xf32>
    %483 = stablehlo.transpose %482, dims = [0, 2, 3, 1] : (tensor<16x64x4x32xf32>) -> tensor<16x4x32x64xf32>
    %484 = stablehlo.dot_general %483, %41, batching_dims = [0, 1] x [0, 2], contracting_dims = [2] x [3], precision = [DEFAULT, DEFAULT] : (tensor<16x4x32x64xf32>, tensor<16x64x4x32xf32>) -> tensor<16x4x64x64xf32>
    %485 = stablehlo.dot_general %483, %56, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<16x4x32x64xf32>, tensor<16x4x64x64xf32>) -> tensor<16x4x32x64xf32>
    %486 = stablehlo.transpose %485, dims = [0, 3, 1, 2] : (tensor<16x4x32x64xf32>) -> tensor<16x64x4x32xf32>
    %487 = stablehlo.broadcast_in_dim %59, dims = [0, 1, 2, 3] : (tensor<16x4x64x1xf32>) -> tensor<16x4x64x64xf32>
    %488 = stablehlo.multiply %484, %487 : tensor<16x4x64x64xf32>
    %489 = stablehlo.multiply %488, %52 : tensor<16x4x64x64xf32>
    %cst_115 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %490 = stablehlo.reduce(%489 init: %cst_115) applies stablehlo.add across dimensions = [3] : (tensor<16x4x64x64xf32>, tensor<f32>) -> tensor<16x4x64xf32>
    %491 = stablehlo.reshape %490 : (tensor<16x4x64xf32>) -> tensor<16x4x64x1xf32>
    %492 = stablehlo.negate %491 : tensor<16x4x64x1xf32>
    %493 = stablehlo.broadcast_in_dim %54, dims = [0, 1, 2, 3] : (tensor<16x4x64x1xf32>) -> tensor<16x4x64x64xf32>
    %494 = stablehlo.divide %484, %493 : tensor<16x4x64x64xf32>
    %cst_116 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %495 = stablehlo.reduce(%492 init: %cst_116) applies stablehlo.add across dimensions = [3] : (tensor<16x4x64x1xf32>, tensor<f32>) -> tensor<16x4x64xf32>
    %496 = stablehlo.broadcast_in_dim %495, dims = [0, 1, 2] : (tensor<16x4x64xf32>) -> tensor<16x4x64x64xf32>
    %497 = stablehlo.add %494, %496 : tensor<16x4x64x64xf32>
    %498 = stablehlo.multiply %497, %52 : tensor<16x4x64x64xf32>
    %499 = call @_where_3(%45#1, %498) : (tensor<16x4x64x64xi1>, tensor<16x4x64x64xf32>) -> tensor<16x4x64x64xf32>
    %cst_117 = stablehlo.constant dense<5.65685415> : tensor<f32>
    %500 = stablehlo.broadcast_in_dim %cst_117, dims = [] : (tensor<f32>) -> tensor<16x4x64x64xf32>
    %501 = stablehlo.divide %499, %500 : tensor<16x4x64x64xf32>
    %502 = stablehlo.dot_general %501, %39, batching_dims = [0, 1] x [0, 2], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x4x64x64xf32>, tensor<16x64x4x32xf32>) -> tensor<16x4x64x32xf32>
    %503 = stablehlo.transpose %502, dims = [0, 2, 1, 3] : (tensor<16x4x64x32xf32>) -> tensor<16x64x4x32xf32>
    %504 = stablehlo.dot_general %501, %40, batching_dims = [0, 1] x [0, 2], contracting_dims = [3] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x4x64x64xf32>, tensor<16x64x4x32xf32>) -> tensor<16x4x64x32xf32>
    %505 = stablehlo.transpose %504, dims = [0, 2, 1, 3] : (tensor<16x4x64x32xf32>) -> tensor<16x64x4x32xf32>
    %506 = stablehlo.reshape %486 : (tensor<16x64x4x32xf32>) -> tensor<16x64x128xf32>
    %507 = stablehlo.reshape %503 : (tensor<16x64x4x32xf32>) -> tensor<16x64x128xf32>
    %508 = stablehlo.reshape %505 : (tensor<16x64x4x32xf32>) -> tensor<16x64x128xf32>
    %509 = stablehlo.concatenate %508, %507, %506, dim = 2 : (tensor<16x64x128xf32>, tensor<16x64x128xf32>, tensor<16x64x128xf32>) -> tensor<16x64x384xf32>
    %510 = stablehlo.dot_general %509, %34, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<16x64x384xf32>, tensor<16x64x128xf32>) -> tensor<384x128xf32>
    %511 = stablehlo.transpose %510, dims = [1, 0] : (tensor<384x128xf32>) -> tensor<128x384xf32>
    %512 = stablehlo.dot_general %509, %arg4, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x64x384xf32>, tensor<128x384xf32>) -> tensor<16x64x128xf32>
    %cst_118 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %513 = stablehlo.reduce(%512 init: %cst_118) applies stablehlo.add across dimensions = [0, 1] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<128xf32>
    %514 = stablehlo.reshape %513 : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %cst_119 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %515 = stablehlo.reduce(%514 init: %cst_119) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x128xf32>, tensor<f32>) -> tensor<128xf32>
    %516 = stablehlo.multiply %28, %512 : tensor<16x64x128xf32>
    %cst_120 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %517 = stablehlo.reduce(%516 init: %cst_120) applies stablehlo.add across dimensions = [0, 1] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<128xf32>
    %518 = stablehlo.reshape %517 : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %519 = stablehlo.broadcast_in_dim %29, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<16x64x128xf32>
    %520 = stablehlo.multiply %512, %519 : tensor<16x64x128xf32>
    %cst_121 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %521 = stablehlo.reduce(%518 init: %cst_121) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x128xf32>, tensor<f32>) -> tensor<128xf32>
    %522 = stablehlo.multiply %20, %520 : tensor<16x64x128xf32>
    %cst_122 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %523 = stablehlo.reduce(%522 init: %cst_122) applies stablehlo.add across dimensions = [2] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<16x64xf32>
    %524 = stablehlo.reshape %523 : (tensor<16x64xf32>) -> tensor<16x64x1xf32>
    %525 = stablehlo.broadcast_in_dim %23, dims = [0, 1, 2] : (tensor<16x64x1xf32>) -> tensor<16x64x128xf32>
    %526 = stablehlo.multiply %520, %525 : tensor<16x64x128xf32>
    %527 = stablehlo.multiply %524, %26 : tensor<16x64x1xf32>
    %528 = stablehlo.negate %526 : tensor<16x64x128xf32>
    %cst_123 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %529 = stablehlo.reduce(%528 init: %cst_123) applies stablehlo.add across dimensions = [2] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<16x64xf32>
    %530 = stablehlo.reshape %529 : (tensor<16x64xf32>) -> tensor<16x64x1xf32>
    %531 = stablehlo.add %478, %526 : tensor<16x64x128xf32>
    %cst_124 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
    %532 = stablehlo.broadcast_in_dim %cst_124, dims = [] : (tensor<f32>) -> tensor<16x64x1xf32>
    %533 = stablehlo.divide %527, %532 : tensor<16x64x1xf32>
    %cst_125 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %534 = stablehlo.reduce(%533 init: %cst_125) applies stablehlo.add across dimensions = [2] : (tensor<16x64x1xf32>, tensor<f32>) -> tensor<16x64xf32>
    %535 = stablehlo.broadcast_in_dim %534, dims = [0, 1] : (tensor<16x64xf32>) -> tensor<16x64x128xf32>
    %536 = stablehlo.multiply %535, %14 : tensor<16x64x128xf32>
    %537 = stablehlo.negate %536 : tensor<16x64x128xf32>
    %cst_126 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %538 = stablehlo.reduce(%537 init: %cst_126) applies stablehlo.add across dimensions = [2] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<16x64xf32>
    %539 = stablehlo.reshape %538 : (tensor<16x64xf32>) -> tensor<16x64x1xf32>
    %540 = stablehlo.add %531, %536 : tensor<16x64x128xf32>
    %541 = stablehlo.add %530, %539 : tensor<16x64x1xf32>
    %cst_127 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
    %542 = stablehlo.broadcast_in_dim %cst_127, dims = [] : (tensor<f32>) -> tensor<16x64x1xf32>
    %543 = stablehlo.divide %541, %542 : tensor<16x64x1xf32>
    %cst_128 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %544 = stablehlo.reduce(%543 init: %cst_128) applies stablehlo.add across dimensions = [2] : (tensor<16x64x1xf32>, tensor<f32>) -> tensor<16x64xf32>
    %545 = stablehlo.broadcast_in_dim %544, dims = [0, 1] : (tensor<16x64xf32>) -> tensor<16x64x128xf32>
    %546 = stablehlo.add %540, %545 : tensor<16x64x128xf32>
    %cst_129 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %547 = stablehlo.reduce(%546 init: %cst_129) applies stablehlo.add across dimensions = [0] : (tensor<16x64x128xf32>, tensor<f32>) -> tensor<64x128xf32>
    %548 = stablehlo.reshape %547 : (tensor<64x128xf32>) -> tensor<1x64x128xf32>
    %cst_130 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %549 = stablehlo.reduce(%548 init: %cst_130) applies stablehlo.add across dimensions = [0] : (tensor<1x64x128xf32>, tensor<f32>) -> tensor<64x128xf32>
    %550 = call @_take_4(%0#1, %546) : (tensor<16x64x1xi32>, tensor<16x64x128xf32>) -> tensor<2048x128xf32>
    %551 = stablehlo.add %269, %550 : tensor<2048x128xf32>
    %cst_131 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %552 = stablehlo.broadcast_in_dim %cst_131, dims = [] : (tensor<f32>) -> tensor<2048x128xf32>
    %553 = stablehlo.multiply %552, %551 : tensor<2048x128xf32>
    %554 = stablehlo.subtract %arg0, %553 : tensor<2048x128xf32>
    %cst_132 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %555 = stablehlo.broadcast_in_dim %cst_132, dims = [] : (tensor<f32>) -> tensor<64x128xf32>
    %556 = stablehlo.multiply %555, %549 : tensor<64x128xf32>
    %557 = stablehlo.subtract %arg1, %556 : tensor<64x128xf32>
    %cst_133 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %558 = stablehlo.broadcast_in_dim %cst_133, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %559 = stablehlo.multiply %558, %521 : tensor<128xf32>
    %560 = stablehlo.subtract %arg2, %559 : tensor<128xf32>
    %cst_134 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %561 = stablehlo.broadcast_in_dim %cst_134, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %562 = stablehlo.multiply %561, %515 : tensor<128xf32>
    %563 = stablehlo.subtract %arg3, %562 : tensor<128xf32>
    %cst_135 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %564 = stablehlo.broadcast_in_dim %cst_135, dims = [] : (tensor<f32>) -> tensor<128x384xf32>
    %565 = stablehlo.multiply %564, %511 : tensor<128x384xf32>
    %566 = stablehlo.subtract %arg4, %565 : tensor<128x384xf32>
    %cst_136 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %567 = stablehlo.broadcast_in_dim %cst_136, dims = [] : (tensor<f32>) -> tensor<128x128xf32>
    %568 = stablehlo.multiply %567, %480 : tensor<128x128xf32>
    %569 = stablehlo.subtract %arg5, %568 : tensor<128x128xf32>
    %cst_137 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %570 = stablehlo.broadcast_in_dim %cst_137, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %571 = stablehlo.multiply %570, %453 : tensor<128xf32>
    %572 = stablehlo.subtract %arg6, %571 : tensor<128xf32>
    %cst_138 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %573 = stablehlo.broadcast_in_dim %cst_138, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %574 = stablehlo.multiply %573, %447 : tensor<128xf32>
    %575 = stablehlo.subtract %arg7, %574 : tensor<128xf32>
    %cst_139 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %576 = stablehlo.broadcast_in_dim %cst_139, dims = [] : (tensor<f32>) -> tensor<128x512xf32>
    %577 = stablehlo.multiply %576, %443 : tensor<128x512xf32>
    %578 = stablehlo.subtract %arg8, %577 : tensor<128x512xf32>
    %cst_140 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %579 = stablehlo.broadcast_in_dim %cst_140, dims = [] : (tensor<f32>) -> tensor<512x128xf32>
    %580 = stablehlo.multiply %579, %426 : tensor<512x128xf32>
    %581 = stablehlo.subtract %arg9, %580 : tensor<512x128xf32>
    %cst_141 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %582 = stablehlo.broadcast_in_dim %cst_141, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %583 = stablehlo.multiply %582, %399 : tensor<128xf32>
    %584 = stablehlo.subtract %arg10, %583 : tensor<128xf32>
    %cst_142 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %585 = stablehlo.broadcast_in_dim %cst_142, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %586 = stablehlo.multiply %585, %393 : tensor<128xf32>
    %587 = stablehlo.subtract %arg11, %586 : tensor<128xf32>
    %cst_143 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %588 = stablehlo.broadcast_in_dim %cst_143, dims = [] : (tensor<f32>) -> tensor<128x384xf32>
    %589 = stablehlo.multiply %588, %389 : tensor<128x384xf32>
    %590 = stablehlo.subtract %arg12, %589 : tensor<128x384xf32>
    %cst_144 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %591 = stablehlo.broadcast_in_dim %cst_144, dims = [] : (tensor<f32>) -> tensor<128x128xf32>
    %592 = stablehlo.multiply %591, %358 : tensor<128x128xf32>
    %593 = stablehlo.subtract %arg13, %592 : tensor<128x128xf32>
    %cst_145 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %594 = stablehlo.broadcast_in_dim %cst_145, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %595 = stablehlo.multiply %594, %331 : tensor<128xf32>
    %596 = stablehlo.subtract %arg14, %595 : tensor<128xf32>
    %cst_146 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %597 = stablehlo.broadcast_in_dim %cst_146, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %598 = stablehlo.multiply %597, %325 : tensor<128xf32>
    %599 = stablehlo.subtract %arg15, %598 : tensor<128xf32>
    %cst_147 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %600 = stablehlo.broadcast_in_dim %cst_147, dims = [] : (tensor<f32>) -> tensor<128x512xf32>
    %601 = stablehlo.multiply %600, %321 : tensor<128x512xf32>
    %602 = stablehlo.subtract %arg16, %601 : tensor<128x512xf32>
    %cst_148 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %603 = stablehlo.broadcast_in_dim %cst_148, dims = [] : (tensor<f32>) -> tensor<512x128xf32>
    %604 = stablehlo.multiply %603, %304 : tensor<512x128xf32>
    %605 = stablehlo.subtract %arg17, %604 : tensor<512x128xf32>
    %cst_149 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %606 = stablehlo.broadcast_in_dim %cst_149, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %607 = stablehlo.multiply %606, %278 : tensor<128xf32>
    %608 = stablehlo.subtract %arg18, %607 : tensor<128xf32>
    %cst_150 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %609 = stablehlo.broadcast_in_dim %cst_150, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %610 = stablehlo.multiply %609, %272 : tensor<128xf32>
    %611 = stablehlo.subtract %arg19, %610 : tensor<128xf32>
    return %260, %554, %557, %560, %563, %566, %569, %572, %575, %578, %581, %584, %587, %590, %593, %596, %599, %602, %605, %608, %611 : tensor<f32>, tensor<2048x128xf32>, tensor<64x128xf32>, tensor<128xf32>, tensor<128xf32>, tensor<128x384xf32>, tensor<128x128xf32>, tensor<128xf32>, tensor<128xf32>, tensor<128x512xf32>, tensor<512x128xf32>, tensor<128xf32>, tensor<128xf32>, tensor<128x384xf32>, tensor<128x128xf32>, tensor<128xf32>, tensor<128xf32>, tensor<128x512xf32>, tensor<512x128xf32>, tensor<128xf32>, tensor<128xf32>
  }
  func.func private @_take(%arg0: tensor<2048x128xf32>, %arg1: tensor<16x64xi32>) -> (tensor<16x64x128xf32>, tensor<16x64x1xi32>) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<16x64xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<16x64xi32>, tensor<16x64xi32>) -> tensor<16x64xi1>
    %c_0 = stablehlo.constant dense<2048> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<16x64xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<16x64xi32>
    %4 = call @_where(%1, %3, %arg1) : (tensor<16x64xi1>, tensor<16x64xi32>, tensor<16x64xi32>) -> tensor<16x64xi32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1] : (tensor<16x64xi32>) -> tensor<16x64x1xi32>
    %c_1 = stablehlo.constant dense<2047> : tensor<1xi32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %6 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<16x64x1xi32>
    %7 = stablehlo.compare GE, %5, %6, SIGNED : (tensor<16x64x1xi32>, tensor<16x64x1xi32>) -> tensor<16x64x1xi1>
    %8 = stablehlo.broadcast_in_dim %c_1, dims = [2] : (tensor<1xi32>) -> tensor<1x1x1xi32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1, 2] : (tensor<1x1x1xi32>) -> tensor<16x64x1xi32>
    %10 = stablehlo.compare LE, %5, %9, SIGNED : (tensor<16x64x1xi32>, tensor<16x64x1xi32>) -> tensor<16x64x1xi1>
    %11 = stablehlo.and %7, %10 : tensor<16x64x1xi1>
    %c_3 = stablehlo.constant dense<true> : tensor<i1>
    %12 = stablehlo.reduce(%11 init: %c_3) applies stablehlo.and across dimensions = [2] : (tensor<16x64x1xi1>, tensor<i1>) -> tensor<16x64xi1>
    %13 = "stablehlo.gather"(%arg0, %5) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 128>}> : (tensor<2048x128xf32>, tensor<16x64x1xi32>) -> tensor<16x64x128xf32>
    %14 = stablehlo.broadcast_in_dim %12, dims = [0, 1] : (tensor<16x64xi1>) -> tensor<16x64x128xi1>
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<16x64x128xf32>
    %16 = stablehlo.select %14, %13, %15 : tensor<16x64x128xi1>, tensor<16x64x128xf32>
    return %16, %5 : tensor<16x64x128xf32>, tensor<16x64x1xi32>
  }
  func.func private @_where(%arg0: tensor<16x64xi1>, %arg1: tensor<16x64xi32>, %arg2: tensor<16x64xi32>) -> tensor<16x64xi32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<16x64xi1>, tensor<16x64xi32>
    return %0 : tensor<16x64xi32>
  }
  func.func private @tril(%arg0: tensor<64x64xi1>) -> tensor<64x64xi1> {
    %0 = stablehlo.iota dim = 0 : tensor<64x64xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<64x64xi32>
    %2 = stablehlo.add %0, %1 : tensor<64x64xi32>
    %3 = stablehlo.iota dim = 1 : tensor<64x64xi32>
    %4 = stablehlo.compare GE, %2, %3, SIGNED : (tensor<64x64xi32>, tensor<64x64xi32>) -> tensor<64x64xi1>
    %c_0 = stablehlo.constant dense<false> : tensor<i1>
    %5 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i1>) -> tensor<64x64xi1>
    %6 = stablehlo.select %4, %arg0, %5 : tensor<64x64xi1>, tensor<64x64xi1>
    return %6 : tensor<64x64xi1>
  }
  func.func private @_where_0(%arg0: tensor<64x64xi1>, %arg1: tensor<16x4x64x64xf32>, %arg2: tensor<f32>) -> (tensor<16x4x64x64xf32>, tensor<16x4x64x64xi1>) {
    %0 = stablehlo.convert %arg2 : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %arg0, dims = [2, 3] : (tensor<64x64xi1>) -> tensor<16x4x64x64xi1>
    %2 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<16x4x64x64xf32>
    %3 = stablehlo.select %1, %arg1, %2 : tensor<16x4x64x64xi1>, tensor<16x4x64x64xf32>
    return %3, %1 : tensor<16x4x64x64xf32>, tensor<16x4x64x64xi1>
  }
  func.func private @log_softmax(%arg0: tensor<16x64x2048xf32>) -> (tensor<16x64x2048xf32>, tensor<16x64x2048xf32>, tensor<16x64x1xf32>) {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [2] : (tensor<16x64x2048xf32>, tensor<f32>) -> tensor<16x64xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<16x64xf32>
    %2 = stablehlo.maximum %1, %0 : tensor<16x64xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0, 1] : (tensor<16x64xf32>) -> tensor<16x64x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2] : (tensor<16x64x1xf32>) -> tensor<16x64x2048xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<16x64x2048xf32>
    %6 = stablehlo.exponential %5 : tensor<16x64x2048xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst_1) applies stablehlo.add across dimensions = [2] : (tensor<16x64x2048xf32>, tensor<f32>) -> tensor<16x64xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<16x64xf32>) -> tensor<16x64x1xf32>
    %9 = stablehlo.log %8 : tensor<16x64x1xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0, 1, 2] : (tensor<16x64x1xf32>) -> tensor<16x64x2048xf32>
    %11 = stablehlo.subtract %5, %10 : tensor<16x64x2048xf32>
    return %11, %6, %8 : tensor<16x64x2048xf32>, tensor<16x64x2048xf32>, tensor<16x64x1xf32>
  }
  func.func private @take_along_axis(%arg0: tensor<16x64x2048xf32>, %arg1: tensor<16x64x1xi32>) -> (tensor<16x64x1xf32>, tensor<16x64x1x1xi32>) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<16x64x1xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<16x64x1xi32>, tensor<16x64x1xi32>) -> tensor<16x64x1xi1>
    %c_0 = stablehlo.constant dense<2048> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<16x64x1xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<16x64x1xi32>
    %4 = stablehlo.select %1, %3, %arg1 : tensor<16x64x1xi1>, tensor<16x64x1xi32>
    %5 = stablehlo.reshape %4 : (tensor<16x64x1xi32>) -> tensor<16x64x1x1xi32>
    %c_1 = stablehlo.constant dense<2047> : tensor<1xi32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %6 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<16x64x1x1xi32>
    %7 = stablehlo.compare GE, %5, %6, SIGNED : (tensor<16x64x1x1xi32>, tensor<16x64x1x1xi32>) -> tensor<16x64x1x1xi1>
    %8 = stablehlo.broadcast_in_dim %c_1, dims = [3] : (tensor<1xi32>) -> tensor<1x1x1x1xi32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1, 2, 3] : (tensor<1x1x1x1xi32>) -> tensor<16x64x1x1xi32>
    %10 = stablehlo.compare LE, %5, %9, SIGNED : (tensor<16x64x1x1xi32>, tensor<16x64x1x1xi32>) -> tensor<16x64x1x1xi1>
    %11 = stablehlo.and %7, %10 : tensor<16x64x1x1xi1>
    %c_3 = stablehlo.constant dense<true> : tensor<i1>
    %12 = stablehlo.reduce(%11 init: %c_3) applies stablehlo.and across dimensions = [3] : (tensor<16x64x1x1xi1>, tensor<i1>) -> tensor<16x64x1xi1>
    %13 = "stablehlo.gather"(%arg0, %5) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [2], operand_batching_dims = [0, 1], start_indices_batching_dims = [0, 1], start_index_map = [2], index_vector_dim = 3>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1, 1>}> : (tensor<16x64x2048xf32>, tensor<16x64x1x1xi32>) -> tensor<16x64x1xf32>
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<16x64x1xf32>
    %15 = stablehlo.select %12, %13, %14 : tensor<16x64x1xi1>, tensor<16x64x1xf32>
    return %15, %5 : tensor<16x64x1xf32>, tensor<16x64x1x1xi32>
  }
  func.func private @take_along_axis_1(%arg0: tensor<16x64x1x1xi32>, %arg1: tensor<16x64x1xf32>) -> tensor<16x64x2048xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<16x64x2048xf32>
    %1 = "stablehlo.scatter"(%0, %arg0, %arg1) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [2], input_batching_dims = [0, 1], scatter_indices_batching_dims = [0, 1], scatter_dims_to_operand_dims = [2], index_vector_dim = 3>, unique_indices = false}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %2 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }) : (tensor<16x64x2048xf32>, tensor<16x64x1x1xi32>, tensor<16x64x1xf32>) -> tensor<16x64x2048xf32>
    return %1 : tensor<16x64x2048xf32>
  }
  func.func private @log_softmax_2(%arg0: tensor<16x64x2048xf32>, %arg1: tensor<16x64x1xf32>, %arg2: tensor<16x64x2048xf32>) -> tensor<16x64x2048xf32> {
    %0 = stablehlo.negate %arg2 : tensor<16x64x2048xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [2] : (tensor<16x64x2048xf32>, tensor<f32>) -> tensor<16x64xf32>
    %2 = stablehlo.reshape %1 : (tensor<16x64xf32>) -> tensor<16x64x1xf32>
    %3 = stablehlo.divide %2, %arg1 : tensor<16x64x1xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.reduce(%3 init: %cst_0) applies stablehlo.add across dimensions = [2] : (tensor<16x64x1xf32>, tensor<f32>) -> tensor<16x64xf32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1] : (tensor<16x64xf32>) -> tensor<16x64x2048xf32>
    %6 = stablehlo.multiply %5, %arg0 : tensor<16x64x2048xf32>
    %7 = stablehlo.add %arg2, %6 : tensor<16x64x2048xf32>
    return %7 : tensor<16x64x2048xf32>
  }
  func.func private @_where_3(%arg0: tensor<16x4x64x64xi1>, %arg1: tensor<16x4x64x64xf32>) -> tensor<16x4x64x64xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<16x4x64x64xf32>
    %1 = stablehlo.select %arg0, %arg1, %0 : tensor<16x4x64x64xi1>, tensor<16x4x64x64xf32>
    return %1 : tensor<16x4x64x64xf32>
  }
  func.func private @_take_4(%arg0: tensor<16x64x1xi32>, %arg1: tensor<16x64x128xf32>) -> tensor<2048x128xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2048x128xf32>
    %1 = "stablehlo.scatter"(%0, %arg0, %arg1) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 2>, unique_indices = false}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %2 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }) : (tensor<2048x128xf32>, tensor<16x64x1xi32>, tensor<16x64x128xf32>) -> tensor<2048x128xf32>
    return %1 : tensor<2048x128xf32>
  }
}
