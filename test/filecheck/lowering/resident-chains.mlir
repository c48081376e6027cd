// RUN: spyre-opt %s -p convert-spyre-to-isa | filecheck %s
// Input: transforms/spyre-resident-chains.mlir's MLP (Linear(128, 256) -> GELU ->
// Linear(256, 128) on x (64, 128)) after spyre-resident-chains, spyre-divide-work and
// spyre-plan-scratchpad on a target of 4 cores; in @two_readers the
// intermediate is also returned, and goes through DDR.
// The producer stores nothing: its GELU writes each tile into the core's block at the top of
// LX (sticks 13043.., 32 rows per n stick); the consumer loads only B and the bias, and its
// PT reads A there (k stick j of the block at 13043 + 32 j).

// CHECK-LABEL:   spyre_isa.program @g1_k0
// CHECK-SAME:    spyre.resident_out = array<i64: 13043, 13107>
// CHECK-NOT:     spyre_isa.dma_store
// CHECK:         spyre_isa.sfp_mul {{.*}} -> lx [13043, strides = [32, 1]] sizes [2, 32]
// CHECK-NOT:     spyre_isa.dma_store
// CHECK:         spyre_isa.program @g1_k1
// CHECK-SAME:    spyre.resident_in = array<i64: 13043, 13107>
// CHECK:         spyre_isa.stream cores [0]
// CHECK-NOT:     %in0
// CHECK:         spyre_isa.pt_matmul lx [13043, strides = [1, 32]], lx [0, strides = [1, 64]]
// CHECK-NOT:     %in0
// CHECK:         spyre_isa.pt_matmul lx [13075, strides = [1, 32]], lx [{{[0-9]+}}, strides = [1, 64]]
// CHECK-NOT:     %in0
// CHECK:         spyre_isa.dma_store
// CHECK:         spyre_isa.program @g2_k0
// CHECK-NOT:     spyre.resident

