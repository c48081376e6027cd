// RUN: spyre-opt %s -p convert-spyre-to-isa --verify-diagnostics --split-input-file | filecheck %s
// A transpose done in LX (spyre-onchip-relayout's `onchip` mark) whose mark does not match
// the kernels around it or the device is refused, naming the kernel and the reason: a lowering
// that trusted the mark would give a wrong answer or a traceback for a hand-written or
// inconsistent one (what the mark and its kernel say alone, their verifiers check:
// dialects/spyre/invalid.mlir). Input: transforms/spyre-onchip-relayout.mlir's
// @between_pointwise after spyre-onchip-relayout and spyre-plan-scratchpad on a target of 4
// cores (relu(relu(x).t()), x (256, 100)), one thing edited.

// Bands that are not the producer's boxes (cores 0 and 1 swapped): each core would transpose
// the other's rows from its own LX, and half the result would be misplaced.
builtin.module attributes {spyre.target = #spyre.target<cores = 4>} {
  func.func @between_pointwise(%arg0: tensor<256x100xf16>) -> tensor<100x256xf16> {
    %0 = spyre.to_device %arg0 : tensor<256x100xf16> -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
    %1 = spyre.kernel "t_k0"(%0) split <d0 = 1, d1 = 4> chunks <d0 = 1, d1 = 1> lx <in0 = 0, out = 16384, in0_1 = 32768, out_1 = 49152> resident_out <offset = 1648512> lx_budget <bytes = 1648512> : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%2: tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>):
      %3 = spyre.pointwise %2 : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
      ^bb0(%4: f32):
        %5 = arith.constant 0.000000e+00 : f32
        %6 = arith.maximumf %4, %5 : f32
        spyre.yield %6 : f32
      }
      spyre.yield %3 : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
    }
    %2 = spyre.permute %1 permutation [1, 0] : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
    %3 = spyre.kernel "t_k1"(%2) split <d0 = 4, d1 = 1> chunks <d0 = 1, d1 = 1> lx <src = 0, dst = 16384> onchip <src = 1648512, dst = 1664896, staging = 1677696, src_rows = [[64, 128], [0, 64], [128, 192], [192, 256]], dst_boxes = [[0, 1, 0, 100], [1, 2, 0, 100], [2, 3, 0, 100], [3, 4, 0, 100]]> lx_budget <bytes = 1648512> : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%4: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
      %5 = spyre.restickify %4 : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
      spyre.yield %5 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    }
    %4 = spyre.kernel "t_k2"(%3) split <d0 = 4, d1 = 1> chunks <d0 = 1, d1 = 1> lx <in0 = 0, out = 12800, in0_1 = 25600, out_1 = 38400> resident_in <input = 0, offset = 1664896> lx_budget <bytes = 1648512> : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%5: tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>):
      %6 = spyre.pointwise %5 : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
      ^bb0(%7: f32):
        %8 = arith.constant 0.000000e+00 : f32
        %9 = arith.maximumf %7, %8 : f32
        spyre.yield %9 : f32
      }
      spyre.yield %6 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    }
    %5 = spyre.from_device %4 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> -> tensor<100x256xf16>
    func.return %5 : tensor<100x256xf16>
  }
}
// CHECK: kernel t_k1: 'spyre.restickify' onchip: src_rows [[64, 128], [0, 64], [128, 192], [192, 256]] are not the boxes of the producer t_k0 (all column sticks, its rows)

// -----

