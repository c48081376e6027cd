// Shared input of the kernel-level pass tests (spyre level, after spyre-propagate-layouts):
// a 128x256x512 matmul, a bias add, relu on (100, 200), a transpose, relu on (200, 100).
// Made from torch with: spyre-opt -p convert-torch-to-spyre,spyre-propagate-layouts
builtin.module {
  func.func @kernels(%x: tensor<128x256xf32>, %w: tensor<256x512xf32>, %b: tensor<512xf32>, %y: tensor<100x200xf32>) -> (tensor<128x512xf32>, tensor<200x100xf32>) {
    %0 = spyre.to_device %x : tensor<128x256xf32> -> tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>
    %1 = spyre.to_device %w : tensor<256x512xf32> -> tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>
    %2 = spyre.to_device %b : tensor<512xf32> -> tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>
    %3 = spyre.to_device %y : tensor<100x200xf32> -> tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>
    %4 = spyre.matmul %0, %1 : (tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>
    %5 = spyre.pointwise %4, %2 : (tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> {
    ^bb0(%6: f32, %7: f32):
      %8 = arith.addf %6, %7 : f32
      spyre.yield %8 : f32
    }
    %9 = spyre.pointwise %3 : (tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>) -> tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>> {
    ^bb0(%10: f32):
      %11 = arith.constant 0.000000e+00 : f32
      %12 = arith.maximumf %10, %11 : f32
      spyre.yield %12 : f32
    }
    %13 = spyre.permute %9 permutation [1, 0] : tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>> -> tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>>
    %14 = spyre.restickify %13 : tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>> -> tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>
    %15 = spyre.pointwise %14 : (tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>) -> tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%16: f32):
      %17 = arith.constant 0.000000e+00 : f32
      %18 = arith.maximumf %16, %17 : f32
      spyre.yield %18 : f32
    }
    %19 = spyre.from_device %5 : tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> -> tensor<128x512xf32>
    %20 = spyre.from_device %15 : tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>> -> tensor<200x100xf32>
    func.return %19, %20 : tensor<128x512xf32>, tensor<200x100xf32>
  }
}

