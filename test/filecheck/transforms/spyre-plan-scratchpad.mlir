// RUN: spyre-opt %s -p 'spyre-plan-scratchpad{double_buffer=false cost=false}' --split-input-file | filecheck %s
// RUN: spyre-opt %s -p spyre-plan-scratchpad --split-input-file | filecheck %s --check-prefix=DOUBLE
// Input: the kernels of inputs/kernels.mlir without epilogues (spyre-fuse{epilogues=false}),
// split by spyre-divide-work{strategy=even} over 32 cores (@even) and over one core
// (@one_core, on a device with 80 KiB of LX: each kernel's whole iteration space is one
// core's box).
// Buffers are placed one after another (byte offsets, 128-aligned). With room to spare each
// core does its part in one chunk; a small budget chunks the work until it fits.

// CHECK-LABEL: func.func @even
// matmul per core: A 8 rows x 4 sticks, B 256 rows x 4 sticks, fp32 acc 8 x 8 sticks, out 8 x 4
// CHECK: spyre.kernel "k0"({{.*}}) split <n = 2, m = 16, k = 1> chunks <n = 1, m = 1, k = 1> lx <lhs = 0, rhs = 4096, acc = 135168, out = 143360>
// bias add: x tile 32 sticks, bias 4 sticks (broadcast over rows), out 32 sticks
// CHECK: spyre.kernel "k1"({{.*}}) split <{{.*}}> chunks <d0 = 1, d1 = 1> lx <in0 = 0, in1 = 4096, out = 4608>
// transpose: one 64-stick source and destination block per core
// CHECK: spyre.kernel "k3"({{.*}}) split <{{.*}}> chunks <d0 = 1, d1 = 1> lx <src = 0, dst = 8192>

// The defaults double-buffer streamed tiles (a second buffer `name_1` that convert-spyre-to-isa
// alternates with the first) and pick the matmul's chunks by estimated time: here 4 n chunks
// of one stick, so that each tile's loads overlap the previous tile's PT passes (the DMA
// engines queue their loads, so more loads cost no more latency than the first). The transpose
// is not double-buffered.
// DOUBLE-LABEL: func.func @even
// DOUBLE: spyre.kernel "k0"({{.*}}) split <n = 2, m = 16, k = 1> chunks <n = 4, m = 1, k = 1> lx <lhs = 0, rhs = 4096, acc = 36864, out = 38912, lhs_1 = 39936, rhs_1 = 44032, out_1 = 76800>
// DOUBLE: spyre.kernel "k1"({{.*}}) split <{{.*}}> chunks <d0 = 1, d1 = 1> lx <in0 = 0, in1 = 4096, out = 4608, in0_1 = 8704, in1_1 = 12800, out_1 = 13312>
// DOUBLE: spyre.kernel "k3"({{.*}}) split <{{.*}}> chunks <d0 = 1, d1 = 1> lx <src = 0, dst = 8192>

builtin.module {
  func.func @even(%x: tensor<128x256xf32>, %w: tensor<256x512xf32>, %b: tensor<512xf32>, %y: tensor<100x200xf32>) -> (tensor<128x512xf32>, tensor<200x100xf32>) {
    %0 = spyre.to_device %x : tensor<128x256xf32> -> tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>
    %1 = spyre.to_device %w : tensor<256x512xf32> -> tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>
    %2 = spyre.to_device %b : tensor<512xf32> -> tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>
    %3 = spyre.to_device %y : tensor<100x200xf32> -> tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>
    %4 = spyre.kernel "k0"(%0, %1) split <n = 2, m = 16, k = 1> : (tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> {
    ^bb0(%5: tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, %6: tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>):
      %7 = spyre.matmul %5, %6 : (tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>
      spyre.yield %7 : tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>
    }
    %5 = spyre.kernel "k1"(%4, %2) split <d0 = 2, d1 = 16> : (tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> {
    ^bb0(%6: tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>, %7: tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>):
      %8 = spyre.pointwise %6, %7 : (tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> {
      ^bb0(%9: f32, %10: f32):
        %11 = arith.addf %9, %10 : f32
        spyre.yield %11 : f32
      }
      spyre.yield %8 : tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>
    }
    %6 = spyre.kernel "k2"(%3) split <d0 = 1, d1 = 25> : (tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>) -> tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>> {
    ^bb0(%7: tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>):
      %8 = spyre.pointwise %7 : (tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>) -> tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>> {
      ^bb0(%9: f32):
        %10 = arith.constant 0.000000e+00 : f32
        %11 = arith.maximumf %9, %10 : f32
        spyre.yield %11 : f32
      }
      spyre.yield %8 : tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>
    }
    %7 = spyre.permute %6 permutation [1, 0] : tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>> -> tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>>
    %8 = spyre.kernel "k3"(%7) split <d0 = 2, d1 = 4> : (tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>>) -> tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%9: tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>>):
      %10 = spyre.restickify %9 : tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>> -> tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>
      spyre.yield %10 : tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>
    }
    %9 = spyre.kernel "k4"(%8) split <d0 = 1, d1 = 29> : (tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>) -> tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%10: tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>):
      %11 = spyre.pointwise %10 : (tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>) -> tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>> {
      ^bb0(%12: f32):
        %13 = arith.constant 0.000000e+00 : f32
        %14 = arith.maximumf %12, %13 : f32
        spyre.yield %14 : f32
      }
      spyre.yield %11 : tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>
    }
    %10 = spyre.from_device %5 : tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> -> tensor<128x512xf32>
    %11 = spyre.from_device %9 : tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>> -> tensor<200x100xf32>
    func.return %10, %11 : tensor<128x512xf32>, tensor<200x100xf32>
  }
}

