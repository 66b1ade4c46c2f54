module @jit_two_meshes attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg1: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data":(1)2}, {}]>}) -> tensor<16x8xf32> {
    %0 = stablehlo.sine %arg0 : tensor<16x8xf32>
    %1 = stablehlo.add %0, %arg1 : tensor<16x8xf32>
    %2 = sdy.sharding_constraint %1 <@mesh, [{"data":(2)2, "model"}, {"data":(1)2}]> : tensor<16x8xf32>
    %3 = sdy.constant dense<2.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<f32>) -> tensor<16x8xf32>
    %5 = stablehlo.multiply %2, %4 : tensor<16x8xf32>
    return %5 : tensor<16x8xf32>
  }
}
