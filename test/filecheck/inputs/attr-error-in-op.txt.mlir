func.func @f(%x: tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  %0 = spyre.pointwise %x : (tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  ^bb0(%a: f32):
    %r = math.exp %a : i64
    spyre.yield %r : f32
  }
  func.return %0 : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
}
