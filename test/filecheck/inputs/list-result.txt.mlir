func.func @main(%a: !torch.vtensor<[2],f32>) -> !torch.list<vtensor> {
  %0 = torch.prim.ListConstruct %a : (!torch.vtensor<[2],f32>) -> !torch.list<vtensor>
  return %0 : !torch.list<vtensor>
}
