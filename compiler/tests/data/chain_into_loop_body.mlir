module @chain_into_loop {
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  func.func public @main(%arg0: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
    %0 = sdy.sharding_constraint %arg0 <@mesh, [{"a", ?}]> : tensor<8xf32>
    %c0 = stablehlo.constant dense<0> : tensor<i32>
    %1:2 = stablehlo.while(%i = %c0, %h = %arg0) : tensor<i32>, tensor<8xf32>
     cond {
      %c2 = stablehlo.constant dense<2> : tensor<i32>
      %p = stablehlo.compare LT, %i, %c2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %2 = sdy.sharding_constraint %0 <@mesh, [{"b"}]> : tensor<8xf32>
      %3 = stablehlo.tanh %2 : tensor<8xf32>
      %4 = stablehlo.add %3, %arg0 : tensor<8xf32>
      %c1 = stablehlo.constant dense<1> : tensor<i32>
      %5 = stablehlo.add %i, %c1 : tensor<i32>
      stablehlo.return %5, %4 : tensor<i32>, tensor<8xf32>
    }
    %6 = stablehlo.negate %arg0 : tensor<8xf32>
    return %1#1, %6 : tensor<8xf32>, tensor<8xf32>
  }
}