// The result kept in LX, but its reader takes it from DDR, where nothing wrote it.
builtin.module attributes {spyre.target = #spyre.target<cores = 4>} {
  func.func @between_pointwise(%arg0: tensor<256x100xf16>) -> tensor<100x256xf16> {
    %0 = spyre.to_device %arg0 : tensor<256x100xf16> -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
    %1 = spyre.kernel "t_k0"(%0) split <d0 = 1, d1 = 4> chunks <d0 = 1, d1 = 1> lx <in0 = 0, out = 16384, in0_1 = 32768, out_1 = 49152> resident_out <offset = 1648512> lx_budget <bytes = 1648512> : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%2: tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>):
      %3 = spyre.pointwise %2 : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
      ^bb0(%4: f32):
        %5 = arith.constant 0.000000e+00 : f32
        %6 = arith.maximumf %4, %5 : f32
        spyre.yield %6 : f32
      }
      spyre.yield %3 : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
    }
    %2 = spyre.permute %1 permutation [1, 0] : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
    %3 = spyre.kernel "t_k1"(%2) split <d0 = 4, d1 = 1> chunks <d0 = 1, d1 = 1> lx <src = 0, dst = 16384> onchip <src = 1648512, dst = 1664896, staging = 1677696, src_rows = [[0, 64], [64, 128], [128, 192], [192, 256]], dst_boxes = [[0, 1, 0, 100], [1, 2, 0, 100], [2, 3, 0, 100], [3, 4, 0, 100]]> lx_budget <bytes = 1648512> : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%4: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
      %5 = spyre.restickify %4 : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
      spyre.yield %5 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    }
    %4 = spyre.kernel "t_k2"(%3) split <d0 = 4, d1 = 1> chunks <d0 = 1, d1 = 1> lx <in0 = 0, out = 12800, in0_1 = 25600, out_1 = 38400> lx_budget <bytes = 1648512> : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%5: tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>):
      %6 = spyre.pointwise %5 : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
      ^bb0(%7: f32):
        %8 = arith.constant 0.000000e+00 : f32
        %9 = arith.maximumf %7, %8 : f32
        spyre.yield %9 : f32
      }
      spyre.yield %6 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    }
    %5 = spyre.from_device %4 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> -> tensor<100x256xf16>
    func.return %5 : tensor<100x256xf16>
  }
}
// CHECK: kernel t_k1: 'spyre.restickify' onchip: its result (kept in LX only) is not read by exactly one pointwise kernel that takes it from LX (resident_in)

// -----

// The source kept in LX by no one: the producer stores it to DDR.
builtin.module attributes {spyre.target = #spyre.target<cores = 4>} {
  func.func @between_pointwise(%arg0: tensor<256x100xf16>) -> tensor<100x256xf16> {
    %0 = spyre.to_device %arg0 : tensor<256x100xf16> -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
    %1 = spyre.kernel "t_k0"(%0) split <d0 = 1, d1 = 4> chunks <d0 = 1, d1 = 1> lx <in0 = 0, out = 16384, in0_1 = 32768, out_1 = 49152> lx_budget <bytes = 1648512> : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%2: tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>):
      %3 = spyre.pointwise %2 : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
      ^bb0(%4: f32):
        %5 = arith.constant 0.000000e+00 : f32
        %6 = arith.maximumf %4, %5 : f32
        spyre.yield %6 : f32
      }
      spyre.yield %3 : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
    }
    %2 = spyre.permute %1 permutation [1, 0] : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
    %3 = spyre.kernel "t_k1"(%2) split <d0 = 4, d1 = 1> chunks <d0 = 1, d1 = 1> lx <src = 0, dst = 16384> onchip <src = 1648512, dst = 1664896, staging = 1677696, src_rows = [[0, 64], [64, 128], [128, 192], [192, 256]], dst_boxes = [[0, 1, 0, 100], [1, 2, 0, 100], [2, 3, 0, 100], [3, 4, 0, 100]]> lx_budget <bytes = 1648512> : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%4: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
      %5 = spyre.restickify %4 : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
      spyre.yield %5 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    }
    %4 = spyre.kernel "t_k2"(%3) split <d0 = 4, d1 = 1> chunks <d0 = 1, d1 = 1> lx <in0 = 0, out = 12800, in0_1 = 25600, out_1 = 38400> resident_in <input = 0, offset = 1664896> lx_budget <bytes = 1648512> : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%5: tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>):
      %6 = spyre.pointwise %5 : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
      ^bb0(%7: f32):
        %8 = arith.constant 0.000000e+00 : f32
        %9 = arith.maximumf %7, %8 : f32
        spyre.yield %9 : f32
      }
      spyre.yield %6 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    }
    %5 = spyre.from_device %4 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> -> tensor<100x256xf16>
    func.return %5 : tensor<100x256xf16>
  }
}
// CHECK: kernel t_k1: 'spyre.restickify' onchip: its source is not a pointwise kernel's result left in LX (resident_out)

