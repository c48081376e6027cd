// A planned matmul kernel with its bias epilogue and multicast (spyre-divide-work, spyre-plan-scratchpad),
// edited by the lit tests that refuse a broken LX plan (tools/fuzz-regressions.mlir).
builtin.module {
  func.func @kernels(%x: tensor<128x256xf32>, %w: tensor<256x512xf32>, %b: tensor<512xf32>) -> tensor<128x512xf32> {
    %0 = spyre.to_device %x : tensor<128x256xf32> -> tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>
    %1 = spyre.to_device %w : tensor<256x512xf32> -> tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>
    %2 = spyre.to_device %b : tensor<512xf32> -> tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>
    %4 = spyre.kernel "k0"(%0, %1, %2) split <n = 1, m = 8, k = 1> chunks <n = 8, m = 1, k = 1> lx <lhs = 0, rhs = 8192, acc = 40960, e1 = 45056, res = 45184, rhs_1 = 47232, lhs_1 = 80000, res_1 = 88192> multicast <chain = 8> : (tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> {
    ^bb0(%5: tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, %6: tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>, %7: tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>):
      %8 = spyre.matmul %5, %6 : (tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>
      %9 = spyre.pointwise %8, %7 : (tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> {
      ^bb0(%10: f32, %11: f32):
        %12 = arith.addf %10, %11 : f32
        spyre.yield %12 : f32
      }
      spyre.yield %9 : tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>
    }
    %5 = spyre.from_device %4 : tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> -> tensor<128x512xf32>
    func.return %5 : tensor<128x512xf32>
  }
}
