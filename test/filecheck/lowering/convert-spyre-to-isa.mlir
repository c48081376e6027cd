// RUN: spyre-opt %s -p convert-spyre-to-isa --split-input-file --verify-diagnostics | filecheck %s
// Input: the kernels of inputs/kernels.mlir (spyre-fuse{epilogues=false}), split by
// spyre-divide-work{strategy=even} and planned by spyre-plan-scratchpad{double_buffer=false
// cost=false}; then the matmul kernel of spyre-fuse's output, not planned.

// Every planned kernel becomes a program of SPMD streams (addresses per core are tables, in
// sticks); the kernel op becomes a launch. A ragged last part gets a stream of its own.

// Matmul: B tile (4 N-sticks x 256 rows) first (a weight's first loads can then start before
// the launch's barrier: DeviceConfig.early_loads), A tile (4 K-sticks x 8 rows), PT into fp32
// partial sums, one SFP copy rounds them into the output tile, DMA out.
// CHECK-LABEL: spyre_isa.program @k0(%in0: {{.*}}, %in1: {{.*}}, %out: {{.*}}) inputs 2 {
// CHECK-NEXT:    spyre_isa.stream cores [0 to 31] {
// CHECK-NEXT:      spyre_isa.dma_load %in1[[0, {{.*}}, 0, 1024, {{.*}}, 1024], strides = [256, 1]] -> lx [32, strides = [256, 1]] sizes [4, 256]
// CHECK-NEXT:      spyre_isa.dma_load %in0[[0, 8, 16, {{.*}}, 120, 0, 8, {{.*}}], strides = [128, 1]] -> lx [0, strides = [8, 1]] sizes [4, 8]
// CHECK-NEXT:      spyre_isa.pt_matmul lx [0, strides = [1, 8]], lx [32, strides = [1, 256]] -> lx [1056, strides = [2, 16], f32] m = 8 n = 256 k = 256
// CHECK-NEXT:      spyre_isa.sfp_copy lx [1056, strides = [16, 2], f32] -> lx [1120, strides = [8, 1]] sizes [4, 8]
// CHECK-NEXT:      spyre_isa.dma_store lx [1120, strides = [8, 1]] -> %out[[0, 8, {{.*}}, 512, 520, {{.*}}], strides = [128, 1]] sizes [4, 8]
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// Bias add: the bias tile is read with stride 0 along the rows it broadcasts over.
// CHECK-LABEL: spyre_isa.program @k1
// CHECK:         spyre_isa.dma_load %in1[[0, {{.*}}, 4, {{.*}}], strides = [1]] -> lx [32, strides = [1]] sizes [4]
// CHECK-NEXT:    spyre_isa.sfp_add lx [0, strides = [8, 1]], lx [32, strides = [1, 0]] -> lx [36, strides = [8, 1]] sizes [4, 8]

// ReLU: the zero is an immediate.
// CHECK-LABEL: spyre_isa.program @k2
// CHECK:         spyre_isa.sfp_max lx [0, strides = [4, 1]], 0.000000e+00 -> lx [16, strides = [4, 1]] sizes [4, 4]

// Transpose (200, 100): 64 x 64 blocks; the last block along each dim is short (rows along
// the old stick dim: 100 = 64 + 36; columns: 200 = 3 x 64 + 8), so four streams.
// CHECK-LABEL: spyre_isa.program @k3
// CHECK:         spyre_isa.stream cores [0 to 2] {
// CHECK-NEXT:      spyre_isa.dma_load %in0[[0 step 100 x 3], strides = [100, 64, 1]] -> lx [0, strides = [64, 64, 1]] sizes [1, 1, 64]
// CHECK-NEXT:      spyre_isa.sfp_transpose lx [0, strides = [64, 1]] -> lx [64, strides = [64, 1]] blocks = 1 rows = 64 cols = 64
// CHECK-NEXT:      spyre_isa.dma_store lx [64, strides = [64, 64, 1]] -> %out[[0 step 64 x 3], strides = [64, 200, 1]] sizes [1, 1, 64]
// CHECK:         spyre_isa.stream cores [3] {
// CHECK:           blocks = 1 rows = 64 cols = 8
// CHECK:         spyre_isa.stream cores [4 to 6] {
// CHECK:           blocks = 1 rows = 36 cols = 64
// CHECK:         spyre_isa.stream cores [7] {
// CHECK:           blocks = 1 rows = 36 cols = 8

