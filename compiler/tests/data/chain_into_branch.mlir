module @chain_into_branch {
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  func.func public @main(%arg0: tensor<8xf32>, %arg1: tensor<i32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
    %0 = sdy.sharding_constraint %arg0 <@mesh, [{"a"}]> : tensor<8xf32>
    %1:2 = "stablehlo.case"(%arg1) ({
      %2 = sdy.sharding_constraint %0 <@mesh, [{"b"}]> : tensor<8xf32>
      %3 = stablehlo.multiply %arg0, %2 : tensor<8xf32>
      stablehlo.return %3, %arg0 : tensor<8xf32>, tensor<8xf32>
    }, {
      %4 = stablehlo.abs %arg0 : tensor<8xf32>
      stablehlo.return %arg0, %4 : tensor<8xf32>, tensor<8xf32>
    }) : (tensor<i32>) -> (tensor<8xf32>, tensor<8xf32>)
    %5 = stablehlo.negate %arg0 : tensor<8xf32>
    return %1#0, %1#1, %5 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  }
}