// -----

// The bands read where the producer did not leave them.
builtin.module attributes {spyre.target = #spyre.target<cores = 4>} {
  func.func @between_pointwise(%arg0: tensor<256x100xf16>) -> tensor<100x256xf16> {
    %0 = spyre.to_device %arg0 : tensor<256x100xf16> -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
    %1 = spyre.kernel "t_k0"(%0) split <d0 = 1, d1 = 4> chunks <d0 = 1, d1 = 1> lx <in0 = 0, out = 16384, in0_1 = 32768, out_1 = 49152> resident_out <offset = 1648512> lx_budget <bytes = 1648512> : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%2: tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>):
      %3 = spyre.pointwise %2 : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
      ^bb0(%4: f32):
        %5 = arith.constant 0.000000e+00 : f32
        %6 = arith.maximumf %4, %5 : f32
        spyre.yield %6 : f32
      }
      spyre.yield %3 : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
    }
    %2 = spyre.permute %1 permutation [1, 0] : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
    %3 = spyre.kernel "t_k1"(%2) split <d0 = 4, d1 = 1> chunks <d0 = 1, d1 = 1> lx <src = 0, dst = 16384> onchip <src = 1681408, dst = 1664896, staging = 1677696, src_rows = [[0, 64], [64, 128], [128, 192], [192, 256]], dst_boxes = [[0, 1, 0, 100], [1, 2, 0, 100], [2, 3, 0, 100], [3, 4, 0, 100]]> lx_budget <bytes = 1648512> : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%4: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
      %5 = spyre.restickify %4 : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
      spyre.yield %5 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    }
    %4 = spyre.kernel "t_k2"(%3) split <d0 = 4, d1 = 1> chunks <d0 = 1, d1 = 1> lx <in0 = 0, out = 12800, in0_1 = 25600, out_1 = 38400> resident_in <input = 0, offset = 1664896> lx_budget <bytes = 1648512> : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%5: tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>):
      %6 = spyre.pointwise %5 : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
      ^bb0(%7: f32):
        %8 = arith.constant 0.000000e+00 : f32
        %9 = arith.maximumf %7, %8 : f32
        spyre.yield %9 : f32
      }
      spyre.yield %6 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    }
    %5 = spyre.from_device %4 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> -> tensor<100x256xf16>
    func.return %5 : tensor<100x256xf16>
  }
}
// CHECK: kernel t_k1: 'spyre.restickify' onchip: src = 1681408, but the producer t_k0 leaves its result at 1648512

// -----