// -----

// One core whose planner may use 64 KiB (80% of its target's 80 KiB of LX): the 128x256x512 matmul streams through LX in chunks (A, B, acc, out fit).
// CHECK-LABEL: func.func @one_core
// CHECK: spyre.kernel "s_k0"({{.*}}) split <n = 1, m = 1, k = 1> chunks <n = 8, m = 2, k = 2> lx <lhs = 0, rhs = 16384, acc = 32768, out = 49152>
// CHECK: spyre.kernel "s_k1"({{.*}}) split <d0 = 1, d1 = 1> chunks <d0 = 8, d1 = 1> lx <in0 = 0, in1 = 16384, out = 16512>
// CHECK: spyre.kernel "s_k2"({{.*}}) split <d0 = 1, d1 = 1> chunks <d0 = 2, d1 = 1> lx <in0 = 0, out = 25600>

builtin.module attributes {spyre.target = #spyre.target<lx_bytes = 81920>} {
  func.func @one_core(%x: tensor<128x256xf32>, %w: tensor<256x512xf32>, %b: tensor<512xf32>, %y: tensor<100x200xf32>) -> (tensor<128x512xf32>, tensor<200x100xf32>) {
    %0 = spyre.to_device %x : tensor<128x256xf32> -> tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>
    %1 = spyre.to_device %w : tensor<256x512xf32> -> tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>
    %2 = spyre.to_device %b : tensor<512xf32> -> tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>
    %3 = spyre.to_device %y : tensor<100x200xf32> -> tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>
    %4 = spyre.kernel "s_k0"(%0, %1) split <n = 1, m = 1, k = 1> : (tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> {
    ^bb0(%5: tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, %6: tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>):
      %7 = spyre.matmul %5, %6 : (tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>
      spyre.yield %7 : tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>
    }
    %5 = spyre.kernel "s_k1"(%4, %2) split <d0 = 1, d1 = 1> : (tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> {
    ^bb0(%6: tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>, %7: tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>):
      %8 = spyre.pointwise %6, %7 : (tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> {
      ^bb0(%9: f32, %10: f32):
        %11 = arith.addf %9, %10 : f32
        spyre.yield %11 : f32
      }
      spyre.yield %8 : tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>
    }
    %6 = spyre.kernel "s_k2"(%3) split <d0 = 1, d1 = 1> : (tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>) -> tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>> {
    ^bb0(%7: tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>):
      %8 = spyre.pointwise %7 : (tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>) -> tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>> {
      ^bb0(%9: f32):
        %10 = arith.constant 0.000000e+00 : f32
        %11 = arith.maximumf %9, %10 : f32
        spyre.yield %11 : f32
      }
      spyre.yield %8 : tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>
    }
    %7 = spyre.permute %6 permutation [1, 0] : tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>> -> tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>>
    %8 = spyre.kernel "s_k3"(%7) split <d0 = 1, d1 = 1> : (tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>>) -> tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%9: tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>>):
      %10 = spyre.restickify %9 : tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>> -> tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>
      spyre.yield %10 : tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>
    }
    %9 = spyre.kernel "s_k4"(%8) split <d0 = 1, d1 = 1> : (tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>) -> tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%10: tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>):
      %11 = spyre.pointwise %10 : (tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>) -> tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>> {
      ^bb0(%12: f32):
        %13 = arith.constant 0.000000e+00 : f32
        %14 = arith.maximumf %12, %13 : f32
        spyre.yield %14 : f32
      }
      spyre.yield %11 : tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>
    }
    %10 = spyre.from_device %5 : tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> -> tensor<128x512xf32>
    %11 = spyre.from_device %9 : tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>> -> tensor<200x100xf32>
    func.return %10, %11 : tensor<128x512xf32>, tensor<200x100xf32>
  }
}
