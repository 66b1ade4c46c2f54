// Every op form meshrun reads, in the pretty syntax (checked with MLIR's own
// parser; all_ops.generic.mlir is MLIR's generic print of this module).
module @all_ops attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=2]>
  sdy.mesh @ordered = <["a"=2, "b"=4], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>
  sdy.mesh @single = <[], device_ids=[0]>
  func.func public @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y", ?}p1]>, jax.result_info = "x"},
                         %arg1: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}, {?}], replicated={"y"}>},
                         %arg2: tensor<2x8x16xbf16>, %arg3: tensor<8xi32>, %arg4: tensor<8x16xi1>)
      -> (tensor<8x8xf32> {jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}], unreduced={"y"}>}, tensor<8xf32>, tensor<8x16xf32>) {
    %0 = stablehlo.negate %arg0 : tensor<8x16xf32>
    %1 = stablehlo.exponential %0 : tensor<8x16xf32>
    %2 = stablehlo.add %0, %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=16}>} : tensor<8x16xf32>
    %3 = stablehlo.dot_general %2, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
    %4 = stablehlo.dot %2, %arg1 : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
    %5 = stablehlo.dot_general %arg2, %arg2, batching_dims = [0] x [0], contracting_dims = [2] x [2] : (tensor<2x8x16xbf16>, tensor<2x8x16xbf16>) -> tensor<2x8x8xbf16>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %6 = stablehlo.reduce(%2 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<8x16xf32>, tensor<f32>) -> tensor<8xf32>
    %7 = stablehlo.reduce(%2 init: %cst) across dimensions = [1] : (tensor<8x16xf32>, tensor<f32>) -> tensor<8xf32>
     reducer(%a: tensor<f32>, %b: tensor<f32>)  {
      %m = stablehlo.maximum %b, %a : tensor<f32>
      stablehlo.return %m : tensor<f32>
    }
    %8 = stablehlo.compare GT, %0, %1, FLOAT : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xi1>
    %9 = stablehlo.compare EQ, %arg3, %arg3 : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
    %10 = stablehlo.select %8, %0, %1 : tensor<8x16xi1>, tensor<8x16xf32>
    %c = stablehlo.constant dense<true> : tensor<i1>
    %11 = stablehlo.select %c, %0, %1 : (tensor<i1>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %12 = stablehlo.clamp %cst, %10, %cst_0 : (tensor<f32>, tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
    %13 = stablehlo.clamp %0, %11, %12 : tensor<8x16xf32>
    %14 = stablehlo.iota dim = 0 : tensor<8xi32>
    %15 = stablehlo.convert %14 : (tensor<8xi32>) -> tensor<8xf32>
    %16 = stablehlo.convert %15 : tensor<8xf32>
    %17 = stablehlo.broadcast_in_dim %16, dims = [0] : (tensor<8xf32>) -> tensor<8x16xf32>
    %18 = stablehlo.reshape %17 : (tensor<8x16xf32>) -> tensor<2x4x16xf32>
    %19 = stablehlo.transpose %18, dims = [2, 0, 1] : (tensor<2x4x16xf32>) -> tensor<16x2x4xf32>
    %20 = stablehlo.concatenate %13, %17, dim = 0 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
    %21 = stablehlo.slice %20 [0:8, 2:16:2] : (tensor<16x16xf32>) -> tensor<8x7xf32>
    %22 = stablehlo.pad %21, %cst, low = [0, 1], high = [0, 0], interior = [0, 1] : (tensor<8x7xf32>, tensor<f32>) -> tensor<8x14xf32>
    %23 = call @relu(%0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %24:2 = call @pair(%0) : (tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>)
    %25 = stablehlo.subtract %24#0, %24#1 : tensor<8x16xf32>
    %26 = sdy.sharding_constraint %25 <@mesh, [{"x", ?}, {?}]> : tensor<8x16xf32>
    %27 = sdy.reshard %26 <@mesh, [{}, {"x":(2)2, "y"}]> : tensor<8x16xf32>
    sdy.sharding_group %27 group_id=3 : tensor<8x16xf32>
    %28 = sdy.sharding_constraint %27 <mesh<["z"=8]>, [{"z"}, {}]> : tensor<8x16xf32>
    %cst_1 = stablehlo.constant {sdy.sharding = #sdy.sharding_per_value<[<@ordered, [{"b"}, {}]>]>} dense<[[1.000000e+00, -2.500000e-01], [0xFF800000, 0x7FC00000], [3.000000e+38, 1.401300e-45], [1.000000e-01, 2.82842708]]> : tensor<4x2xf32>
    %cst_2 = stablehlo.constant dense<"0x0000803F000000400000404000008040"> : tensor<4xf32>
    %c_3 = stablehlo.constant dense<[-1, 2, 2147483647, -2147483648]> : tensor<4xi32>
    %c_4 = stablehlo.constant dense<[[true, false]]> : tensor<1x2xi1>
    %cst_5 = stablehlo.constant dense<[1.000000e+00, 6.550400e+04]> : tensor<2xf16>
    %cst_6 = stablehlo.constant dense<[0x7FC0, 1.500000e+00]> : tensor<2xbf16>
    %c_7 = stablehlo.constant dense<[255, 0]> : tensor<2xui8>
    %cst_8 = stablehlo.constant dense<1.000000e-300> : tensor<3xf64>
    %29 = stablehlo.tanh %28 {mhlo.frontend_attributes = {_xla_op = "t"}} : tensor<8x16xf32>
    %30 = stablehlo.log_plus_one %29 : tensor<8x16xf32>
    %31 = stablehlo.and %arg4, %8 : tensor<8x16xi1>
    %32 = stablehlo.not %31 : tensor<8x16xi1>
    %33 = stablehlo.power %30, %13 : tensor<8x16xf32>
    return %3, %6, %33 : tensor<8x8xf32>, tensor<8xf32>, tensor<8x16xf32>
  }
  func.func private @relu(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
    %zero = stablehlo.constant dense<0.000000e+00> : tensor<8x16xf32>
    %r = stablehlo.maximum %x, %zero : tensor<8x16xf32>
    func.return %r : tensor<8x16xf32>
  }
  func.func private @pair(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
    return %x, %x : tensor<8x16xf32>, tensor<8x16xf32>
  }
  func.func @nothing() {
    return
  }
}
