// torch's _safe_softmax on a device value y = x + x (attention's, as decomposed by aot_autograd):
// where(all(y == -inf, -1), 0, softmax(y)). Run end to end by transforms/spyre-fold-infinity-tests.mlir
// (its EXEC and REFUSED lines; the pass itself is tested there on this function after
// convert-torch-to-spyre).
func.func @main(%x: !torch.vtensor<[4,64],f32>) -> !torch.vtensor<[4,64],f32> {
  %int1 = torch.constant.int 1
  %int-1 = torch.constant.int -1
  %int0 = torch.constant.int 0
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %none = torch.constant.none
  %ninf = torch.constant.float 0xFFF0000000000000
  %y = torch.aten.add.Tensor %x, %x, %int1 : !torch.vtensor<[4,64],f32>, !torch.vtensor<[4,64],f32>, !torch.int -> !torch.vtensor<[4,64],f32>
  %s = torch.aten._softmax %y, %int-1, %false : !torch.vtensor<[4,64],f32>, !torch.int, !torch.bool -> !torch.vtensor<[4,64],f32>
  %e = torch.aten.eq.Scalar %y, %ninf : !torch.vtensor<[4,64],f32>, !torch.float -> !torch.vtensor<[4,64],i1>
  %n = torch.aten.logical_not %e : !torch.vtensor<[4,64],i1> -> !torch.vtensor<[4,64],i1>
  %a = torch.aten.any.dim %n, %int-1, %true : !torch.vtensor<[4,64],i1>, !torch.int, !torch.bool -> !torch.vtensor<[4,1],i1>
  %m = torch.aten.logical_not %a : !torch.vtensor<[4,1],i1> -> !torch.vtensor<[4,1],i1>
  %z = torch.aten.full_like %s, %int0, %none, %none, %none, %false, %int1 : !torch.vtensor<[4,64],f32>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.int -> !torch.vtensor<[4,64],f32>
  %w = torch.aten.where.self %m, %z, %s : !torch.vtensor<[4,1],i1>, !torch.vtensor<[4,64],f32>, !torch.vtensor<[4,64],f32> -> !torch.vtensor<[4,64],f32>
  return %w : !torch.vtensor<[4,64],f32>
}