// The boxes written where the consumer does not read them.
builtin.module attributes {spyre.target = #spyre.target<cores = 4>} {
  func.func @between_pointwise(%arg0: tensor<256x100xf16>) -> tensor<100x256xf16> {
    %0 = spyre.to_device %arg0 : tensor<256x100xf16> -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
    %1 = spyre.kernel "t_k0"(%0) split <d0 = 1, d1 = 4> chunks <d0 = 1, d1 = 1> lx <in0 = 0, out = 16384, in0_1 = 32768, out_1 = 49152> resident_out <offset = 1648512> lx_budget <bytes = 1648512> : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%2: tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>):
      %3 = spyre.pointwise %2 : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
      ^bb0(%4: f32):
        %5 = arith.constant 0.000000e+00 : f32
        %6 = arith.maximumf %4, %5 : f32
        spyre.yield %6 : f32
      }
      spyre.yield %3 : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
    }
    %2 = spyre.permute %1 permutation [1, 0] : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
    %3 = spyre.kernel "t_k1"(%2) split <d0 = 4, d1 = 1> chunks <d0 = 1, d1 = 1> lx <src = 0, dst = 16384> onchip <src = 1648512, dst = 1681408, staging = 1677696, src_rows = [[0, 64], [64, 128], [128, 192], [192, 256]], dst_boxes = [[0, 1, 0, 100], [1, 2, 0, 100], [2, 3, 0, 100], [3, 4, 0, 100]]> lx_budget <bytes = 1648512> : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%4: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
      %5 = spyre.restickify %4 : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
      spyre.yield %5 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    }
    %4 = spyre.kernel "t_k2"(%3) split <d0 = 4, d1 = 1> chunks <d0 = 1, d1 = 1> lx <in0 = 0, out = 12800, in0_1 = 25600, out_1 = 38400> resident_in <input = 0, offset = 1664896> lx_budget <bytes = 1648512> : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%5: tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>):
      %6 = spyre.pointwise %5 : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
      ^bb0(%7: f32):
        %8 = arith.constant 0.000000e+00 : f32
        %9 = arith.maximumf %7, %8 : f32
        spyre.yield %9 : f32
      }
      spyre.yield %6 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    }
    %5 = spyre.from_device %4 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> -> tensor<100x256xf16>
    func.return %5 : tensor<100x256xf16>
  }
}
// CHECK: kernel t_k1: 'spyre.restickify' onchip: dst = 1681408, but the consumer t_k2 reads input 0 at 1664896

// -----

// A kernel of the span whose budget reaches into the areas: its buffers could overwrite the
// bands while they are live.
builtin.module attributes {spyre.target = #spyre.target<cores = 4>} {
  func.func @between_pointwise(%arg0: tensor<256x100xf16>) -> tensor<100x256xf16> {
    %0 = spyre.to_device %arg0 : tensor<256x100xf16> -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
    %1 = spyre.kernel "t_k0"(%0) split <d0 = 1, d1 = 4> chunks <d0 = 1, d1 = 1> lx <in0 = 0, out = 16384, in0_1 = 32768, out_1 = 49152> resident_out <offset = 1648512> lx_budget <bytes = 1648512> : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%2: tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>):
      %3 = spyre.pointwise %2 : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
      ^bb0(%4: f32):
        %5 = arith.constant 0.000000e+00 : f32
        %6 = arith.maximumf %4, %5 : f32
        spyre.yield %6 : f32
      }
      spyre.yield %3 : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
    }
    %2 = spyre.permute %1 permutation [1, 0] : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
    %3 = spyre.kernel "t_k1"(%2) split <d0 = 4, d1 = 1> chunks <d0 = 1, d1 = 1> lx <src = 0, dst = 16384> onchip <src = 1648512, dst = 1664896, staging = 1677696, src_rows = [[0, 64], [64, 128], [128, 192], [192, 256]], dst_boxes = [[0, 1, 0, 100], [1, 2, 0, 100], [2, 3, 0, 100], [3, 4, 0, 100]]> lx_budget <bytes = 1648512> : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%4: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
      %5 = spyre.restickify %4 : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
      spyre.yield %5 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    }
    %4 = spyre.kernel "t_k2"(%3) split <d0 = 4, d1 = 1> chunks <d0 = 1, d1 = 1> lx <in0 = 0, out = 12800, in0_1 = 25600, out_1 = 38400> resident_in <input = 0, offset = 1664896> lx_budget <bytes = 1664896> : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%5: tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>):
      %6 = spyre.pointwise %5 : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
      ^bb0(%7: f32):
        %8 = arith.constant 0.000000e+00 : f32
        %9 = arith.maximumf %7, %8 : f32
        spyre.yield %9 : f32
      }
      spyre.yield %6 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    }
    %5 = spyre.from_device %4 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> -> tensor<100x256xf16>
    func.return %5 : tensor<100x256xf16>
  }
}
// CHECK: kernel t_k1: 'spyre.restickify' onchip: kernel t_k2 runs while the areas (from LX byte 1648512) are live, and its lx_budget does not keep its buffers below them

