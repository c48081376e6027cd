// RUN: spyre-opt %s -p convert-spyre-to-isa | filecheck %s
// Input: the matmul kernel of inputs/kernels.mlir with its bias add as epilogue (spyre-fuse),
// split by spyre-divide-work and planned by spyre-plan-scratchpad (their defaults).

// A k split (spyre-divide-work chose split <n = 1, m = 8, k = 2> with chains of 8 for the
// 128x256x512 matmul): cores 2i and 2i + 1 sum the two halves of k for the same 16 rows. The
// chains of cores sharing B tiles (same n and k range) are every other core, so B pieces go
// to core + 2. Core 2i + 1 sends its fp32 sums to core 2i's acc_in (token 2 * 32 + 2 * 2i),
// and from the second output tile on first waits for core 2i's credit (`after` token + 1); core 2i
// adds them, frees acc_in, applies the epilogue to the fp32 sums (the bias add reads the
// accumulator; only its result is rounded) and stores, after the next B tile's load: its wait
// for the sums holds up every later instruction of the core, so the load goes first and
// streams meanwhile. Cores 2 to 12 (13) of the chains run one stream, their tokens per-core
// tables.

// CHECK:      spyre_isa.program @k0(
// CHECK:      spyre_isa.stream cores [0] {
// CHECK:        spyre_isa.ring_send lx [[[B:[0-9]+]], strides = [128, 1]] -> core + [2] lx [[[B]], strides = [128, 1]] sizes [1, 128] piece 64 notify [4]
// CHECK:        spyre_isa.pt_matmul {{.*}} -> lx [[[ACC:[0-9]+]], strides = [2, 32], f32] m = 16 n = 64 k = 128
// CHECK-NEXT:   spyre_isa.dma_load %in1[256, strides = [256, 1]] -> lx [[[B1:[0-9]+]], strides = [128, 1]]
// CHECK-NEXT:   spyre_isa.ring_send lx [[[B1]], strides = [128, 1]] -> core + [2]
// CHECK-NEXT:   spyre_isa.wait [64] count 1
// CHECK-NEXT:   spyre_isa.sfp_add lx [[[ACC]], strides = [32, 2], f32], lx [[[IN:[0-9]+]], strides = [32, 2], f32] -> lx [[[ACC]], strides = [32, 2], f32] sizes [1, 16]
// CHECK-NEXT:   spyre_isa.signal [65]
// CHECK-NEXT:   spyre_isa.dma_load %in2
// CHECK-NEXT:   spyre_isa.sfp_add lx [[[ACC]], strides = [32, 2], f32], lx [[[BIAS:[0-9]+]], strides = [1, 0]] -> lx [[[RES:[0-9]+]], strides = [16, 1]] sizes [1, 16]
// CHECK-NEXT:   spyre_isa.dma_store lx [[[RES]], strides = [16, 1]]
// CHECK-NEXT:   spyre_isa.pt_matmul {{.*}}, lx [[[B1]], strides = [1, 128]] -> lx [[[ACC]], strides = [2, 32], f32]
// CHECK:      spyre_isa.stream cores [1] {
// CHECK-NOT:    spyre_isa.dma_store
// CHECK:        spyre_isa.pt_matmul {{.*}} -> lx [[[ACC]], strides = [2, 32], f32] m = 16 n = 64 k = 128
// CHECK-NEXT:   spyre_isa.ring_send lx [[[ACC]], strides = [1]] -> core + [-1] lx [[[IN]], strides = [1]] sizes [32] notify [64]
// CHECK-NOT:    spyre_isa.dma_store
// CHECK:        spyre_isa.pt_matmul
// CHECK-NEXT:   spyre_isa.ring_send lx [[[ACC]], strides = [1]] -> core + [-1] lx [[[IN]], strides = [1]] sizes [32] after [65] notify [64]
// CHECK-NOT:    spyre_isa.dma_store
// CHECK:      spyre_isa.stream cores [2, 4, 6, 8, 10, 12] {

builtin.module {
  func.func @kernels(%x: tensor<128x256xf32>, %w: tensor<256x512xf32>, %b: tensor<512xf32>, %y: tensor<100x200xf32>) -> tensor<128x512xf32> {
    %0 = spyre.to_device %x : tensor<128x256xf32> -> tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>
    %1 = spyre.to_device %w : tensor<256x512xf32> -> tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>
    %2 = spyre.to_device %b : tensor<512xf32> -> tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>
    %3 = spyre.kernel "k0"(%0, %1, %2) split <n = 1, m = 8, k = 2> chunks <n = 8, m = 1, k = 1> lx <lhs = 0, rhs = 4096, acc = 20480, e1 = 24576, res = 24704, acc_in = 26752, rhs_1 = 30848, lhs_1 = 47232, res_1 = 51328> multicast <chain = 8> : (tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> {
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
