// Input of dialects/spyre/invalid-kernel-reduce.mlir: a spyre-level reduction along a dim
// that is not the stick dim.
func.func @f(%x: tensor<4x64xf32>) -> tensor<1x64xf32> {
  %0 = spyre.to_device %x : tensor<4x64xf32> -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
  %1 = spyre.reduce "sum" %0 dim 0 : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<1x64xf16, #spyre.layout<device_size = [1, 1, 64], stride_map = [64, 64, 1]>>
  %2 = spyre.from_device %1 : tensor<1x64xf16, #spyre.layout<device_size = [1, 1, 64], stride_map = [64, 64, 1]>> -> tensor<1x64xf32>
  func.return %2 : tensor<1x64xf32>
}
