func.func @operand_count(%a: !torch.vtensor<[2],f32>) {
  %0 = torch.aten.relu %a, %a : !torch.vtensor<[2],f32>, !torch.vtensor<[2],f32> -> !torch.vtensor<[2],f32>
  func.return
}
