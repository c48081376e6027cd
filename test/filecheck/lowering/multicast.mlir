// RUN: spyre-opt %s -p convert-spyre-to-isa | filecheck %s --check-prefixes=CHECK,OFF
// Input: the matmul kernel of inputs/kernels.mlir with its bias add as epilogue (spyre-fuse)
// and the relu after it, split by spyre-divide-work{split_k=false} and planned by
// spyre-plan-scratchpad; in @kernels_no_multicast the matmul split with multicast=false.

// B tiles multicast down a chain of cores over the ring (spyre-divide-work chose
// split <n = 1, m = 8> with multicast <chain = 8> for the 128x256x512 matmul): cores 0-7 share
// every B tile ([1 stick][256 rows]), passed on in pieces of 64 rows (64 sticks, 8 KiB): one
// ring_send per tile and core, `piece 64`. Core 0 loads each tile from DDR and passes it on
// (notify 2c: a piece landed in core c's buffer); a middle core waits for each piece and
// passes it on (`after 2c`, piece by piece), and right after its PT pass on a tile frees the
// buffer (signal 2c+1); a sender reusing a buffer first waits for its successor's credit. The
// last core only receives: one wait for the tile's four pieces. The middle cores run one
// stream, their tokens per-core tables (`[2 step 2 x 6]`: 2, 4, ..., 12 for cores 1 to 6),
// each core at its own pace (spyre_isa.stream).

// CHECK-LABEL: spyre_isa.program @k0
// CHECK:         spyre_isa.stream cores [0] {
// CHECK-NEXT:      spyre_isa.dma_load %in0
// CHECK-NEXT:      spyre_isa.dma_load %in1[0, {{.*}}] -> lx [[[B0:[0-9]+]], strides = [256, 1]] sizes [1, 256]
// CHECK-NEXT:      spyre_isa.ring_send lx [[[B0]], {{.*}}] -> core + [1] lx [[[B0]], {{.*}}] sizes [1, 256] piece 64 notify [2]
// CHECK-NEXT:      spyre_isa.pt_matmul
// CHECK:           spyre_isa.dma_load %in1[256, {{.*}}] -> lx [[[B1:[0-9]+]],
// CHECK-NEXT:      spyre_isa.ring_send lx [[[B1]], {{.*}} sizes [1, 256] piece 64 notify [2]
// Third tile: the first buffer again, once core 1 has freed it.
// CHECK:           spyre_isa.dma_load %in1[512, {{.*}}] -> lx [[[B0]],
// CHECK-NEXT:      spyre_isa.wait [3] count 1
// CHECK-NEXT:      spyre_isa.ring_send lx [[[B0]], {{.*}} notify [2]
// CHECK:         spyre_isa.stream cores [1 to 6] {
// CHECK-NOT:       spyre_isa.dma_load %in1
// CHECK-NOT:       spyre_isa.wait
// CHECK:           spyre_isa.ring_send lx [[[B0]], {{.*}} sizes [1, 256] piece 64 after [2 step 2 x 6] notify [4 step 2 x 6]
// CHECK-NEXT:      spyre_isa.pt_matmul
// CHECK-NEXT:      spyre_isa.signal [3 step 2 x 6]
// CHECK:           spyre_isa.wait [5 step 2 x 6] count 1
// CHECK-NEXT:      spyre_isa.ring_send
// CHECK:         spyre_isa.stream cores [7] {
// CHECK-NOT:       spyre_isa.ring_send
// CHECK:           spyre_isa.wait [14] count 4
// CHECK-NEXT:      spyre_isa.pt_matmul
// CHECK-NOT:       spyre_isa.ring_send
// CHECK:           spyre_isa.signal [15]
// CHECK-NOT:     spyre_isa.stream cores [8]
// CHECK:         spyre_isa.program @k1

// Without multicast every core loads its B tiles from DDR, and no ring traffic or sync appears.
// OFF-LABEL:   spyre_isa.program @off_k0
// OFF-NOT:       spyre_isa.ring_send
// OFF-NOT:       spyre_isa.wait
// OFF:         func.func @kernels

builtin.module {
  func.func @kernels(%x: tensor<128x256xf32>, %w: tensor<256x512xf32>, %b: tensor<512xf32>, %y: tensor<100x200xf32>) -> tensor<128x512xf32> {
    %0 = spyre.to_device %x : tensor<128x256xf32> -> tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>
    %1 = spyre.to_device %w : tensor<256x512xf32> -> tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>
    %2 = spyre.to_device %b : tensor<512xf32> -> tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>
    %3 = spyre.to_device %y : tensor<100x200xf32> -> tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>
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
    %5 = spyre.kernel "k1"(%3) split <d0 = 1, d1 = 25> chunks <d0 = 1, d1 = 1> lx <in0 = 0, out = 2048, in0_1 = 4096, out_1 = 6144> : (tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>) -> tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>> {
    ^bb0(%6: tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>):
      %7 = spyre.pointwise %6 : (tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>) -> tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>> {
      ^bb0(%8: f32):
        %9 = arith.constant 0.000000e+00 : f32
        %10 = arith.maximumf %8, %9 : f32
        spyre.yield %10 : f32
      }
      spyre.yield %7 : tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>
    }
    %6 = spyre.from_device %4 : tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> -> tensor<128x512xf32>
    func.return %6 : tensor<128x512xf32>
  }
  func.func @kernels_no_multicast(%x: tensor<128x256xf32>, %w: tensor<256x512xf32>, %b: tensor<512xf32>, %y: tensor<100x200xf32>) -> tensor<128x512xf32> {
    %0 = spyre.to_device %x : tensor<128x256xf32> -> tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>
    %1 = spyre.to_device %w : tensor<256x512xf32> -> tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>
    %2 = spyre.to_device %b : tensor<512xf32> -> tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>
    %3 = spyre.kernel "off_k0"(%0, %1, %2) split <n = 8, m = 1, k = 1> chunks <n = 1, m = 16, k = 1> lx <lhs = 0, rhs = 4096, acc = 36864, e1 = 38912, res = 39040, lhs_1 = 40064, rhs_1 = 44160, res_1 = 76928> : (tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> {
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
