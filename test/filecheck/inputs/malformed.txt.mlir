func.func @f(%a: tensor<4xf32>) {
  %0 = spyre.matmul %a, %a : (tensor<4xf32>
}
