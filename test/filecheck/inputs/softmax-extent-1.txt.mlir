func.func @main(%x: !torch.vtensor<[3,1],f32>, %i: !torch.vtensor<[2,5],si64>, %t: !torch.vtensor<[50,64],f32>) -> (!torch.vtensor<[3,1],f32>, !torch.vtensor<[2,5,64],f32>) {
  %int-1 = torch.constant.int -1
  %false = torch.constant.bool false
  %0 = torch.aten._softmax %x, %int-1, %false : !torch.vtensor<[3,1],f32>, !torch.int, !torch.bool -> !torch.vtensor<[3,1],f32>
  %1 = torch.aten.embedding %t, %i, %int-1, %false, %false : !torch.vtensor<[50,64],f32>, !torch.vtensor<[2,5],si64>, !torch.int, !torch.bool, !torch.bool -> !torch.vtensor<[2,5,64],f32>
  return %0, %1 : !torch.vtensor<[3,1],f32>, !torch.vtensor<[2,5,64],f32>
}