builtin.module attributes {spyre.target = #spyre.target<cores = 4>} {
  func.func @mlp(%arg0: tensor<256x128xf32>, %arg1: tensor<256xf32>, %arg2: tensor<64x128xf32>, %arg3: tensor<128x256xf32>, %arg4: tensor<128xf32>) -> tensor<64x128xf32> {
    %0 = spyre.to_device %arg2 : tensor<64x128xf32> -> tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>
    %1 = spyre.to_device %arg1 : tensor<256xf32> -> tensor<256xf16, #spyre.layout<device_size = [4, 64], stride_map = [64, 1]>>
    %2 = spyre.to_device %arg0 permutation [1, 0] : tensor<256x128xf32> -> tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>
    %3 = spyre.kernel "g1_k0"(%0, %2, %1) split <n = 2, m = 2, k = 1> chunks <n = 1, m = 1, k = 2> lx <lhs = 0, rhs = 4096, acc = 20480, e1 = 36864, t0 = 37120, t1 = 53504, res = 69888, rhs_1 = 78080, lhs_1 = 94464, res_1 = 98560> multicast <chain = 2> core_order [0, 2, 1, 3] resident_out <offset = 1669504> lx_budget <bytes = 1669504> : (tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>, tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, tensor<256xf16, #spyre.layout<device_size = [4, 64], stride_map = [64, 1]>>) -> tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%4: tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>, %5: tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, %6: tensor<256xf16, #spyre.layout<device_size = [4, 64], stride_map = [64, 1]>>):
      %7 = spyre.matmul %4, %5 : (tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>, tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>) -> tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>
      %8 = spyre.pointwise %7, %6 : (tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>, tensor<256xf16, #spyre.layout<device_size = [4, 64], stride_map = [64, 1]>>) -> tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>> {
      ^bb0(%9: f32, %10: f32):
        %11 = arith.addf %9, %10 : f32
        %12 = arith.constant 5.000000e-01 : f32
        %13 = arith.mulf %11, %12 : f32
        %14 = arith.constant 0.707106769 : f32
        %15 = arith.mulf %11, %14 : f32
        %16 = math.erf %15 : f32
        %17 = arith.constant 1.000000e+00 : f32
        %18 = arith.addf %16, %17 : f32
        %19 = arith.mulf %13, %18 : f32
        spyre.yield %19 : f32
      }
      spyre.yield %8 : tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>
    }
    %4 = spyre.to_device %arg4 : tensor<128xf32> -> tensor<128xf16, #spyre.layout<device_size = [2, 64], stride_map = [64, 1]>>
    %5 = spyre.to_device %arg3 permutation [1, 0] : tensor<128x256xf32> -> tensor<256x128xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 128, 1]>>
    %6 = spyre.kernel "g1_k1"(%3, %5, %4) split <n = 1, m = 2, k = 2> chunks <n = 2, m = 1, k = 2> lx <rhs = 0, acc = 8192, e1 = 16384, res = 16512, acc_in = 20608, rhs_1 = 28800, res_1 = 36992> multicast <chain = 2> resident_in <input = 0, offset = 1669504> lx_budget <bytes = 1669504> : (tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>, tensor<256x128xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 128, 1]>>, tensor<128xf16, #spyre.layout<device_size = [2, 64], stride_map = [64, 1]>>) -> tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> {
    ^bb0(%7: tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>, %8: tensor<256x128xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 128, 1]>>, %9: tensor<128xf16, #spyre.layout<device_size = [2, 64], stride_map = [64, 1]>>):
      %10 = spyre.matmul %7, %8 : (tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>, tensor<256x128xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 128, 1]>>) -> tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>
      %11 = spyre.pointwise %10, %9 : (tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>, tensor<128xf16, #spyre.layout<device_size = [2, 64], stride_map = [64, 1]>>) -> tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> {
      ^bb0(%12: f32, %13: f32):
        %14 = arith.addf %12, %13 : f32
        spyre.yield %14 : f32
      }
      spyre.yield %11 : tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>
    }
    %7 = spyre.from_device %6 : tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> -> tensor<64x128xf32>
    func.return %7 : tensor<64x128xf32>
  }
  func.func @two_readers(%arg0: tensor<256x128xf32>, %arg1: tensor<256xf32>, %arg2: tensor<64x128xf32>, %arg3: tensor<128x256xf32>, %arg4: tensor<128xf32>) -> (tensor<64x128xf32>, tensor<64x256xf32>) {
    %0 = spyre.to_device %arg2 : tensor<64x128xf32> -> tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>
    %1 = spyre.to_device %arg1 : tensor<256xf32> -> tensor<256xf16, #spyre.layout<device_size = [4, 64], stride_map = [64, 1]>>
    %2 = spyre.to_device %arg0 permutation [1, 0] : tensor<256x128xf32> -> tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>
    %3 = spyre.kernel "g2_k0"(%0, %2, %1) split <n = 1, m = 4, k = 1> chunks <n = 4, m = 1, k = 1> lx <lhs = 0, rhs = 4096, acc = 20480, e1 = 24576, t0 = 24704, t1 = 28800, res = 32896, rhs_1 = 34944, lhs_1 = 51328, res_1 = 55424> multicast <chain = 4> : (tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>, tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, tensor<256xf16, #spyre.layout<device_size = [4, 64], stride_map = [64, 1]>>) -> tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%4: tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>, %5: tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, %6: tensor<256xf16, #spyre.layout<device_size = [4, 64], stride_map = [64, 1]>>):
      %7 = spyre.matmul %4, %5 : (tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>, tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>) -> tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>
      %8 = spyre.pointwise %7, %6 : (tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>, tensor<256xf16, #spyre.layout<device_size = [4, 64], stride_map = [64, 1]>>) -> tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>> {
      ^bb0(%9: f32, %10: f32):
        %11 = arith.addf %9, %10 : f32
        %12 = arith.constant 5.000000e-01 : f32
        %13 = arith.mulf %11, %12 : f32
        %14 = arith.constant 0.707106769 : f32
        %15 = arith.mulf %11, %14 : f32
        %16 = math.erf %15 : f32
        %17 = arith.constant 1.000000e+00 : f32
        %18 = arith.addf %16, %17 : f32
        %19 = arith.mulf %13, %18 : f32
        spyre.yield %19 : f32
      }
      spyre.yield %8 : tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>
    }
    %4 = spyre.to_device %arg4 : tensor<128xf32> -> tensor<128xf16, #spyre.layout<device_size = [2, 64], stride_map = [64, 1]>>
    %5 = spyre.to_device %arg3 permutation [1, 0] : tensor<128x256xf32> -> tensor<256x128xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 128, 1]>>
    %6 = spyre.kernel "g2_k1"(%3, %5, %4) split <n = 1, m = 2, k = 2> chunks <n = 2, m = 1, k = 1> lx <lhs = 0, rhs = 8192, acc = 24576, e1 = 32768, res = 32896, acc_in = 36992, rhs_1 = 45184, lhs_1 = 61568, res_1 = 69760> multicast <chain = 2> : (tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>, tensor<256x128xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 128, 1]>>, tensor<128xf16, #spyre.layout<device_size = [2, 64], stride_map = [64, 1]>>) -> tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> {
    ^bb0(%7: tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>, %8: tensor<256x128xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 128, 1]>>, %9: tensor<128xf16, #spyre.layout<device_size = [2, 64], stride_map = [64, 1]>>):
      %10 = spyre.matmul %7, %8 : (tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>, tensor<256x128xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 128, 1]>>) -> tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>
      %11 = spyre.pointwise %10, %9 : (tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>, tensor<128xf16, #spyre.layout<device_size = [2, 64], stride_map = [64, 1]>>) -> tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> {
      ^bb0(%12: f32, %13: f32):
        %14 = arith.addf %12, %13 : f32
        spyre.yield %14 : f32
      }
      spyre.yield %11 : tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>
    }
    %7 = spyre.from_device %6 : tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> -> tensor<64x128xf32>
    %8 = spyre.from_device %3 : tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>> -> tensor<64x256xf32>
    func.return %7, %8 : tensor<64x128xf32>, tensor<64x256xf32>
  }
}