// -----

// A mark for two cores on a device of four.
builtin.module attributes {spyre.target = #spyre.target<cores = 4>} {
  func.func @between_pointwise(%arg0: tensor<256x100xf16>) -> tensor<100x256xf16> {
    %0 = spyre.to_device %arg0 : tensor<256x100xf16> -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
    %1 = spyre.kernel "t_k0"(%0) split <d0 = 1, d1 = 4> chunks <d0 = 1, d1 = 1> lx <in0 = 0, out = 16384, in0_1 = 32768, out_1 = 49152> resident_out <offset = 1648512> lx_budget <bytes = 1648512> : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%2: tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>):
      %3 = spyre.pointwise %2 : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
      ^bb0(%4: f32):
        %5 = arith.constant 0.000000e+00 : f32
        %6 = arith.maximumf %4, %5 : f32
        spyre.yield %6 : f32
      }
      spyre.yield %3 : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
    }
    %2 = spyre.permute %1 permutation [1, 0] : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
    %3 = spyre.kernel "t_k1"(%2) split <d0 = 4, d1 = 1> chunks <d0 = 1, d1 = 1> lx <src = 0, dst = 16384> onchip <src = 1648512, dst = 1681280, staging = 1707008, src_rows = [[0, 128], [128, 256]], dst_boxes = [[0, 2, 0, 100], [2, 4, 0, 100]]> lx_budget <bytes = 1648512> : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%4: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
      %5 = spyre.restickify %4 : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
      spyre.yield %5 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    }
    %4 = spyre.kernel "t_k2"(%3) split <d0 = 4, d1 = 1> chunks <d0 = 1, d1 = 1> lx <in0 = 0, out = 12800, in0_1 = 25600, out_1 = 38400> resident_in <input = 0, offset = 1664896> lx_budget <bytes = 1648512> : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%5: tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>):
      %6 = spyre.pointwise %5 : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
      ^bb0(%7: f32):
        %8 = arith.constant 0.000000e+00 : f32
        %9 = arith.maximumf %7, %8 : f32
        spyre.yield %9 : f32
      }
      spyre.yield %6 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    }
    %5 = spyre.from_device %4 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> -> tensor<100x256xf16>
    func.return %5 : tensor<100x256xf16>
  }
}
// CHECK: kernel t_k1: 'spyre.restickify' onchip: src_rows and dst_boxes are for 2 cores, the device has 4

// -----

