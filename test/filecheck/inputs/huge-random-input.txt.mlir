func.func @main(%x: !torch.vtensor<[262144,262144],i1>) -> !torch.vtensor<[262144,262144],i1> {
  return %x : !torch.vtensor<[262144,262144],i1>
}
