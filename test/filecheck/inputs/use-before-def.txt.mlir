func.func @main(%x: !torch.vtensor<[4,64],f32>) -> !torch.vtensor<[4,64],f32> {
  %0 = torch.aten.relu %1 : !torch.vtensor<[4,64],f32> -> !torch.vtensor<[4,64],f32>
  %1 = torch.aten.relu %x : !torch.vtensor<[4,64],f32> -> !torch.vtensor<[4,64],f32>
  return %0 : !torch.vtensor<[4,64],f32>
}