// Areas past the device's LX (2 MiB a core).
builtin.module attributes {spyre.target = #spyre.target<cores = 4>} {
  func.func @between_pointwise(%arg0: tensor<256x100xf16>) -> tensor<100x256xf16> {
    %0 = spyre.to_device %arg0 : tensor<256x100xf16> -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
    %1 = spyre.kernel "t_k0"(%0) split <d0 = 1, d1 = 4> chunks <d0 = 1, d1 = 1> lx <in0 = 0, out = 16384, in0_1 = 32768, out_1 = 49152> resident_out <offset = 1648512> lx_budget <bytes = 1648512> : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%2: tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>):
      %3 = spyre.pointwise %2 : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
      ^bb0(%4: f32):
        %5 = arith.constant 0.000000e+00 : f32
        %6 = arith.maximumf %4, %5 : f32
        spyre.yield %6 : f32
      }
      spyre.yield %3 : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
    }
    %2 = spyre.permute %1 permutation [1, 0] : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
    %3 = spyre.kernel "t_k1"(%2) split <d0 = 4, d1 = 1> chunks <d0 = 1, d1 = 1> lx <src = 0, dst = 16384> onchip <src = 2088960, dst = 1664896, staging = 1677696, src_rows = [[0, 64], [64, 128], [128, 192], [192, 256]], dst_boxes = [[0, 1, 0, 100], [1, 2, 0, 100], [2, 3, 0, 100], [3, 4, 0, 100]]> lx_budget <bytes = 1648512> : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%4: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
      %5 = spyre.restickify %4 : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
      spyre.yield %5 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    }
    %4 = spyre.kernel "t_k2"(%3) split <d0 = 4, d1 = 1> chunks <d0 = 1, d1 = 1> lx <in0 = 0, out = 12800, in0_1 = 25600, out_1 = 38400> resident_in <input = 0, offset = 1664896> lx_budget <bytes = 1648512> : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%5: tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>):
      %6 = spyre.pointwise %5 : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
      ^bb0(%7: f32):
        %8 = arith.constant 0.000000e+00 : f32
        %9 = arith.maximumf %7, %8 : f32
        spyre.yield %9 : f32
      }
      spyre.yield %6 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    }
    %5 = spyre.from_device %4 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> -> tensor<100x256xf16>
    func.return %5 : tensor<100x256xf16>
  }
}
// CHECK: kernel t_k1: 'spyre.restickify' onchip: src = 2088960: its 128 sticks run past the 2097152 bytes of LX

// -----

// Boxes that are not the consumer's (cores 0 and 1 swapped): each core's result would be
// read by the other.
builtin.module attributes {spyre.target = #spyre.target<cores = 4>} {
  func.func @between_pointwise(%arg0: tensor<256x100xf16>) -> tensor<100x256xf16> {
    %0 = spyre.to_device %arg0 : tensor<256x100xf16> -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
    %1 = spyre.kernel "t_k0"(%0) split <d0 = 1, d1 = 4> chunks <d0 = 1, d1 = 1> lx <in0 = 0, out = 16384, in0_1 = 32768, out_1 = 49152> resident_out <offset = 1648512> lx_budget <bytes = 1648512> : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%2: tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>):
      %3 = spyre.pointwise %2 : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
      ^bb0(%4: f32):
        %5 = arith.constant 0.000000e+00 : f32
        %6 = arith.maximumf %4, %5 : f32
        spyre.yield %6 : f32
      }
      spyre.yield %3 : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
    }
    %2 = spyre.permute %1 permutation [1, 0] : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
    %3 = spyre.kernel "t_k1"(%2) split <d0 = 4, d1 = 1> chunks <d0 = 1, d1 = 1> lx <src = 0, dst = 16384> onchip <src = 1648512, dst = 1664896, staging = 1677696, src_rows = [[0, 64], [64, 128], [128, 192], [192, 256]], dst_boxes = [[1, 2, 0, 100], [0, 1, 0, 100], [2, 3, 0, 100], [3, 4, 0, 100]]> lx_budget <bytes = 1648512> : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%4: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
      %5 = spyre.restickify %4 : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
      spyre.yield %5 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    }
    %4 = spyre.kernel "t_k2"(%3) split <d0 = 4, d1 = 1> chunks <d0 = 1, d1 = 1> lx <in0 = 0, out = 12800, in0_1 = 25600, out_1 = 38400> resident_in <input = 0, offset = 1664896> lx_budget <bytes = 1648512> : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%5: tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>):
      %6 = spyre.pointwise %5 : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
      ^bb0(%7: f32):
        %8 = arith.constant 0.000000e+00 : f32
        %9 = arith.maximumf %7, %8 : f32
        spyre.yield %9 : f32
      }
      spyre.yield %6 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    }
    %5 = spyre.from_device %4 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> -> tensor<100x256xf16>
    func.return %5 : tensor<100x256xf16>
  }
}
// CHECK: kernel t_k1: 'spyre.restickify' onchip: dst_boxes [[1, 2, 0, 100], [0, 1, 0, 100], [2, 3, 0, 100], [3, 4, 0, 100]] are not the boxes of the consumer t_k2

