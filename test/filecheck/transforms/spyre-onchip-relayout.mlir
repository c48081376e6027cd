// RUN: spyre-opt %s -p 'spyre-divide-work{cores=4},spyre-onchip-relayout{cores=4}' --print-remarks 2>&1 | filecheck %s
// RUN: spyre-opt %s -p 'spyre-divide-work{cores=4},spyre-onchip-relayout{cores=4},spyre-plan-scratchpad{cores=4},convert-spyre-to-isa{cores=4}' | filecheck %s --check-prefix=ISA
// RUN: spyre-opt %s -p 'spyre-divide-work{cores=4},spyre-onchip-relayout{cores=4 align_consumer=false},spyre-plan-scratchpad{cores=4},convert-spyre-to-isa{cores=4}' | filecheck %s --check-prefix=RING
// Input: spyre-fuse's output for relu(relu(x).t()) and relu(x).t() @ w, x (256, 100) f16.
// A transpose between two pointwise kernels is done in LX: the producer keeps its 64-row
// bands, the relayout transposes them there, the consumer reads them there (no DDR round trip).
// Into a matmul it stays a DDR kernel, and a remark says why.

// CHECK-DAG: remark: t_k1: restickify done on chip (LX and ring), no DDR round trip
// CHECK-DAG: remark: m_k1: restickify stays in DDR: its result is not read by exactly one pointwise kernel
// CHECK-LABEL: func.func @between_pointwise
// The producer: bands of 64 rows, kept in LX at the top of the planner's budget.
// CHECK:       spyre.kernel "t_k0"(%{{.*}}) split <d0 = 1, d1 = 4> {spyre.resident_out = [[SRC:[0-9]+]] : i64, spyre.lx_budget = [[SRC]] : i64}
// CHECK:       spyre.kernel "t_k1"(%{{.*}}) split <{{.*}}> {spyre.onchip = {src = [[SRC]] : i64, dst = [[DST:[0-9]+]] : i64, staging = {{[0-9]+}} : i64, src_rows = array<i64: 0, 64, 64, 128, 128, 192, 192, 256>, dst_boxes = array<i64: 0, 1, 0, 100, 1, 2, 0, 100, 2, 3, 0, 100, 3, 4, 0, 100>}
// The consumer is split along the result's sticks: core k's box is the transpose of its band.
// CHECK:       spyre.kernel "t_k2"(%{{.*}}) split <d0 = 4, d1 = 1> {spyre.resident_in = array<i64: 0, [[DST]]>, spyre.lx_budget = [[SRC]] : i64}
// CHECK-LABEL: func.func @under_a_resident_block
// A kernel of the span already has a budget (spyre-resident-chains keeps a block above it):
// the bands go below it (999936 - 29184 bytes), not at the top of the planner's budget.
// CHECK:       spyre.kernel "u_k0"(%{{.*}}) split <d0 = 1, d1 = 4> {spyre.resident_out = 970752 : i64, spyre.lx_budget = 970752 : i64}
// CHECK:       spyre.kernel "u_k1"(%{{.*}}) split <{{.*}}> {spyre.lx_budget = 970752 : i64, spyre.onchip = {src = 970752 : i64, dst = 987136 : i64,
// CHECK:       spyre.kernel "u_k2"(%{{.*}}) split <d0 = 4, d1 = 1> {spyre.resident_in = array<i64: 0, 987136>, spyre.lx_budget = 970752 : i64}
// CHECK-LABEL: func.func @into_matmul
// CHECK-NOT:   spyre.onchip

// ISA-LABEL:   spyre_isa.program @t_k0
// ISA-SAME:    spyre.resident_out
// ISA-NOT:     spyre_isa.dma_store
// ISA:         spyre_isa.program @t_k1
// ISA-SAME:    spyre.resident_in = array<i64: {{[0-9]+}}, {{[0-9]+}}>, spyre.resident_out
// Every block stays on its core: one transpose of 64-column blocks, one of the 36-column rest.
// ISA-NOT:     spyre_isa.dma
// ISA:         spyre_isa.sfp_transpose {{.*}} blocks = 1 rows = 64 cols = 64
// ISA-NEXT:    spyre_isa.sfp_transpose {{.*}} blocks = 1 rows = 64 cols = 36
// ISA-NOT:     spyre_isa.ring_send
// ISA-NOT:     spyre_isa.dma
// ISA:         spyre_isa.program @t_k2
// ISA-SAME:    spyre.resident_in
// ISA-NOT:     spyre_isa.dma_load
// ISA:         spyre_isa.dma_store

// Without alignment the consumer keeps its own split (25 result rows per core): each core
// stages its transposed band and sends every other core its rows over the ring.
// RING-LABEL:  spyre_isa.program @t_k1
// RING:        spyre_isa.sfp_transpose {{.*}} blocks = 2 rows = 64 cols = 64
// RING-NEXT:   spyre_isa.sfp_copy
// RING-NEXT:   spyre_isa.ring_send {{.*}} core + [1]
// RING-NEXT:   spyre_isa.ring_send {{.*}} core + [2]
// RING-NEXT:   spyre_isa.ring_send {{.*}} core + [-1]
// RING-NEXT:   spyre_isa.barrier
// RING:        spyre_isa.program @t_k2

builtin.module {
  func.func @between_pointwise(%arg0: tensor<256x100xf16>) -> tensor<100x256xf16> {
    %0 = spyre.to_device %arg0 : tensor<256x100xf16> -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
    %1 = spyre.kernel "t_k0"(%0) : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
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
    %3 = spyre.kernel "t_k1"(%2) : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%4: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
      %5 = spyre.restickify %4 : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
      spyre.yield %5 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    }
    %4 = spyre.kernel "t_k2"(%3) : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
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
    %1 = spyre.kernel "u_k0"(%0) : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
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
    %3 = spyre.kernel "u_k1"(%2) {spyre.lx_budget = 999936 : i64} : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%4: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
      %5 = spyre.restickify %4 : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
      spyre.yield %5 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    }
    %4 = spyre.kernel "u_k2"(%3) : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
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
    %1 = spyre.kernel "m_k0"(%0) : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
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
    %4 = spyre.kernel "m_k1"(%2) : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%5: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
      %6 = spyre.restickify %5 : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
      spyre.yield %6 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    }
    %5 = spyre.kernel "m_k2"(%4, %3) : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>, tensor<256x64xf16, #spyre.layout<device_size = [1, 256, 64], stride_map = [64, 64, 1]>>) -> tensor<100x64xf16, #spyre.layout<device_size = [1, 100, 64], stride_map = [64, 64, 1]>> {
    ^bb0(%6: tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>, %7: tensor<256x64xf16, #spyre.layout<device_size = [1, 256, 64], stride_map = [64, 64, 1]>>):
      %8 = spyre.matmul %6, %7 : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>, tensor<256x64xf16, #spyre.layout<device_size = [1, 256, 64], stride_map = [64, 64, 1]>>) -> tensor<100x64xf16, #spyre.layout<device_size = [1, 100, 64], stride_map = [64, 64, 1]>>
      spyre.yield %8 : tensor<100x64xf16, #spyre.layout<device_size = [1, 100, 64], stride_map = [64, 64, 1]>>
    }
    %6 = spyre.from_device %5 : tensor<100x64xf16, #spyre.layout<device_size = [1, 100, 64], stride_map = [64, 64, 1]>> -> tensor<100x64xf16>
    func.return %6 : tensor<100x64xf16>
  }
}
