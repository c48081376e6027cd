%a = "test.op"() : () -> tensor<4x64xf32>
%0 = spyre.matmul %a, %a : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x4xf32>
