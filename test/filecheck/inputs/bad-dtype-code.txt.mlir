func.func @main(%x: !torch.vtensor<[4,64],si64>) -> !torch.vtensor<[4,64],f32> {
  %int-1 = torch.constant.int -1
  %none = torch.constant.none
  %false = torch.constant.bool false
  %0 = torch.aten._to_copy %x, %int-1, %none, %none, %none, %false, %none : !torch.vtensor<[4,64],si64>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[4,64],f32>
  return %0 : !torch.vtensor<[4,64],f32>
}
