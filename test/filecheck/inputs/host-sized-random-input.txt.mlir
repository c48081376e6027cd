func.func @main(%x: !torch.vtensor<[131072,131072],f32>) -> !torch.vtensor<[131072,131072],f32> {
  %0 = torch.aten.relu %x : !torch.vtensor<[131072,131072],f32> -> !torch.vtensor<[131072,131072],f32>
  return %0 : !torch.vtensor<[131072,131072],f32>
}
