// RUN: spyre-opt %s -p convert-spyre-to-isa | filecheck %s --check-prefixes=ISA,RING
// Input: transforms/spyre-onchip-relayout.mlir's @between_pointwise (relu(relu(x).t()),
// x (256, 100)) after spyre-onchip-relayout and spyre-plan-scratchpad on a target of 4 cores; in
// @between_pointwise_ring the pass ran with align_consumer=false. The marks become LX
// addresses: the producer writes its bands there, the relayout transposes them in LX, the
// consumer reads them there.

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
// RING-LABEL:  spyre_isa.program @r_k1
// RING:        spyre_isa.sfp_transpose {{.*}} blocks = 2 rows = 64 cols = 64
// RING-NEXT:   spyre_isa.sfp_copy
// RING-NEXT:   spyre_isa.ring_send {{.*}} core + [1]
// RING-NEXT:   spyre_isa.ring_send {{.*}} core + [2]
// RING-NEXT:   spyre_isa.ring_send {{.*}} core + [-1]
// RING-NEXT:   spyre_isa.barrier
// RING:        spyre_isa.program @r_k2

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
  func.func @between_pointwise_ring(%arg0: tensor<256x100xf16>) -> tensor<100x256xf16> {
    %0 = spyre.to_device %arg0 : tensor<256x100xf16> -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
    %1 = spyre.kernel "r_k0"(%0) split <d0 = 1, d1 = 4> chunks <d0 = 1, d1 = 1> lx <in0 = 0, out = 16384, in0_1 = 32768, out_1 = 49152> resident_out <offset = 1632128> lx_budget <bytes = 1632128> : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
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
    %3 = spyre.kernel "r_k1"(%2) split <d0 = 4, d1 = 1> chunks <d0 = 1, d1 = 1> lx <src = 0, dst = 16384> onchip <src = 1632128, dst = 1648512, staging = 1661312, src_rows = [[0, 64], [64, 128], [128, 192], [192, 256]], dst_boxes = [[0, 4, 0, 25], [0, 4, 25, 50], [0, 4, 50, 75], [0, 4, 75, 100]]> lx_budget <bytes = 1632128> : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%4: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
      %5 = spyre.restickify %4 : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
      spyre.yield %5 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    }
    %4 = spyre.kernel "r_k2"(%3) split <d0 = 1, d1 = 4> chunks <d0 = 1, d1 = 1> lx <in0 = 0, out = 12800, in0_1 = 25600, out_1 = 38400> resident_in <input = 0, offset = 1648512> lx_budget <bytes = 1632128> : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
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
