// MLIR's generic print (get_asm(print_generic_op_form=True)) of all_ops.mlir.
"builtin.module"() <{sym_name = "all_ops"}> ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=4, "y"=2]>, sym_name = "mesh"}> : () -> ()
  "sdy.mesh"() <{mesh = #sdy.mesh<["a"=2, "b"=4], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>, sym_name = "ordered"}> : () -> ()
  "sdy.mesh"() <{mesh = #sdy.mesh<[], device_ids=[0]>, sym_name = "single"}> : () -> ()
  "func.func"() <{arg_attrs = [{jax.result_info = "x", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y", ?}p1]>}, {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}, {?}], replicated={"y"}>}, {}, {}, {}], function_type = (tensor<8x16xf32>, tensor<16x8xf32>, tensor<2x8x16xbf16>, tensor<8xi32>, tensor<8x16xi1>) -> (tensor<8x8xf32>, tensor<8xf32>, tensor<8x16xf32>), res_attrs = [{jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}], unreduced={"y"}>}, {}, {}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg2: tensor<8x16xf32>, %arg3: tensor<16x8xf32>, %arg4: tensor<2x8x16xbf16>, %arg5: tensor<8xi32>, %arg6: tensor<8x16xi1>):
    %2 = "stablehlo.negate"(%arg2) : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %3 = "stablehlo.exponential"(%2) : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %4 = "stablehlo.add"(%2, %3) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=16}>} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    %5 = "stablehlo.dot_general"(%4, %arg3) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
    %6 = "stablehlo.dot"(%4, %arg3) : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
    %7 = "stablehlo.dot_general"(%arg4, %arg4) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [2]>}> : (tensor<2x8x16xbf16>, tensor<2x8x16xbf16>) -> tensor<2x8x8xbf16>
    %8 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %9 = "stablehlo.reduce"(%4, %8) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg9: tensor<f32>, %arg10: tensor<f32>):
      %48 = "stablehlo.add"(%arg9, %arg10) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%48) : (tensor<f32>) -> ()
    }) : (tensor<8x16xf32>, tensor<f32>) -> tensor<8xf32>
    %10 = "stablehlo.reduce"(%4, %8) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg7: tensor<f32>, %arg8: tensor<f32>):
      %47 = "stablehlo.maximum"(%arg8, %arg7) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%47) : (tensor<f32>) -> ()
    }) : (tensor<8x16xf32>, tensor<f32>) -> tensor<8xf32>
    %11 = "stablehlo.compare"(%2, %3) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xi1>
    %12 = "stablehlo.compare"(%arg5, %arg5) <{comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
    %13 = "stablehlo.select"(%11, %2, %3) : (tensor<8x16xi1>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    %14 = "stablehlo.constant"() <{value = dense<true> : tensor<i1>}> : () -> tensor<i1>
    %15 = "stablehlo.select"(%14, %2, %3) : (tensor<i1>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    %16 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %17 = "stablehlo.clamp"(%8, %13, %16) : (tensor<f32>, tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
    %18 = "stablehlo.clamp"(%2, %15, %17) : (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    %19 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<8xi32>
    %20 = "stablehlo.convert"(%19) : (tensor<8xi32>) -> tensor<8xf32>
    %21 = "stablehlo.convert"(%20) : (tensor<8xf32>) -> tensor<8xf32>
    %22 = "stablehlo.broadcast_in_dim"(%21) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8xf32>) -> tensor<8x16xf32>
    %23 = "stablehlo.reshape"(%22) : (tensor<8x16xf32>) -> tensor<2x4x16xf32>
    %24 = "stablehlo.transpose"(%23) <{permutation = array<i64: 2, 0, 1>}> : (tensor<2x4x16xf32>) -> tensor<16x2x4xf32>
    %25 = "stablehlo.concatenate"(%18, %22) <{dimension = 0 : i64}> : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
    %26 = "stablehlo.slice"(%25) <{limit_indices = array<i64: 8, 16>, start_indices = array<i64: 0, 2>, strides = array<i64: 1, 2>}> : (tensor<16x16xf32>) -> tensor<8x7xf32>
    %27 = "stablehlo.pad"(%26, %8) <{edge_padding_high = array<i64: 0, 0>, edge_padding_low = array<i64: 0, 1>, interior_padding = array<i64: 0, 1>}> : (tensor<8x7xf32>, tensor<f32>) -> tensor<8x14xf32>
    %28 = "func.call"(%2) <{callee = @relu}> : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %29:2 = "func.call"(%2) <{callee = @pair}> : (tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>)
    %30 = "stablehlo.subtract"(%29#0, %29#1) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    %31 = "sdy.sharding_constraint"(%30) <{sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}]>}> : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %32 = "sdy.reshard"(%31) <{sharding = #sdy.sharding<@mesh, [{}, {"x":(2)2, "y"}]>}> : (tensor<8x16xf32>) -> tensor<8x16xf32>
    "sdy.sharding_group"(%32) <{group_id = 3 : i64}> : (tensor<8x16xf32>) -> ()
    %33 = "sdy.sharding_constraint"(%32) <{sharding = #sdy.sharding<mesh<["z"=8]>, [{"z"}, {}]>}> : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %34 = "stablehlo.constant"() <{value = dense<[[1.000000e+00, -2.500000e-01], [0xFF800000, 0x7FC00000], [3.000000e+38, 1.401300e-45], [1.000000e-01, 2.82842708]]> : tensor<4x2xf32>}> {sdy.sharding = #sdy.sharding_per_value<[<@ordered, [{"b"}, {}]>]>} : () -> tensor<4x2xf32>
    %35 = "stablehlo.constant"() <{value = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>}> : () -> tensor<4xf32>
    %36 = "stablehlo.constant"() <{value = dense<[-1, 2, 2147483647, -2147483648]> : tensor<4xi32>}> : () -> tensor<4xi32>
    %37 = "stablehlo.constant"() <{value = dense<[[true, false]]> : tensor<1x2xi1>}> : () -> tensor<1x2xi1>
    %38 = "stablehlo.constant"() <{value = dense<[1.000000e+00, 6.550400e+04]> : tensor<2xf16>}> : () -> tensor<2xf16>
    %39 = "stablehlo.constant"() <{value = dense<[0x7FC0, 1.500000e+00]> : tensor<2xbf16>}> : () -> tensor<2xbf16>
    %40 = "stablehlo.constant"() <{value = dense<[255, 0]> : tensor<2xui8>}> : () -> tensor<2xui8>
    %41 = "stablehlo.constant"() <{value = dense<1.000000e-300> : tensor<3xf64>}> : () -> tensor<3xf64>
    %42 = "stablehlo.tanh"(%33) {mhlo.frontend_attributes = {_xla_op = "t"}} : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %43 = "stablehlo.log_plus_one"(%42) : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %44 = "stablehlo.and"(%arg6, %11) : (tensor<8x16xi1>, tensor<8x16xi1>) -> tensor<8x16xi1>
    %45 = "stablehlo.not"(%44) : (tensor<8x16xi1>) -> tensor<8x16xi1>
    %46 = "stablehlo.power"(%43, %18) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    "func.return"(%5, %9, %46) : (tensor<8x8xf32>, tensor<8xf32>, tensor<8x16xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<8x16xf32>) -> tensor<8x16xf32>, sym_name = "relu", sym_visibility = "private"}> ({
  ^bb0(%arg1: tensor<8x16xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<8x16xf32>}> : () -> tensor<8x16xf32>
    %1 = "stablehlo.maximum"(%arg1, %0) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    "func.return"(%1) : (tensor<8x16xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>), sym_name = "pair", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<8x16xf32>):
    "func.return"(%arg0, %arg0) : (tensor<8x16xf32>, tensor<8x16xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = () -> (), sym_name = "nothing"}> ({
    "func.return"() : () -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 8 : i32} : () -> ()

