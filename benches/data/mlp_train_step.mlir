module @jit_train_step attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<256x2048xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg1: tensor<256x2048xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg2: tensor<2048x2048xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg3: tensor<2048xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}]>}, %arg4: tensor<2048x2048xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg5: tensor<2048xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg6: tensor<2048x2048xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg7: tensor<2048xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}]>}, %arg8: tensor<2048x2048xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg9: tensor<2048xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) -> (tensor<f32> {jax.result_info = "result[0]"}, tensor<2048x2048xf32> {jax.result_info = "result[1]"}, tensor<2048xf32> {jax.result_info = "result[2]"}, tensor<2048x2048xf32> {jax.result_info = "result[3]"}, tensor<2048xf32> {jax.result_info = "result[4]"}, tensor<2048x2048xf32> {jax.result_info = "result[5]"}, tensor<2048xf32> {jax.result_info = "result[6]"}, tensor<2048x2048xf32> {jax.result_info = "result[7]"}, tensor<2048xf32> {jax.result_info = "result[8]"}) {
    %0 = stablehlo.dot_general %arg0, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<256x2048xf32>, tensor<2048x2048xf32>) -> tensor<256x2048xf32>
    %1 = stablehlo.broadcast_in_dim %arg3, dims = [1] : (tensor<2048xf32>) -> tensor<1x2048xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x2048xf32>) -> tensor<256x2048xf32>
    %3 = stablehlo.add %0, %2 : tensor<256x2048xf32>
    %4 = stablehlo.tanh %3 : tensor<256x2048xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<256x2048xf32>
    %6 = stablehlo.subtract %5, %4 : tensor<256x2048xf32>
    %7 = stablehlo.dot_general %4, %arg4, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<256x2048xf32>, tensor<2048x2048xf32>) -> tensor<256x2048xf32>
    %8 = stablehlo.broadcast_in_dim %arg5, dims = [1] : (tensor<2048xf32>) -> tensor<1x2048xf32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1] : (tensor<1x2048xf32>) -> tensor<256x2048xf32>
    %10 = stablehlo.add %7, %9 : tensor<256x2048xf32>
    %11 = stablehlo.tanh %10 : tensor<256x2048xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<256x2048xf32>
    %13 = stablehlo.subtract %12, %11 : tensor<256x2048xf32>
    %14 = stablehlo.dot_general %11, %arg6, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<256x2048xf32>, tensor<2048x2048xf32>) -> tensor<256x2048xf32>
    %15 = stablehlo.broadcast_in_dim %arg7, dims = [1] : (tensor<2048xf32>) -> tensor<1x2048xf32>
    %16 = stablehlo.broadcast_in_dim %15, dims = [0, 1] : (tensor<1x2048xf32>) -> tensor<256x2048xf32>
    %17 = stablehlo.add %14, %16 : tensor<256x2048xf32>
    %18 = stablehlo.tanh %17 : tensor<256x2048xf32>
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %19 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<256x2048xf32>
    %20 = stablehlo.subtract %19, %18 : tensor<256x2048xf32>
    %21 = stablehlo.dot_general %18, %arg8, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<256x2048xf32>, tensor<2048x2048xf32>) -> tensor<256x2048xf32>
    %22 = stablehlo.broadcast_in_dim %arg9, dims = [1] : (tensor<2048xf32>) -> tensor<1x2048xf32>
    %23 = stablehlo.broadcast_in_dim %22, dims = [0, 1] : (tensor<1x2048xf32>) -> tensor<256x2048xf32>
    %24 = stablehlo.add %21, %23 : tensor<256x2048xf32>
    %25 = stablehlo.tanh %24 : tensor<256x2048xf32>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %26 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<256x2048xf32>
    %27 = stablehlo.subtract %26, %25 : tensor<256x2048xf32>
    %28 = stablehlo.subtract %25, %arg1 : tensor<256x2048xf32>
    %29 = stablehlo.multiply %28, %28 : tensor<256x2048xf32>
    %cst_3 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %30 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<256x2048xf32>
    %31 = stablehlo.multiply %30, %28 : tensor<256x2048xf32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %32 = stablehlo.reduce(%29 init: %cst_4) applies stablehlo.add across dimensions = [0, 1] : (tensor<256x2048xf32>, tensor<f32>) -> tensor<f32>
    %cst_5 = stablehlo.constant dense<5.242880e+05> : tensor<f32>
    %33 = stablehlo.divide %32, %cst_5 : tensor<f32>
    %cst_6 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %cst_7 = stablehlo.constant dense<5.242880e+05> : tensor<f32>
    %34 = stablehlo.divide %cst_6, %cst_7 : tensor<f32>
    %35 = stablehlo.broadcast_in_dim %34, dims = [] : (tensor<f32>) -> tensor<256x2048xf32>
    %36 = stablehlo.multiply %35, %31 : tensor<256x2048xf32>
    %37 = stablehlo.multiply %36, %27 : tensor<256x2048xf32>
    %38 = stablehlo.multiply %37, %25 : tensor<256x2048xf32>
    %39 = stablehlo.add %37, %38 : tensor<256x2048xf32>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %40 = stablehlo.reduce(%39 init: %cst_8) applies stablehlo.add across dimensions = [0] : (tensor<256x2048xf32>, tensor<f32>) -> tensor<2048xf32>
    %41 = stablehlo.reshape %40 : (tensor<2048xf32>) -> tensor<1x2048xf32>
    %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %42 = stablehlo.reduce(%41 init: %cst_9) applies stablehlo.add across dimensions = [0] : (tensor<1x2048xf32>, tensor<f32>) -> tensor<2048xf32>
    %43 = stablehlo.dot_general %39, %18, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<256x2048xf32>, tensor<256x2048xf32>) -> tensor<2048x2048xf32>
    %44 = stablehlo.transpose %43, dims = [1, 0] : (tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
    %45 = stablehlo.dot_general %39, %arg8, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<256x2048xf32>, tensor<2048x2048xf32>) -> tensor<256x2048xf32>
    %46 = stablehlo.multiply %45, %20 : tensor<256x2048xf32>
    %47 = stablehlo.multiply %46, %18 : tensor<256x2048xf32>
    %48 = stablehlo.add %46, %47 : tensor<256x2048xf32>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %49 = stablehlo.reduce(%48 init: %cst_10) applies stablehlo.add across dimensions = [0] : (tensor<256x2048xf32>, tensor<f32>) -> tensor<2048xf32>
    %50 = stablehlo.reshape %49 : (tensor<2048xf32>) -> tensor<1x2048xf32>
    %cst_11 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %51 = stablehlo.reduce(%50 init: %cst_11) applies stablehlo.add across dimensions = [0] : (tensor<1x2048xf32>, tensor<f32>) -> tensor<2048xf32>
    %52 = stablehlo.dot_general %48, %11, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<256x2048xf32>, tensor<256x2048xf32>) -> tensor<2048x2048xf32>
    %53 = stablehlo.transpose %52, dims = [1, 0] : (tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
    %54 = stablehlo.dot_general %48, %arg6, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<256x2048xf32>, tensor<2048x2048xf32>) -> tensor<256x2048xf32>
    %55 = stablehlo.multiply %54, %13 : tensor<256x2048xf32>
    %56 = stablehlo.multiply %55, %11 : tensor<256x2048xf32>
    %57 = stablehlo.add %55, %56 : tensor<256x2048xf32>
    %cst_12 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %58 = stablehlo.reduce(%57 init: %cst_12) applies stablehlo.add across dimensions = [0] : (tensor<256x2048xf32>, tensor<f32>) -> tensor<2048xf32>
    %59 = stablehlo.reshape %58 : (tensor<2048xf32>) -> tensor<1x2048xf32>
    %cst_13 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %60 = stablehlo.reduce(%59 init: %cst_13) applies stablehlo.add across dimensions = [0] : (tensor<1x2048xf32>, tensor<f32>) -> tensor<2048xf32>
    %61 = stablehlo.dot_general %57, %4, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<256x2048xf32>, tensor<256x2048xf32>) -> tensor<2048x2048xf32>
    %62 = stablehlo.transpose %61, dims = [1, 0] : (tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
    %63 = stablehlo.dot_general %57, %arg4, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<256x2048xf32>, tensor<2048x2048xf32>) -> tensor<256x2048xf32>
    %64 = stablehlo.multiply %63, %6 : tensor<256x2048xf32>
    %65 = stablehlo.multiply %64, %4 : tensor<256x2048xf32>
    %66 = stablehlo.add %64, %65 : tensor<256x2048xf32>
    %cst_14 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %67 = stablehlo.reduce(%66 init: %cst_14) applies stablehlo.add across dimensions = [0] : (tensor<256x2048xf32>, tensor<f32>) -> tensor<2048xf32>
    %68 = stablehlo.reshape %67 : (tensor<2048xf32>) -> tensor<1x2048xf32>
    %cst_15 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %69 = stablehlo.reduce(%68 init: %cst_15) applies stablehlo.add across dimensions = [0] : (tensor<1x2048xf32>, tensor<f32>) -> tensor<2048xf32>
    %70 = stablehlo.dot_general %66, %arg0, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<256x2048xf32>, tensor<256x2048xf32>) -> tensor<2048x2048xf32>
    %71 = stablehlo.transpose %70, dims = [1, 0] : (tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
    %cst_16 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %72 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<f32>) -> tensor<2048x2048xf32>
    %73 = stablehlo.multiply %72, %71 : tensor<2048x2048xf32>
    %74 = stablehlo.subtract %arg2, %73 : tensor<2048x2048xf32>
    %cst_17 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %75 = stablehlo.broadcast_in_dim %cst_17, dims = [] : (tensor<f32>) -> tensor<2048xf32>
    %76 = stablehlo.multiply %75, %69 : tensor<2048xf32>
    %77 = stablehlo.subtract %arg3, %76 : tensor<2048xf32>
    %cst_18 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %78 = stablehlo.broadcast_in_dim %cst_18, dims = [] : (tensor<f32>) -> tensor<2048x2048xf32>
    %79 = stablehlo.multiply %78, %62 : tensor<2048x2048xf32>
    %80 = stablehlo.subtract %arg4, %79 : tensor<2048x2048xf32>
    %cst_19 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %81 = stablehlo.broadcast_in_dim %cst_19, dims = [] : (tensor<f32>) -> tensor<2048xf32>
    %82 = stablehlo.multiply %81, %60 : tensor<2048xf32>
    %83 = stablehlo.subtract %arg5, %82 : tensor<2048xf32>
    %cst_20 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %84 = stablehlo.broadcast_in_dim %cst_20, dims = [] : (tensor<f32>) -> tensor<2048x2048xf32>
    %85 = stablehlo.multiply %84, %53 : tensor<2048x2048xf32>
    %86 = stablehlo.subtract %arg6, %85 : tensor<2048x2048xf32>
    %cst_21 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %87 = stablehlo.broadcast_in_dim %cst_21, dims = [] : (tensor<f32>) -> tensor<2048xf32>
    %88 = stablehlo.multiply %87, %51 : tensor<2048xf32>
    %89 = stablehlo.subtract %arg7, %88 : tensor<2048xf32>
    %cst_22 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %90 = stablehlo.broadcast_in_dim %cst_22, dims = [] : (tensor<f32>) -> tensor<2048x2048xf32>
    %91 = stablehlo.multiply %90, %44 : tensor<2048x2048xf32>
    %92 = stablehlo.subtract %arg8, %91 : tensor<2048x2048xf32>
    %cst_23 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %93 = stablehlo.broadcast_in_dim %cst_23, dims = [] : (tensor<f32>) -> tensor<2048xf32>
    %94 = stablehlo.multiply %93, %42 : tensor<2048xf32>
    %95 = stablehlo.subtract %arg9, %94 : tensor<2048xf32>
    return %33, %74, %77, %80, %83, %86, %89, %92, %95 : tensor<f32>, tensor<2048x2048xf32>, tensor<2048xf32>, tensor<2048x2048xf32>, tensor<2048xf32>, tensor<2048x2048xf32>, tensor<2048xf32>, tensor<2048x2048xf32>, tensor<2048xf32>
  }
}