// -----

// A consumer without a split: its boxes are not known.
builtin.module attributes {spyre.target = #spyre.target<cores = 4>} {
  func.func @between_pointwise(%arg0: tensor<256x100xf16>) -> tensor<100x256xf16> {
    %0 = spyre.to_device %arg0 : tensor<256x100xf16> -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
    %1 = spyre.kernel "t_k0"(%0) split <d0 = 1, d1 = 4> chunks <d0 = 1, d1 = 1> lx <in0 = 0, out = 16384, in0_1 = 32768, out_1 = 49152> resident_out <offset = 1648512> lx_budget <bytes = 1648512> : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%2: tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>):
      %3 = spyre.pointwise %2 : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
      ^bb0(%4: f32):
        %5 = arith.constant 0.000000e+00 : f32
        %6 = arith.maximumf %4, %5 : f32
        spyre.yield %6 : f32
      }
      spyre.yield %3 : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
    }
    %2 = spyre.permute %1 permutation [1, 0] : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
    %3 = spyre.kernel "t_k1"(%2) split <d0 = 4, d1 = 1> chunks <d0 = 1, d1 = 1> lx <src = 0, dst = 16384> onchip <src = 1648512, dst = 1664896, staging = 1677696, src_rows = [[0, 64], [64, 128], [128, 192], [192, 256]], dst_boxes = [[0, 1, 0, 100], [1, 2, 0, 100], [2, 3, 0, 100], [3, 4, 0, 100]]> lx_budget <bytes = 1648512> : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%4: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
      %5 = spyre.restickify %4 : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
      spyre.yield %5 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    }
    %4 = spyre.kernel "t_k2"(%3) chunks <d0 = 1, d1 = 1> lx <in0 = 0, out = 12800, in0_1 = 25600, out_1 = 38400> resident_in <input = 0, offset = 1664896> lx_budget <bytes = 1648512> : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%5: tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>):
      %6 = spyre.pointwise %5 : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
      ^bb0(%7: f32):
        %8 = arith.constant 0.000000e+00 : f32
        %9 = arith.maximumf %7, %8 : f32
        spyre.yield %9 : f32
      }
      spyre.yield %6 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    }
    %5 = spyre.from_device %4 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> -> tensor<100x256xf16>
    func.return %5 : tensor<100x256xf16>
  }
}
// CHECK: kernel t_k1: 'spyre.restickify' onchip: kernel t_k2 has no split (run spyre-divide-work first)

// -----

// Not the mark: a split (the consumer's, edited) with more boxes than the device has cores.
builtin.module attributes {spyre.target = #spyre.target<cores = 4>} {
  func.func @between_pointwise(%arg0: tensor<256x100xf16>) -> tensor<100x256xf16> {
    %0 = spyre.to_device %arg0 : tensor<256x100xf16> -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
    %1 = spyre.kernel "t_k0"(%0) split <d0 = 1, d1 = 4> chunks <d0 = 1, d1 = 1> lx <in0 = 0, out = 16384, in0_1 = 32768, out_1 = 49152> resident_out <offset = 1648512> lx_budget <bytes = 1648512> : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%2: tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>):
      %3 = spyre.pointwise %2 : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
      ^bb0(%4: f32):
        %5 = arith.constant 0.000000e+00 : f32
        %6 = arith.maximumf %4, %5 : f32
        spyre.yield %6 : f32
      }
      spyre.yield %3 : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
    }
    %2 = spyre.permute %1 permutation [1, 0] : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
    %3 = spyre.kernel "t_k1"(%2) split <d0 = 4, d1 = 1> chunks <d0 = 1, d1 = 1> lx <src = 0, dst = 16384> onchip <src = 1648512, dst = 1664896, staging = 1677696, src_rows = [[0, 64], [64, 128], [128, 192], [192, 256]], dst_boxes = [[0, 1, 0, 100], [1, 2, 0, 100], [2, 3, 0, 100], [3, 4, 0, 100]]> lx_budget <bytes = 1648512> : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%4: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
      %5 = spyre.restickify %4 : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
      spyre.yield %5 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    }
    %4 = spyre.kernel "t_k2"(%3) split <d0 = 4, d1 = 64> chunks <d0 = 1, d1 = 1> lx <in0 = 0, out = 12800, in0_1 = 25600, out_1 = 38400> resident_in <input = 0, offset = 1664896> lx_budget <bytes = 1648512> : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%5: tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>):
      %6 = spyre.pointwise %5 : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
      ^bb0(%7: f32):
        %8 = arith.constant 0.000000e+00 : f32
        %9 = arith.maximumf %7, %8 : f32
        spyre.yield %9 : f32
      }
      spyre.yield %6 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    }
    %5 = spyre.from_device %4 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> -> tensor<100x256xf16>
    func.return %5 : tensor<100x256xf16>
  }
}
// CHECK: kernel t_k2: split {{.*}} needs 200 cores, the device has 4

