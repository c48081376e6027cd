func.func @main(%x: !torch.vtensor<[4,64],f32>) -> !torch.vtensor<[4,64],f32> {
  %c = torch.constant.float 1.500000e+00
  %0 = torch.aten.pow.Tensor_Scalar %x, %c : !torch.vtensor<[4,64],f32>, !torch.float -> !torch.vtensor<[4,64],f32>
  return %0 : !torch.vtensor<[4,64],f32>
}
