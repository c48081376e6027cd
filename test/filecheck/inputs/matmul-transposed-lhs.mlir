// Input of lowering/convert-spyre-to-isa.mlir's UNREAD run: a matmul whose lhs is a
// transpose (sticked along M), as spyre-propagate-layouts would not leave it.
builtin.module {
  func.func @f(%x: tensor<128x128xf32>, %w: tensor<128x64xf32>) -> tensor<128x64xf32> {
    %0 = spyre.to_device %x : tensor<128x128xf32> -> tensor<128x128xf16, #spyre.layout<device_size = [2, 128, 64], stride_map = [64, 128, 1]>>
    %1 = spyre.to_device %w : tensor<128x64xf32> -> tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>
    %6 = spyre.permute %0 permutation [1, 0] : tensor<128x128xf16, #spyre.layout<device_size = [2, 128, 64], stride_map = [64, 128, 1]>> -> tensor<128x128xf16, #spyre.layout<device_size = [2, 128, 64], stride_map = [8192, 1, 128]>>
    %8 = spyre.matmul %6, %1 : (tensor<128x128xf16, #spyre.layout<device_size = [2, 128, 64], stride_map = [8192, 1, 128]>>, tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>) -> tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>
    %9 = spyre.from_device %8 : tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>> -> tensor<128x64xf32>
    func.return %9 : tensor<128x64xf32>
  }
}
