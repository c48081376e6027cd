// RUN: spyre-opt %s -p spyre-plan-scratchpad --verify-diagnostics --split-input-file | filecheck %s
// A kernel the planner cannot place is refused, naming the kernel and the reason.

// The matmul kernel of inputs/kernels.mlir with its bias add as epilogue, split as
// spyre-divide-work{split_k=false} splits it (8 row blocks, B passed down a chain of 8).
// Nothing fits the 256 bytes a target with 320 bytes of LX leaves the planner.
// CHECK: kernel k0: its smallest chunk needs 17024 bytes of LX per core, the planner's budget is 256
builtin.module attributes {spyre.target = #spyre.target<lx_bytes = 320>} {
  func.func @kernels(%x: tensor<128x256xf32>, %w: tensor<256x512xf32>, %b: tensor<512xf32>, %y: tensor<100x200xf32>) -> tensor<128x512xf32> {
    %0 = spyre.to_device %x : tensor<128x256xf32> -> tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>
    %1 = spyre.to_device %w : tensor<256x512xf32> -> tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>
    %2 = spyre.to_device %b : tensor<512xf32> -> tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>
    %3 = spyre.kernel "k0"(%0, %1, %2) split <n = 1, m = 8, k = 1> multicast <chain = 8> : (tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> {
    ^bb0(%4: tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, %5: tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>, %6: tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>):
      %7 = spyre.matmul %4, %5 : (tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>
      %8 = spyre.pointwise %7, %6 : (tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> {
      ^bb0(%9: f32, %10: f32):
        %11 = arith.addf %9, %10 : f32
        spyre.yield %11 : f32
      }
      spyre.yield %8 : tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>
    }
    %4 = spyre.from_device %3 : tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> -> tensor<128x512xf32>
    func.return %4 : tensor<128x512xf32>
  }
}

// -----

// A hand-written split with more boxes (4 x 50) than the device (the default target) has cores.
// CHECK: kernel t_k2: split {{.*}} needs 200 cores, the device has 32

builtin.module {
  func.func @relu(%arg0: tensor<100x256xf16>) -> tensor<100x256xf16> {
    %0 = spyre.to_device %arg0 : tensor<100x256xf16> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    %1 = spyre.kernel "t_k2"(%0) split <d0 = 4, d1 = 64> : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%2: tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>):
      %3 = spyre.pointwise %2 : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
      ^bb0(%4: f32):
        %5 = arith.constant 0.000000e+00 : f32
        %6 = arith.maximumf %4, %5 : f32
        spyre.yield %6 : f32
      }
      spyre.yield %3 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    }
    %2 = spyre.from_device %1 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> -> tensor<100x256xf16>
    func.return %2 : tensor<100x256xf16>
  }
}
