// RUN: spyre-opt %s -p convert-spyre-to-isa | filecheck %s
// Input: spyre-fuse's output for x.sum(-1) + b, x (3, 9, 70), b (3, 9), split by
// spyre-divide-work and planned by spyre-plan-scratchpad. The sum leaves one
// element per stick (a splat: every lane); the add reads those elements along sticks, so a
// restickify gathers them: lane 0 of 9 consecutive source sticks -> the 9 lanes of one stick,
// an SFP transpose of a 9-stick block that writes one stick (lanes 9..63 read as 0: padding).

// CHECK-LABEL: spyre_isa.program @g1_k1
// CHECK:         spyre_isa.dma_load %in0[{{.*}}, strides = [0, 1, 3]] -> lx [0, strides = [9, 9, 1]] sizes [1, 1, 9]
// CHECK-NEXT:    spyre_isa.sfp_transpose lx [0, strides = [9, 1]] -> lx [[[DST:[0-9]+]], strides = [1, 1]] blocks = 1 rows = 9 cols = 1
// CHECK-NEXT:    spyre_isa.dma_store lx [[[DST]], strides = [1, 1]] -> %out
// CHECK-NEXT:  }

builtin.module {
  func.func @main(%arg0: tensor<3x9x70xf32>, %arg1: tensor<3x9xf32>) -> tensor<3x9xf32> {
    %0 = spyre.to_device %arg0 : tensor<3x9x70xf32> -> tensor<3x9x70xf16, #spyre.layout<device_size = [9, 2, 3, 64], stride_map = [70, 64, 630, 1]>>
    %1 = spyre.kernel "g1_k0"(%0) split <d0 = 9, d2 = 3, r = 1> chunks <d0 = 1, d2 = 1, r = 1> lx <in = 0, out = 256, acc = 384> : (tensor<3x9x70xf16, #spyre.layout<device_size = [9, 2, 3, 64], stride_map = [70, 64, 630, 1]>>) -> tensor<3x9x1xf16, #spyre.layout<device_size = [9, 1, 3, 64], stride_map = [1, 64, 9, 0]>> {
    ^bb0(%2: tensor<3x9x70xf16, #spyre.layout<device_size = [9, 2, 3, 64], stride_map = [70, 64, 630, 1]>>):
      %3 = spyre.reduce "sum" %2 dim 2 : tensor<3x9x70xf16, #spyre.layout<device_size = [9, 2, 3, 64], stride_map = [70, 64, 630, 1]>> -> tensor<3x9x1xf16, #spyre.layout<device_size = [9, 1, 3, 64], stride_map = [1, 64, 9, 0]>>
      spyre.yield %3 : tensor<3x9x1xf16, #spyre.layout<device_size = [9, 1, 3, 64], stride_map = [1, 64, 9, 0]>>
    }
    %2 = spyre.reshape %1 : tensor<3x9x1xf16, #spyre.layout<device_size = [9, 1, 3, 64], stride_map = [1, 64, 9, 0]>> -> tensor<3x9xf16, #spyre.layout<device_size = [9, 1, 3, 64], stride_map = [1, 64, 9, 0]>>
    %3 = spyre.to_device %arg1 : tensor<3x9xf32> -> tensor<3x9xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 9, 1]>>
    %4 = spyre.kernel "g1_k1"(%2) split <d0 = 1, d1 = 3> chunks <d0 = 1, d1 = 1> lx <src = 0, dst = 8192> : (tensor<3x9xf16, #spyre.layout<device_size = [9, 1, 3, 64], stride_map = [1, 64, 9, 0]>>) -> tensor<3x9xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 9, 1]>> {
    ^bb0(%5: tensor<3x9xf16, #spyre.layout<device_size = [9, 1, 3, 64], stride_map = [1, 64, 9, 0]>>):
      %6 = spyre.restickify %5 : tensor<3x9xf16, #spyre.layout<device_size = [9, 1, 3, 64], stride_map = [1, 64, 9, 0]>> -> tensor<3x9xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 9, 1]>>
      spyre.yield %6 : tensor<3x9xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 9, 1]>>
    }
    %5 = spyre.kernel "g1_k2"(%4, %3) split <d0 = 1, d1 = 3> chunks <d0 = 1, d1 = 1> lx <in0 = 0, in1 = 128, out = 256, in0_1 = 384, in1_1 = 512, out_1 = 640> : (tensor<3x9xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 9, 1]>>, tensor<3x9xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 9, 1]>>) -> tensor<3x9xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 9, 1]>> {
    ^bb0(%6: tensor<3x9xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 9, 1]>>, %7: tensor<3x9xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 9, 1]>>):
      %8 = spyre.pointwise %6, %7 : (tensor<3x9xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 9, 1]>>, tensor<3x9xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 9, 1]>>) -> tensor<3x9xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 9, 1]>> {
      ^bb0(%9: f32, %10: f32):
        %11 = arith.addf %9, %10 : f32
        spyre.yield %11 : f32
      }
      spyre.yield %8 : tensor<3x9xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 9, 1]>>
    }
    %6 = spyre.from_device %5 : tensor<3x9xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 9, 1]>> -> tensor<3x9xf32>
    func.return %6 : tensor<3x9xf32>
  }
}

