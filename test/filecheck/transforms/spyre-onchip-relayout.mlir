// RUN: spyre-opt %s -p spyre-onchip-relayout --print-remarks 2>&1 | filecheck %s
// Input: spyre-fuse's output for relu(relu(x).t()) and relu(x).t() @ w, x (256, 100) f16,
// split by spyre-divide-work for a target of 4 cores; in @under_a_resident_block the relayout kernel has a
// budget (as spyre-resident-chains leaves one). lowering/onchip-relayout.mlir lowers the marks.
// A transpose between two pointwise kernels is done in LX: the producer keeps its 64-row
// bands, the relayout transposes them there, the consumer reads them there (no DDR round trip).
// Into a matmul it stays a DDR kernel, and a remark says why.

// CHECK-DAG: remark: t_k1: restickify done on chip (LX and ring), no DDR round trip
// CHECK-DAG: remark: m_k1: restickify stays in DDR: its result is not read by exactly one pointwise kernel
// CHECK-LABEL: func.func @between_pointwise
// The producer: bands of 64 rows, kept in LX at the top of the planner's budget.
// CHECK:       spyre.kernel "t_k0"(%{{.*}}) split <d0 = 1, d1 = 4> resident_out <offset = [[SRC:[0-9]+]]> lx_budget <bytes = [[SRC]]>
// CHECK:       spyre.kernel "t_k1"(%{{.*}}) split <{{.*}}> onchip <src = [[SRC]], dst = [[DST:[0-9]+]], staging = {{[0-9]+}}, src_rows = {{\[}}[0, 64], [64, 128], [128, 192], [192, 256]], dst_boxes = {{\[}}[0, 1, 0, 100], [1, 2, 0, 100], [2, 3, 0, 100], [3, 4, 0, 100]]> lx_budget <bytes = [[SRC]]>
// The consumer is split along the result's sticks: core k's box is the transpose of its band.
// CHECK:       spyre.kernel "t_k2"(%{{.*}}) split <d0 = 4, d1 = 1> resident_in <input = 0, offset = [[DST]]> lx_budget <bytes = [[SRC]]>
// CHECK-LABEL: func.func @under_a_resident_block
// A kernel of the span already has a budget (spyre-resident-chains keeps a block above it):
// the bands go below it (999936 - 29184 bytes), not at the top of the planner's budget.
// CHECK:       spyre.kernel "u_k0"(%{{.*}}) split <d0 = 1, d1 = 4> resident_out <offset = 970752> lx_budget <bytes = 970752>
// CHECK:       spyre.kernel "u_k1"(%{{.*}}) split <{{.*}}> onchip <src = 970752, dst = 987136,
// CHECK-SAME:  lx_budget <bytes = 970752>
// CHECK:       spyre.kernel "u_k2"(%{{.*}}) split <d0 = 4, d1 = 1> resident_in <input = 0, offset = 987136> lx_budget <bytes = 970752>
// CHECK-LABEL: func.func @into_matmul
// CHECK-NOT:   onchip <

builtin.module attributes {spyre.target = #spyre.target<cores = 4>} {
  func.func @between_pointwise(%arg0: tensor<256x100xf16>) -> tensor<100x256xf16> {
    %0 = spyre.to_device %arg0 : tensor<256x100xf16> -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
    %1 = spyre.kernel "t_k0"(%0) split <d0 = 1, d1 = 4> : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
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
    %3 = spyre.kernel "t_k1"(%2) split <d0 = 4, d1 = 1> : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%4: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
      %5 = spyre.restickify %4 : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
      spyre.yield %5 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    }
    %4 = spyre.kernel "t_k2"(%3) split <d0 = 1, d1 = 4> : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
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
  func.func @under_a_resident_block(%arg0: tensor<256x100xf16>) -> tensor<100x256xf16> {
    %0 = spyre.to_device %arg0 : tensor<256x100xf16> -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
    %1 = spyre.kernel "u_k0"(%0) split <d0 = 1, d1 = 4> : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
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
    %3 = spyre.kernel "u_k1"(%2) split <d0 = 4, d1 = 1> lx_budget <bytes = 999936> : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%4: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
      %5 = spyre.restickify %4 : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
      spyre.yield %5 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    }
    %4 = spyre.kernel "u_k2"(%3) split <d0 = 1, d1 = 4> : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
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
  func.func @into_matmul(%arg0: tensor<256x100xf16>, %arg1: tensor<256x64xf16>) -> tensor<100x64xf16> {
    %0 = spyre.to_device %arg0 : tensor<256x100xf16> -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
    %1 = spyre.kernel "m_k0"(%0) split <d0 = 1, d1 = 4> : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
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
    %3 = spyre.to_device %arg1 : tensor<256x64xf16> -> tensor<256x64xf16, #spyre.layout<device_size = [1, 256, 64], stride_map = [64, 64, 1]>>
    %4 = spyre.kernel "m_k1"(%2) split <d0 = 4, d1 = 1> : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%5: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
      %6 = spyre.restickify %5 : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
      spyre.yield %6 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    }
    %5 = spyre.kernel "m_k2"(%4, %3) split <n = 1, m = 2, k = 2> multicast <chain = 2> : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>, tensor<256x64xf16, #spyre.layout<device_size = [1, 256, 64], stride_map = [64, 64, 1]>>) -> tensor<100x64xf16, #spyre.layout<device_size = [1, 100, 64], stride_map = [64, 64, 1]>> {
    ^bb0(%6: tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>, %7: tensor<256x64xf16, #spyre.layout<device_size = [1, 256, 64], stride_map = [64, 64, 1]>>):
      %8 = spyre.matmul %6, %7 : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>, tensor<256x64xf16, #spyre.layout<device_size = [1, 256, 64], stride_map = [64, 64, 1]>>) -> tensor<100x64xf16, #spyre.layout<device_size = [1, 100, 64], stride_map = [64, 64, 1]>>
      spyre.yield %8 : tensor<100x64xf16, #spyre.layout<device_size = [1, 100, 64], stride_map = [64, 64, 1]>>
    }
    %6 = spyre.from_device %5 : tensor<100x64xf16, #spyre.layout<device_size = [1, 100, 64], stride_map = [64, 64, 1]>> -> tensor<100x64xf16>
    func.return %6 : tensor<100x64xf16>
  }
}

