func.func @main(%a: !torch.vtensor<[4,4],bf16>) -> !torch.vtensor<[4,4],bf16> {
  %0 = torch.aten.atan %a : !torch.vtensor<[4,4],bf16> -> !torch.vtensor<[4,4],bf16>
  return %0 : !torch.vtensor<[4,4],bf16>
}