// -----

// The producer's result read by another op too: the producer leaves it in LX only, so the
// other reader would take zeros from DDR that nothing wrote (a wrong answer, no error).
builtin.module attributes {spyre.target = #spyre.target<cores = 4>} {
  func.func @between_pointwise(%arg0: tensor<256x100xf16>) -> (tensor<100x256xf16>, tensor<256x100xf16>) {
    %0 = spyre.to_device %arg0 : tensor<256x100xf16> -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
    %1 = spyre.kernel "t_k0"(%0) split <d0 = 1, d1 = 4> chunks <d0 = 1, d1 = 1> lx <in0 = 0, out = 16384, in0_1 = 32768, out_1 = 49152> resident_out <offset = 1648512> lx_budget <bytes = 1648512> : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%2: tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>):
      %3 = spyre.pointwise %2 : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
      ^bb0(%4: f32):
        %5 = arith.constant 0.000000e+00 : f32
        %6 = arith.maximumf %4, %5 : f32
        spyre.yield %6 : f32
      }
      spyre.yield %3 : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
    }
    %2 = spyre.permute %1 permutation [1, 0] : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
    %3 = spyre.kernel "t_k1"(%2) split <d0 = 4, d1 = 1> chunks <d0 = 1, d1 = 1> lx <src = 0, dst = 16384> onchip <src = 1648512, dst = 1664896, staging = 1677696, src_rows = [[0, 64], [64, 128], [128, 192], [192, 256]], dst_boxes = [[0, 1, 0, 100], [1, 2, 0, 100], [2, 3, 0, 100], [3, 4, 0, 100]]> lx_budget <bytes = 1648512> : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%4: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
      %5 = spyre.restickify %4 : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
      spyre.yield %5 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    }
    %4 = spyre.kernel "t_k2"(%3) split <d0 = 4, d1 = 1> chunks <d0 = 1, d1 = 1> lx <in0 = 0, out = 12800, in0_1 = 25600, out_1 = 38400> resident_in <input = 0, offset = 1664896> lx_budget <bytes = 1648512> : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%5: tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>):
      %6 = spyre.pointwise %5 : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
      ^bb0(%7: f32):
        %8 = arith.constant 0.000000e+00 : f32
        %9 = arith.maximumf %7, %8 : f32
        spyre.yield %9 : f32
      }
      spyre.yield %6 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    }
    %5 = spyre.from_device %4 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> -> tensor<100x256xf16>
    %extra = spyre.from_device %1 : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> -> tensor<256x100xf16>
    func.return %5, %extra : tensor<100x256xf16>, tensor<256x100xf16>
  }
}
// CHECK: kernel t_k1: 'spyre.restickify' onchip: its source, or a view of it, has another reader, which would read DDR that nothing wrote (the producer leaves its result in LX only)
