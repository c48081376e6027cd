func.func @scaled(%x: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32> {
  %c = torch.vtensor.literal(dense<2.000000e+127> : tensor<f32>) : !torch.vtensor<[],f32>
  %0 = torch.aten.mul.Tensor %x, %c : !torch.vtensor<[4,8],f32>, !torch.vtensor<[],f32> -> !torch.vtensor<[4,8],f32>
  return %0 : !torch.vtensor<[4,8],f32>
}
