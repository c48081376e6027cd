func.func @main(%x: !torch.vtensor<[2,5,64],f32>) -> !torch.vtensor<[2,4,64],f32> {
  %int1 = torch.constant.int 1
  %int4 = torch.constant.int 4
  %0 = torch.aten.slice.Tensor %x, %int1, %int1, %int4, %int1 : !torch.vtensor<[2,5,64],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,4,64],f32>
  return %0 : !torch.vtensor<[2,4,64],f32>
}
