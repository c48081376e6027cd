// Input of transforms/spyre-fuse.mlir's NORMS run: two layer norms joined by a residual add,
// the first norm's result also returned (as a transformer layer's norms are joined, the first
// one's result also read by the next sublayer).
func.func @chained_norms(%x: !torch.vtensor<[4,64],f32>, %w: !torch.vtensor<[64],f32>, %b: !torch.vtensor<[64],f32>) -> (!torch.vtensor<[4,64],f32>, !torch.vtensor<[4,64],f32>) {
  %int1 = torch.constant.int 1
  %int64 = torch.constant.int 64
  %eps = torch.constant.float 1.000000e-05
  %ns = torch.prim.ListConstruct %int64 : (!torch.int) -> !torch.list<int>
  %0:3 = torch.aten.native_layer_norm %x, %ns, %w, %b, %eps : !torch.vtensor<[4,64],f32>, !torch.list<int>, !torch.vtensor<[64],f32>, !torch.vtensor<[64],f32>, !torch.float -> !torch.vtensor<[4,64],f32>, !torch.vtensor<[4,1],f32>, !torch.vtensor<[4,1],f32>
  %1 = torch.aten.add.Tensor %0#0, %x, %int1 : !torch.vtensor<[4,64],f32>, !torch.vtensor<[4,64],f32>, !torch.int -> !torch.vtensor<[4,64],f32>
  %2:3 = torch.aten.native_layer_norm %1, %ns, %w, %b, %eps : !torch.vtensor<[4,64],f32>, !torch.list<int>, !torch.vtensor<[64],f32>, !torch.vtensor<[64],f32>, !torch.float -> !torch.vtensor<[4,64],f32>, !torch.vtensor<[4,1],f32>, !torch.vtensor<[4,1],f32>
  return %0#0, %2#0 : !torch.vtensor<[4,64],f32>, !torch.vtensor<[4,64],f32>
}