// ReLU on (200, 100): 28 cores take 7 rows, core 28 the last 4.
// CHECK-LABEL: spyre_isa.program @k4
// CHECK:         spyre_isa.stream cores [0 to 27] {
// CHECK-NEXT:      spyre_isa.dma_load %in0[[0 step 7 x 28], strides = [200, 1]] -> lx [0, strides = [7, 1]] sizes [2, 7]
// CHECK:         spyre_isa.stream cores [28] {
// CHECK-NEXT:      spyre_isa.dma_load %in0[196, strides = [200, 1]] -> lx [0, strides = [4, 1]] sizes [2, 4]

// CHECK-LABEL: func.func @kernels
// CHECK:         %[[K0:.*]] = spyre_isa.launch @k0(%{{.*}}, %{{.*}})
// CHECK-NEXT:    spyre_isa.launch @k1(%[[K0]], %{{.*}})
// CHECK-NOT:     spyre.kernel

// CHECK: kernel k0: run spyre-divide-work and spyre-plan-scratchpad first (split, chunks and lx are needed)

builtin.module {
  func.func @kernels(%x: tensor<128x256xf32>, %w: tensor<256x512xf32>, %b: tensor<512xf32>, %y: tensor<100x200xf32>) -> (tensor<128x512xf32>, tensor<200x100xf32>) {
    %0 = spyre.to_device %x : tensor<128x256xf32> -> tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>
    %1 = spyre.to_device %w : tensor<256x512xf32> -> tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>
    %2 = spyre.to_device %b : tensor<512xf32> -> tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>
    %3 = spyre.to_device %y : tensor<100x200xf32> -> tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>
    %4 = spyre.kernel "k0"(%0, %1) split <n = 2, m = 16, k = 1> chunks <n = 1, m = 1, k = 1> lx <lhs = 0, rhs = 4096, acc = 135168, out = 143360> : (tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> {
    ^bb0(%5: tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, %6: tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>):
      %7 = spyre.matmul %5, %6 : (tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>
      spyre.yield %7 : tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>
    }
    %5 = spyre.kernel "k1"(%4, %2) split <d0 = 2, d1 = 16> chunks <d0 = 1, d1 = 1> lx <in0 = 0, in1 = 4096, out = 4608> : (tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> {
    ^bb0(%6: tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>, %7: tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>):
      %8 = spyre.pointwise %6, %7 : (tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> {
      ^bb0(%9: f32, %10: f32):
        %11 = arith.addf %9, %10 : f32
        spyre.yield %11 : f32
      }
      spyre.yield %8 : tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>
    }
    %6 = spyre.kernel "k2"(%3) split <d0 = 1, d1 = 25> chunks <d0 = 1, d1 = 1> lx <in0 = 0, out = 2048> : (tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>) -> tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>> {
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
    %8 = spyre.kernel "k3"(%7) split <d0 = 2, d1 = 4> chunks <d0 = 1, d1 = 1> lx <src = 0, dst = 8192> : (tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>>) -> tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%9: tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>>):
      %10 = spyre.restickify %9 : tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>> -> tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>
      spyre.yield %10 : tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>
    }
    %9 = spyre.kernel "k4"(%8) split <d0 = 1, d1 = 29> chunks <d0 = 1, d1 = 1> lx <in0 = 0, out = 1792> : (tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>) -> tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>> {
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

builtin.module {
  func.func @kernels(%x: tensor<128x256xf32>, %w: tensor<256x512xf32>, %b: tensor<512xf32>, %y: tensor<100x200xf32>) -> tensor<128x512xf32> {
    %0 = spyre.to_device %x : tensor<128x256xf32> -> tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>
    %1 = spyre.to_device %w : tensor<256x512xf32> -> tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>
    %2 = spyre.to_device %b : tensor<512xf32> -> tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>
    %3 = spyre.kernel "k0"(%0, %1, %2) : (tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> {
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
