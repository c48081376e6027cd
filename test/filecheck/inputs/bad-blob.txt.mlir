func.func @main(%x: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
  %w = torch.vtensor.literal(dense_resource<w> : tensor<4xf32>) : !torch.vtensor<[4],f32>
  %int1 = torch.constant.int 1
  %0 = torch.aten.add.Tensor %x, %w, %int1 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[4],f32>
  return %0 : !torch.vtensor<[4],f32>
}
{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803F0000004000004040"
    }
  }
#-}
