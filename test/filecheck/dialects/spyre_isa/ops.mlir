// RUN: SPYRE_ROUNDTRIP
// RUN: SPYRE_GENERIC_ROUNDTRIP

// Every spyre_isa attribute and op, pretty and generic. The DDR tensors have generic stick
// layouts (computed with spyre_mlir.layout): (4, 256) is 16 sticks, (256, 512) 2048 and
// (4, 512) 32, which bounds the DMA accesses below.

// Per-core tables print in the shortest spelling: one value bare inside an access and as
// `[5]` on its own, an arithmetic run of 3+ values as `[first step s x n]`, anything else
// as a list. Core sets print as runs; f16 (the default element type) is omitted.
"test.op"() {uniform = #spyre_isa.per_core 5, bracketed = #spyre_isa.per_core[5], list = #spyre_isa.per_core[0, 4, 9, 2], affine = #spyre_isa.per_core[0 step 4 x 4], run = #spyre_isa.per_core[0, 1, 2, 3], pair = #spyre_isa.per_core[0, 4], range = #spyre_isa.cores[0 to 3], ranges = #spyre_isa.cores[0 to 3, 8 to 11], single = #spyre_isa.cores[31], listed = #spyre_isa.cores[4, 5, 6, 9], f16 = #spyre_isa.access[[0 step 2 x 4], strides = [4, 1]], f32 = #spyre_isa.access[7, strides = [2, 2], f32], f16_explicit = #spyre_isa.access[0, strides = [], f16]} : () -> ()
// CHECK:         "test.op"() {uniform = #spyre_isa.per_core[5], bracketed = #spyre_isa.per_core[5], list = #spyre_isa.per_core[0, 4, 9, 2], affine = #spyre_isa.per_core[0 step 4 x 4], run = #spyre_isa.per_core[0 step 1 x 4], pair = #spyre_isa.per_core[0, 4], range = #spyre_isa.cores[0 to 3], ranges = #spyre_isa.cores[0 to 3, 8 to 11], single = #spyre_isa.cores[31], listed = #spyre_isa.cores[4 to 6, 9], f16 = #spyre_isa.access[[0 step 2 x 4], strides = [4, 1]], f32 = #spyre_isa.access[7, strides = [2, 2], f32], f16_explicit = #spyre_isa.access[0, strides = []]} : () -> ()
// CHECK-GENERIC: "test.op"() {uniform = #spyre_isa.per_core[5], bracketed = #spyre_isa.per_core[5], list = #spyre_isa.per_core[0, 4, 9, 2], affine = #spyre_isa.per_core[0 step 4 x 4], run = #spyre_isa.per_core[0 step 1 x 4], pair = #spyre_isa.per_core[0, 4], range = #spyre_isa.cores[0 to 3], ranges = #spyre_isa.cores[0 to 3, 8 to 11], single = #spyre_isa.cores[31], listed = #spyre_isa.cores[4 to 6, 9], f16 = #spyre_isa.access[[0 step 2 x 4], strides = [4, 1]], f32 = #spyre_isa.access[7, strides = [2, 2], f32], f16_explicit = #spyre_isa.access[0, strides = []]} : () -> ()

// -----

spyre_isa.program @k0(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, %b: tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>, %c: tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>) inputs 2 {
// CHECK:              spyre_isa.program @k0(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, %b: tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>, %c: tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>) inputs 2 {
// CHECK-GENERIC:      "spyre_isa.program"() <{sym_name = "k0", num_inputs = #builtin.int<2>}> ({
// CHECK-GENERIC-NEXT: ^bb0(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, %b: tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>, %c: tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>):
  spyre_isa.stream cores [0 to 3] {
  // CHECK-NEXT:         spyre_isa.stream cores [0 to 3] {
  // CHECK-GENERIC-NEXT: "spyre_isa.stream"() <{cores = #spyre_isa.cores[0 to 3]}> ({

    // DMA, with a listed, an affine and a uniform per-core base.
    spyre_isa.dma_load %a[[0, 4, 9, 2], strides = [1]] -> lx [0, strides = [1]] sizes [4] : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
    // CHECK-NEXT:         spyre_isa.dma_load %a[[0, 4, 9, 2], strides = [1]] -> lx [0, strides = [1]] sizes [4] : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
    // CHECK-GENERIC-NEXT: "spyre_isa.dma_load"(%a) <{ddr_access = #spyre_isa.access[[0, 4, 9, 2], strides = [1]], lx_access = #spyre_isa.access[0, strides = [1]], sizes = #spyre.ints[4]}> : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) -> ()
    spyre_isa.dma_load %b[[0 step 256 x 4], strides = [256, 1]] -> lx [4, strides = [256, 1]] sizes [4, 256] : tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>
    // CHECK-NEXT:         spyre_isa.dma_load %b[[0 step 256 x 4], strides = [256, 1]] -> lx [4, strides = [256, 1]] sizes [4, 256] : tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>
    // CHECK-GENERIC-NEXT: "spyre_isa.dma_load"(%b) <{ddr_access = #spyre_isa.access[[0 step 256 x 4], strides = [256, 1]], lx_access = #spyre_isa.access[4, strides = [256, 1]], sizes = #spyre.ints[4, 256]}> : (tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> ()
    spyre_isa.dma_load %b[1024, strides = [8, 1]] -> lx [[3000, 3001, 3002, 3003], strides = [8, 1]] sizes [128, 8] : tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>
    // CHECK-NEXT:         spyre_isa.dma_load %b[1024, strides = [8, 1]] -> lx [[3000 step 1 x 4], strides = [8, 1]] sizes [128, 8] : tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>
    // CHECK-GENERIC-NEXT: "spyre_isa.dma_load"(%b) <{ddr_access = #spyre_isa.access[1024, strides = [8, 1]], lx_access = #spyre_isa.access[[3000 step 1 x 4], strides = [8, 1]], sizes = #spyre.ints[128, 8]}> : (tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> ()

    // PT, without and with accumulation.
    spyre_isa.pt_matmul lx [0, strides = [1, 1]], lx [4, strides = [1, 256]] -> lx [1100, strides = [2, 2], f32] m = 4 n = 64 k = 256
    // CHECK-NEXT:         spyre_isa.pt_matmul lx [0, strides = [1, 1]], lx [4, strides = [1, 256]] -> lx [1100, strides = [2, 2], f32] m = 4 n = 64 k = 256
    // CHECK-GENERIC-NEXT: "spyre_isa.pt_matmul"() <{lhs = #spyre_isa.access[0, strides = [1, 1]], rhs = #spyre_isa.access[4, strides = [1, 256]], acc = #spyre_isa.access[1100, strides = [2, 2], f32], m = 4 : i64, n = 64 : i64, k = 256 : i64}> : () -> ()
    spyre_isa.pt_matmul lx [0, strides = [1, 1]], lx [[4, 5, 6, 7], strides = [1, 256]] -> lx [1100, strides = [2, 2], f32] m = 4 n = 64 k = 256 accumulate
    // CHECK-NEXT:         spyre_isa.pt_matmul lx [0, strides = [1, 1]], lx [[4 step 1 x 4], strides = [1, 256]] -> lx [1100, strides = [2, 2], f32] m = 4 n = 64 k = 256 accumulate
    // CHECK-GENERIC-NEXT: "spyre_isa.pt_matmul"() <{lhs = #spyre_isa.access[0, strides = [1, 1]], rhs = #spyre_isa.access[[4 step 1 x 4], strides = [1, 256]], acc = #spyre_isa.access[1100, strides = [2, 2], f32], m = 4 : i64, n = 64 : i64, k = 256 : i64, accumulate}> : () -> ()

    // SFP unary functions, f32 <-> f16 on the way.
    spyre_isa.sfp_copy lx [1100, strides = [2], f32] -> lx [1200, strides = [1]] sizes [4]
    // CHECK-NEXT:         spyre_isa.sfp_copy lx [1100, strides = [2], f32] -> lx [1200, strides = [1]] sizes [4]
    // CHECK-GENERIC-NEXT: "spyre_isa.sfp_copy"() <{src = #spyre_isa.access[1100, strides = [2], f32], dst = #spyre_isa.access[1200, strides = [1]], sizes = #spyre.ints[4]}> : () -> ()
    spyre_isa.sfp_neg lx [1200, strides = [1]] -> lx [1210, strides = [1]] sizes [4]
    // CHECK-NEXT:         spyre_isa.sfp_neg lx [1200, strides = [1]] -> lx [1210, strides = [1]] sizes [4]
    // CHECK-GENERIC-NEXT: "spyre_isa.sfp_neg"() <{src = #spyre_isa.access[1200, strides = [1]], dst = #spyre_isa.access[1210, strides = [1]], sizes = #spyre.ints[4]}> : () -> ()
    spyre_isa.sfp_exp lx [1200, strides = [1]] -> lx [1220, strides = [2], f32] sizes [4]
    // CHECK-NEXT:         spyre_isa.sfp_exp lx [1200, strides = [1]] -> lx [1220, strides = [2], f32] sizes [4]
    // CHECK-GENERIC-NEXT: "spyre_isa.sfp_exp"() <{src = #spyre_isa.access[1200, strides = [1]], dst = #spyre_isa.access[1220, strides = [2], f32], sizes = #spyre.ints[4]}> : () -> ()
    spyre_isa.sfp_erf lx [1220, strides = [2], f32] -> lx [1220, strides = [2], f32] sizes [4]
    // CHECK-NEXT:         spyre_isa.sfp_erf lx [1220, strides = [2], f32] -> lx [1220, strides = [2], f32] sizes [4]
    // CHECK-GENERIC-NEXT: "spyre_isa.sfp_erf"() <{src = #spyre_isa.access[1220, strides = [2], f32], dst = #spyre_isa.access[1220, strides = [2], f32], sizes = #spyre.ints[4]}> : () -> ()
    spyre_isa.sfp_tanh lx [1220, strides = [2], f32] -> lx [1210, strides = [1]] sizes [4]
    // CHECK-NEXT:         spyre_isa.sfp_tanh lx [1220, strides = [2], f32] -> lx [1210, strides = [1]] sizes [4]
    // CHECK-GENERIC-NEXT: "spyre_isa.sfp_tanh"() <{src = #spyre_isa.access[1220, strides = [2], f32], dst = #spyre_isa.access[1210, strides = [1]], sizes = #spyre.ints[4]}> : () -> ()

    // SFP binary functions: LX rhs (stride 0: broadcast) or an f32 immediate.
    spyre_isa.sfp_add lx [1200, strides = [1]], lx [1210, strides = [1]] -> lx [1230, strides = [1]] sizes [4]
    // CHECK-NEXT:         spyre_isa.sfp_add lx [1200, strides = [1]], lx [1210, strides = [1]] -> lx [1230, strides = [1]] sizes [4]
    // CHECK-GENERIC-NEXT: "spyre_isa.sfp_add"() <{lhs = #spyre_isa.access[1200, strides = [1]], rhs = #spyre_isa.access[1210, strides = [1]], dst = #spyre_isa.access[1230, strides = [1]], sizes = #spyre.ints[4]}> : () -> ()
    spyre_isa.sfp_sub lx [1200, strides = [4, 1]], lx [1210, strides = [0, 1]] -> lx [1230, strides = [4, 1]] sizes [1, 4]
    // CHECK-NEXT:         spyre_isa.sfp_sub lx [1200, strides = [4, 1]], lx [1210, strides = [0, 1]] -> lx [1230, strides = [4, 1]] sizes [1, 4]
    // CHECK-GENERIC-NEXT: "spyre_isa.sfp_sub"() <{lhs = #spyre_isa.access[1200, strides = [4, 1]], rhs = #spyre_isa.access[1210, strides = [0, 1]], dst = #spyre_isa.access[1230, strides = [4, 1]], sizes = #spyre.ints[1, 4]}> : () -> ()
    spyre_isa.sfp_mul lx [1200, strides = [1]], 5.000000e-01 -> lx [1240, strides = [2], f32] sizes [4]
    // CHECK-NEXT:         spyre_isa.sfp_mul lx [1200, strides = [1]], 5.000000e-01 -> lx [1240, strides = [2], f32] sizes [4]
    // CHECK-GENERIC-NEXT: "spyre_isa.sfp_mul"() <{lhs = #spyre_isa.access[1200, strides = [1]], imm = 5.000000e-01 : f32, dst = #spyre_isa.access[1240, strides = [2], f32], sizes = #spyre.ints[4]}> : () -> ()
    spyre_isa.sfp_div lx [1240, strides = [2], f32], -2.5 -> lx [1240, strides = [2], f32] sizes [4]
    // CHECK-NEXT:         spyre_isa.sfp_div lx [1240, strides = [2], f32], -2.500000e+00 -> lx [1240, strides = [2], f32] sizes [4]
    // CHECK-GENERIC-NEXT: "spyre_isa.sfp_div"() <{lhs = #spyre_isa.access[1240, strides = [2], f32], imm = -2.500000e+00 : f32, dst = #spyre_isa.access[1240, strides = [2], f32], sizes = #spyre.ints[4]}> : () -> ()
    spyre_isa.sfp_max lx [1240, strides = [2], f32], 0.0 -> lx [1230, strides = [1]] sizes [4]
    // CHECK-NEXT:         spyre_isa.sfp_max lx [1240, strides = [2], f32], 0.000000e+00 -> lx [1230, strides = [1]] sizes [4]
    // CHECK-GENERIC-NEXT: "spyre_isa.sfp_max"() <{lhs = #spyre_isa.access[1240, strides = [2], f32], imm = 0.000000e+00 : f32, dst = #spyre_isa.access[1230, strides = [1]], sizes = #spyre.ints[4]}> : () -> ()
    spyre_isa.sfp_min lx [1230, strides = [1]], lx [1210, strides = [1]] -> lx [1230, strides = [1]] sizes [4]
    // CHECK-NEXT:         spyre_isa.sfp_min lx [1230, strides = [1]], lx [1210, strides = [1]] -> lx [1230, strides = [1]] sizes [4]
    // CHECK-GENERIC-NEXT: "spyre_isa.sfp_min"() <{lhs = #spyre_isa.access[1230, strides = [1]], rhs = #spyre_isa.access[1210, strides = [1]], dst = #spyre_isa.access[1230, strides = [1]], sizes = #spyre.ints[4]}> : () -> ()

    // SFP stick transposes: whole 64 x 64 blocks, and a partial one.
    spyre_isa.sfp_transpose lx [4, strides = [64, 1]] -> lx [2000, strides = [64, 1]] blocks = 2 rows = 64 cols = 64
    // CHECK-NEXT:         spyre_isa.sfp_transpose lx [4, strides = [64, 1]] -> lx [2000, strides = [64, 1]] blocks = 2 rows = 64 cols = 64
    // CHECK-GENERIC-NEXT: "spyre_isa.sfp_transpose"() <{src = #spyre_isa.access[4, strides = [64, 1]], dst = #spyre_isa.access[2000, strides = [64, 1]], blocks = 2 : i64, rows = 64 : i64, cols = 64 : i64}> : () -> ()

    // Reductions over the innermost loop and the lanes; the result fills every lane.
    spyre_isa.sfp_reduce_max lx [0, strides = [1, 4]] -> lx [100, strides = [1, 0]] sizes [4, 4] tail 64
    // CHECK-NEXT:         spyre_isa.sfp_reduce_max lx [0, strides = [1, 4]] -> lx [100, strides = [1, 0]] sizes [4, 4] tail 64
    // CHECK-GENERIC-NEXT: "spyre_isa.sfp_reduce_max"() <{src = #spyre_isa.access[0, strides = [1, 4]], dst = #spyre_isa.access[100, strides = [1, 0]], sizes = #spyre.ints[4, 4], tail = 64 : i64}> : () -> ()
    spyre_isa.sfp_reduce_sum lx [0, strides = [2, 8], f32] -> lx [100, strides = [2, 0], f32] sizes [4, 4] tail 10
    // CHECK-NEXT:         spyre_isa.sfp_reduce_sum lx [0, strides = [2, 8], f32] -> lx [100, strides = [2, 0], f32] sizes [4, 4] tail 10
    // CHECK-GENERIC-NEXT: "spyre_isa.sfp_reduce_sum"() <{src = #spyre_isa.access[0, strides = [2, 8], f32], dst = #spyre_isa.access[100, strides = [2, 0], f32], sizes = #spyre.ints[4, 4], tail = 10 : i64}> : () -> ()

    // Ring: each core sends to a neighbour (a per-core shift; negative = the other way round).
    spyre_isa.ring_send lx [0, strides = [1]] -> core + [1, -1, 2, -2] lx [200, strides = [1]] sizes [16]
    // CHECK-NEXT:         spyre_isa.ring_send lx [0, strides = [1]] -> core + [1, -1, 2, -2] lx [200, strides = [1]] sizes [16]
    // CHECK-GENERIC-NEXT: "spyre_isa.ring_send"() <{src = #spyre_isa.access[0, strides = [1]], shift = #spyre_isa.per_core[1, -1, 2, -2], dst = #spyre_isa.access[200, strides = [1]], sizes = #spyre.ints[16]}> : () -> ()
    // In pieces: 3 pieces of at most 2 steps of the last dim, each after one token 5, each notifying 6.
    spyre_isa.ring_send lx [0, strides = [8, 1]] -> core + 1 lx [0, strides = [8, 1]] sizes [2, 5] piece 2 after 5 notify 6
    // CHECK-NEXT:         spyre_isa.ring_send lx [0, strides = [8, 1]] -> core + [1] lx [0, strides = [8, 1]] sizes [2, 5] piece 2 after [5] notify [6]
    // CHECK-GENERIC-NEXT: "spyre_isa.ring_send"() <{src = #spyre_isa.access[0, strides = [8, 1]], shift = #spyre_isa.per_core[1], dst = #spyre_isa.access[0, strides = [8, 1]], sizes = #spyre.ints[2, 5], piece = 2 : i64, after = #spyre_isa.per_core[5], notify = #spyre_isa.per_core[6]}> : () -> ()
    spyre_isa.sfp_transpose lx [4, strides = [64, 1]] -> lx [[2000, 2064, 2128, 2192], strides = [64, 1]] blocks = 1 rows = 4 cols = 32
    // CHECK-NEXT:         spyre_isa.sfp_transpose lx [4, strides = [64, 1]] -> lx [[2000 step 64 x 4], strides = [64, 1]] blocks = 1 rows = 4 cols = 32
    // CHECK-GENERIC-NEXT: "spyre_isa.sfp_transpose"() <{src = #spyre_isa.access[4, strides = [64, 1]], dst = #spyre_isa.access[[2000 step 64 x 4], strides = [64, 1]], blocks = 1 : i64, rows = 4 : i64, cols = 32 : i64}> : () -> ()

    // Sync.
    // Tokens are per-core tables like bases and shifts; one value serves every core.
    spyre_isa.signal 0
    // CHECK-NEXT:         spyre_isa.signal [0]
    // CHECK-GENERIC-NEXT: "spyre_isa.signal"() <{token = #spyre_isa.per_core[0]}> : () -> ()
    spyre_isa.wait [1] count 4
    // CHECK-NEXT:         spyre_isa.wait [1] count 4
    // CHECK-GENERIC-NEXT: "spyre_isa.wait"() <{token = #spyre_isa.per_core[1], count = 4 : i64}> : () -> ()
    spyre_isa.barrier
    // CHECK-NEXT:         spyre_isa.barrier
    // CHECK-GENERIC-NEXT: "spyre_isa.barrier"() : () -> ()

    spyre_isa.dma_store lx [1230, strides = [1]] -> %c[[0 step 1 x 4], strides = [4]] sizes [4] : tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
    // CHECK-NEXT:         spyre_isa.dma_store lx [1230, strides = [1]] -> %c[[0 step 1 x 4], strides = [4]] sizes [4] : tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
    // CHECK-GENERIC-NEXT: "spyre_isa.dma_store"(%c) <{ddr_access = #spyre_isa.access[[0 step 1 x 4], strides = [4]], lx_access = #spyre_isa.access[1230, strides = [1]], sizes = #spyre.ints[4]}> : (tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>) -> ()
  }
  // CHECK-NEXT:         }
  // CHECK-GENERIC-NEXT: }) : () -> ()

  // Two runs of cores, eight table entries.
  spyre_isa.stream cores [4 to 7, 12 to 15] {
  // CHECK-NEXT:         spyre_isa.stream cores [4 to 7, 12 to 15] {
  // CHECK-GENERIC-NEXT: "spyre_isa.stream"() <{cores = #spyre_isa.cores[4 to 7, 12 to 15]}> ({
    spyre_isa.dma_load %a[[0, 1, 2, 3, 4, 5, 6, 7], strides = [1]] -> lx [0, strides = [1]] sizes [8] : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
    // CHECK-NEXT:         spyre_isa.dma_load %a[[0 step 1 x 8], strides = [1]] -> lx [0, strides = [1]] sizes [8] : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
    // CHECK-GENERIC-NEXT: "spyre_isa.dma_load"(%a) <{ddr_access = #spyre_isa.access[[0 step 1 x 8], strides = [1]], lx_access = #spyre_isa.access[0, strides = [1]], sizes = #spyre.ints[8]}> : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) -> ()
    // A token per core: core 4 signals 1, core 5 signals 3, ..., core 15 signals 15.
    spyre_isa.signal [1, 3, 5, 7, 9, 11, 13, 15]
    // CHECK-NEXT:         spyre_isa.signal [1 step 2 x 8]
    // CHECK-GENERIC-NEXT: "spyre_isa.signal"() <{token = #spyre_isa.per_core[1 step 2 x 8]}> : () -> ()
    spyre_isa.barrier
    // CHECK-NEXT:         spyre_isa.barrier
    // CHECK-GENERIC-NEXT: "spyre_isa.barrier"() : () -> ()
    spyre_isa.dma_store lx [0, strides = [1]] -> %c[[4, 5, 6, 7, 20, 21, 22, 23], strides = [8]] sizes [2] : tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
    // CHECK-NEXT:         spyre_isa.dma_store lx [0, strides = [1]] -> %c[[4, 5, 6, 7, 20, 21, 22, 23], strides = [8]] sizes [2] : tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
    // CHECK-GENERIC-NEXT: "spyre_isa.dma_store"(%c) <{ddr_access = #spyre_isa.access[[4, 5, 6, 7, 20, 21, 22, 23], strides = [8]], lx_access = #spyre_isa.access[0, strides = [1]], sizes = #spyre.ints[2]}> : (tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>) -> ()
  }
  // CHECK-NEXT:         }
  // CHECK-GENERIC-NEXT: }) : () -> ()

  spyre_isa.stream cores [31] attributes {note = "waits for core 0"} {
  // CHECK-NEXT:         spyre_isa.stream cores [31] attributes {note = "waits for core 0"} {
  // CHECK-GENERIC-NEXT: "spyre_isa.stream"() <{cores = #spyre_isa.cores[31]}> ({
    spyre_isa.wait 0 count 1
    // CHECK-NEXT:         spyre_isa.wait [0] count 1
    // CHECK-GENERIC-NEXT: "spyre_isa.wait"() <{token = #spyre_isa.per_core[0], count = 1 : i64}> : () -> ()
    spyre_isa.barrier
    // CHECK-NEXT:         spyre_isa.barrier
    // CHECK-GENERIC-NEXT: "spyre_isa.barrier"() : () -> ()
  }
  // CHECK-NEXT:         }
  // CHECK-GENERIC-NEXT: }) {note = "waits for core 0"} : () -> ()
}
// CHECK-NEXT:         }
// CHECK-GENERIC-NEXT: }) : () -> ()

func.func @main(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, %b: tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>> {
// CHECK-NEXT:         func.func @main(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, %b: tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>> {
// CHECK-GENERIC-NEXT: "func.func"() <{sym_name = "main", function_type = (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>}> ({
// CHECK-GENERIC-NEXT: ^bb0(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, %b: tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>):
  %c = spyre_isa.launch @k0(%a, %b) : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
  // CHECK-NEXT:         %c = spyre_isa.launch @k0(%a, %b) : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
  // CHECK-GENERIC-NEXT: %c = "spyre_isa.launch"(%a, %b) <{program = @k0}> : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
  func.return %c : tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
}

// -----

// An empty program, a program whose only tensor is an output, program attributes.
spyre_isa.program @nothing() inputs 0 {
}
// CHECK:              spyre_isa.program @nothing() inputs 0 {
// CHECK-NEXT:         }
// CHECK-GENERIC:      "spyre_isa.program"() <{sym_name = "nothing", num_inputs = #builtin.int<0>}> ({
// CHECK-GENERIC-NEXT: ^bb0:
// CHECK-GENERIC-NEXT: }) : () -> ()

spyre_isa.program @fill(%out: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 0 attributes {note = "zeros"} {
  spyre_isa.stream cores [0] {
    spyre_isa.dma_store lx [0, strides = [1]] -> %out[0, strides = [1]] sizes [16] : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
  }
}
// CHECK-NEXT:         spyre_isa.program @fill(%out: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 0 attributes {note = "zeros"} {
// CHECK-NEXT:           spyre_isa.stream cores [0] {
// CHECK-NEXT:             spyre_isa.dma_store lx [0, strides = [1]] -> %out[0, strides = [1]] sizes [16] : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
// CHECK-NEXT:           }
// CHECK-NEXT:         }
// CHECK-GENERIC-NEXT: "spyre_isa.program"() <{sym_name = "fill", num_inputs = #builtin.int<0>}> ({
// CHECK-GENERIC-NEXT: ^bb0(%out: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>):
// CHECK-GENERIC-NEXT:   "spyre_isa.stream"() <{cores = #spyre_isa.cores[0]}> ({
// CHECK-GENERIC-NEXT:     "spyre_isa.dma_store"(%out) <{ddr_access = #spyre_isa.access[0, strides = [1]], lx_access = #spyre_isa.access[0, strides = [1]], sizes = #spyre.ints[16]}> : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) -> ()
// CHECK-GENERIC-NEXT:   }) : () -> ()
// CHECK-GENERIC-NEXT: }) {note = "zeros"} : () -> ()

func.func @launches() -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>> {
  spyre_isa.launch @nothing() : () -> ()
  %0 = spyre_isa.launch @fill() : () -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
  func.return %0 : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
}
// CHECK-NEXT:         func.func @launches() -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>> {
// CHECK-NEXT:           spyre_isa.launch @nothing() : () -> ()
// CHECK-NEXT:           %0 = spyre_isa.launch @fill() : () -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
// CHECK-NEXT:           func.return %0 : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
// CHECK-NEXT:         }
// CHECK-GENERIC-NEXT: "func.func"() <{sym_name = "launches", function_type = () -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>}> ({
// CHECK-GENERIC-NEXT:   "spyre_isa.launch"() <{program = @nothing}> : () -> ()
// CHECK-GENERIC-NEXT:   %0 = "spyre_isa.launch"() <{program = @fill}> : () -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
// CHECK-GENERIC-NEXT:   "func.return"(%0) : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) -> ()
// CHECK-GENERIC-NEXT: }) : () -> ()

// -----

// Gathers at launch-time indices, selects, reductions to the minimum, more SFP functions.
spyre_isa.program @g(%tab: tensor<50x64xf16, #spyre.layout<device_size = [1, 50, 64], stride_map = [64, 64, 1]>>, %ids: tensor<2x5xsi64>, %out: tensor<10x64xf16, #spyre.layout<device_size = [1, 10, 64], stride_map = [64, 64, 1]>>) inputs 2 {
  spyre_isa.stream cores [0 to 1] {
    spyre_isa.dma_gather %tab[%ids[[0, 5]] count 5 row_sticks 1] -> lx [0, strides = [1, 1]] : tensor<50x64xf16, #spyre.layout<device_size = [1, 50, 64], stride_map = [64, 64, 1]>>, tensor<2x5xsi64>
    spyre_isa.sfp_select lx [0, strides = [1]] ? lx [1, strides = [1]] : lx [2, strides = [1]] -> lx [3, strides = [1]] sizes [2]
    spyre_isa.sfp_reduce_min lx [0, strides = [1, 1]] -> lx [8, strides = [1, 0]] sizes [1, 5] tail 20
    spyre_isa.sfp_log lx [0, strides = [1]] -> lx [9, strides = [1]] sizes [5]
    spyre_isa.sfp_sqrt lx [0, strides = [1]] -> lx [9, strides = [1]] sizes [5]
    spyre_isa.sfp_rsqrt lx [0, strides = [1]] -> lx [9, strides = [1]] sizes [5]
    spyre_isa.sfp_sin lx [0, strides = [1]] -> lx [9, strides = [1]] sizes [5]
    spyre_isa.sfp_cos lx [0, strides = [1]] -> lx [9, strides = [1]] sizes [5]
    spyre_isa.sfp_abs lx [0, strides = [1]] -> lx [9, strides = [1]] sizes [5]
    spyre_isa.sfp_recip lx [0, strides = [1]] -> lx [9, strides = [1]] sizes [5]
    spyre_isa.dma_store lx [0, strides = [1]] -> %out[[0, 5], strides = [1]] sizes [5] : tensor<10x64xf16, #spyre.layout<device_size = [1, 10, 64], stride_map = [64, 64, 1]>>
  }
}
// CHECK:              spyre_isa.program @g(%tab: tensor<50x64xf16, #spyre.layout<device_size = [1, 50, 64], stride_map = [64, 64, 1]>>, %ids: tensor<2x5xsi64>, %out: tensor<10x64xf16, #spyre.layout<device_size = [1, 10, 64], stride_map = [64, 64, 1]>>) inputs 2 {
// CHECK-NEXT:         spyre_isa.stream cores [0 to 1] {
// CHECK-NEXT:         spyre_isa.dma_gather %tab[%ids[[0, 5]] count 5 row_sticks 1] -> lx [0, strides = [1, 1]] : tensor<50x64xf16, #spyre.layout<device_size = [1, 50, 64], stride_map = [64, 64, 1]>>, tensor<2x5xsi64>
// CHECK-NEXT:         spyre_isa.sfp_select lx [0, strides = [1]] ? lx [1, strides = [1]] : lx [2, strides = [1]] -> lx [3, strides = [1]] sizes [2]
// CHECK-NEXT:         spyre_isa.sfp_reduce_min lx [0, strides = [1, 1]] -> lx [8, strides = [1, 0]] sizes [1, 5] tail 20
// CHECK-NEXT:         spyre_isa.sfp_log lx [0, strides = [1]] -> lx [9, strides = [1]] sizes [5]
// CHECK-NEXT:         spyre_isa.sfp_sqrt lx [0, strides = [1]] -> lx [9, strides = [1]] sizes [5]
// CHECK-NEXT:         spyre_isa.sfp_rsqrt lx [0, strides = [1]] -> lx [9, strides = [1]] sizes [5]
// CHECK-NEXT:         spyre_isa.sfp_sin lx [0, strides = [1]] -> lx [9, strides = [1]] sizes [5]
// CHECK-NEXT:         spyre_isa.sfp_cos lx [0, strides = [1]] -> lx [9, strides = [1]] sizes [5]
// CHECK-NEXT:         spyre_isa.sfp_abs lx [0, strides = [1]] -> lx [9, strides = [1]] sizes [5]
// CHECK-NEXT:         spyre_isa.sfp_recip lx [0, strides = [1]] -> lx [9, strides = [1]] sizes [5]
// CHECK-NEXT:         spyre_isa.dma_store lx [0, strides = [1]] -> %out[[0, 5], strides = [1]] sizes [5] : tensor<10x64xf16, #spyre.layout<device_size = [1, 10, 64], stride_map = [64, 64, 1]>>
// CHECK-NEXT:         }
// CHECK-NEXT:         }
// CHECK-NEXT:         }
// CHECK-GENERIC:      "spyre_isa.program"() <{sym_name = "g", num_inputs = #builtin.int<2>}> ({
// CHECK-GENERIC-NEXT: ^bb0(%tab: tensor<50x64xf16, #spyre.layout<device_size = [1, 50, 64], stride_map = [64, 64, 1]>>, %ids: tensor<2x5xsi64>, %out: tensor<10x64xf16, #spyre.layout<device_size = [1, 10, 64], stride_map = [64, 64, 1]>>):
// CHECK-GENERIC-NEXT: "spyre_isa.stream"() <{cores = #spyre_isa.cores[0 to 1]}> ({
// CHECK-GENERIC-NEXT: "spyre_isa.dma_gather"(%tab, %ids) <{index_base = #spyre_isa.per_core[0, 5], count = 5 : i64, row_sticks = 1 : i64, lx_access = #spyre_isa.access[0, strides = [1, 1]]}> : (tensor<50x64xf16, #spyre.layout<device_size = [1, 50, 64], stride_map = [64, 64, 1]>>, tensor<2x5xsi64>) -> ()
// CHECK-GENERIC-NEXT: "spyre_isa.sfp_select"() <{mask = #spyre_isa.access[0, strides = [1]], lhs = #spyre_isa.access[1, strides = [1]], rhs = #spyre_isa.access[2, strides = [1]], dst = #spyre_isa.access[3, strides = [1]], sizes = #spyre.ints[2]}> : () -> ()
// CHECK-GENERIC-NEXT: "spyre_isa.sfp_reduce_min"() <{src = #spyre_isa.access[0, strides = [1, 1]], dst = #spyre_isa.access[8, strides = [1, 0]], sizes = #spyre.ints[1, 5], tail = 20 : i64}> : () -> ()
// CHECK-GENERIC-NEXT: "spyre_isa.sfp_log"() <{src = #spyre_isa.access[0, strides = [1]], dst = #spyre_isa.access[9, strides = [1]], sizes = #spyre.ints[5]}> : () -> ()
// CHECK-GENERIC-NEXT: "spyre_isa.sfp_sqrt"() <{src = #spyre_isa.access[0, strides = [1]], dst = #spyre_isa.access[9, strides = [1]], sizes = #spyre.ints[5]}> : () -> ()
// CHECK-GENERIC-NEXT: "spyre_isa.sfp_rsqrt"() <{src = #spyre_isa.access[0, strides = [1]], dst = #spyre_isa.access[9, strides = [1]], sizes = #spyre.ints[5]}> : () -> ()
// CHECK-GENERIC-NEXT: "spyre_isa.sfp_sin"() <{src = #spyre_isa.access[0, strides = [1]], dst = #spyre_isa.access[9, strides = [1]], sizes = #spyre.ints[5]}> : () -> ()
// CHECK-GENERIC-NEXT: "spyre_isa.sfp_cos"() <{src = #spyre_isa.access[0, strides = [1]], dst = #spyre_isa.access[9, strides = [1]], sizes = #spyre.ints[5]}> : () -> ()
// CHECK-GENERIC-NEXT: "spyre_isa.sfp_abs"() <{src = #spyre_isa.access[0, strides = [1]], dst = #spyre_isa.access[9, strides = [1]], sizes = #spyre.ints[5]}> : () -> ()
// CHECK-GENERIC-NEXT: "spyre_isa.sfp_recip"() <{src = #spyre_isa.access[0, strides = [1]], dst = #spyre_isa.access[9, strides = [1]], sizes = #spyre.ints[5]}> : () -> ()
// CHECK-GENERIC-NEXT: "spyre_isa.dma_store"(%out) <{ddr_access = #spyre_isa.access[[0, 5], strides = [1]], lx_access = #spyre_isa.access[0, strides = [1]], sizes = #spyre.ints[5]}> : (tensor<10x64xf16, #spyre.layout<device_size = [1, 10, 64], stride_map = [64, 64, 1]>>) -> ()
// CHECK-GENERIC-NEXT: }) : () -> ()
// CHECK-GENERIC-NEXT: }) : () -> ()
// CHECK-GENERIC-NEXT: }) : () -> ()

// -----

// A scatter of rows at launch-time indices, into the buffer of the program's input 0 (in place).
spyre_isa.program @sc(%cache: tensor<2x8x64xf16, #spyre.layout<device_size = [2, 8, 1, 1, 64], stride_map = [512, 64, 64, 1024, 1]>>, %pos: tensor<1xsi64>, %k: tensor<2x1x64xf16, #spyre.layout<device_size = [2, 1, 1, 1, 64], stride_map = [64, 64, 64, 128, 1]>>, %out: tensor<2x8x64xf16, #spyre.layout<device_size = [2, 8, 1, 1, 64], stride_map = [512, 64, 64, 1024, 1]>>) inputs 3 attributes {spyre.in_place = 0 : i64} {
  spyre_isa.stream cores [0 to 1] {
    spyre_isa.dma_load %k[[0, 1], strides = [1, 1]] -> lx [0, strides = [1, 1]] sizes [1, 1] : tensor<2x1x64xf16, #spyre.layout<device_size = [2, 1, 1, 1, 64], stride_map = [64, 64, 64, 128, 1]>>
    spyre_isa.dma_scatter lx [0, strides = [1, 1]] -> %out[[0, 1], %pos[[0]] count 1 row_sticks 1] : tensor<2x8x64xf16, #spyre.layout<device_size = [2, 8, 1, 1, 64], stride_map = [512, 64, 64, 1024, 1]>>, tensor<1xsi64>
  }
}
// CHECK:              spyre_isa.program @sc(%cache: tensor<2x8x64xf16, #spyre.layout<device_size = [2, 8, 1, 1, 64], stride_map = [512, 64, 64, 1024, 1]>>, %pos: tensor<1xsi64>, %k: tensor<2x1x64xf16, #spyre.layout<device_size = [2, 1, 1, 1, 64], stride_map = [64, 64, 64, 128, 1]>>, %out: tensor<2x8x64xf16, #spyre.layout<device_size = [2, 8, 1, 1, 64], stride_map = [512, 64, 64, 1024, 1]>>) inputs 3 attributes {spyre.in_place = 0 : i64} {
// CHECK-NEXT:         spyre_isa.stream cores [0 to 1] {
// CHECK-NEXT:         spyre_isa.dma_load %k[[0, 1], strides = [1, 1]] -> lx [0, strides = [1, 1]] sizes [1, 1] : tensor<2x1x64xf16, #spyre.layout<device_size = [2, 1, 1, 1, 64], stride_map = [64, 64, 64, 128, 1]>>
// CHECK-NEXT:         spyre_isa.dma_scatter lx [0, strides = [1, 1]] -> %out[[0, 1], %pos[[0]] count 1 row_sticks 1] : tensor<2x8x64xf16, #spyre.layout<device_size = [2, 8, 1, 1, 64], stride_map = [512, 64, 64, 1024, 1]>>, tensor<1xsi64>
// CHECK-NEXT:         }
// CHECK-NEXT:         }
// CHECK-NEXT:         }
// CHECK-GENERIC:      "spyre_isa.program"() <{sym_name = "sc", num_inputs = #builtin.int<3>}> ({
// CHECK-GENERIC-NEXT: ^bb0(%cache: tensor<2x8x64xf16, #spyre.layout<device_size = [2, 8, 1, 1, 64], stride_map = [512, 64, 64, 1024, 1]>>, %pos: tensor<1xsi64>, %k: tensor<2x1x64xf16, #spyre.layout<device_size = [2, 1, 1, 1, 64], stride_map = [64, 64, 64, 128, 1]>>, %out: tensor<2x8x64xf16, #spyre.layout<device_size = [2, 8, 1, 1, 64], stride_map = [512, 64, 64, 1024, 1]>>):
// CHECK-GENERIC-NEXT: "spyre_isa.stream"() <{cores = #spyre_isa.cores[0 to 1]}> ({
// CHECK-GENERIC-NEXT: "spyre_isa.dma_load"(%k) <{ddr_access = #spyre_isa.access[[0, 1], strides = [1, 1]], lx_access = #spyre_isa.access[0, strides = [1, 1]], sizes = #spyre.ints[1, 1]}> : (tensor<2x1x64xf16, #spyre.layout<device_size = [2, 1, 1, 1, 64], stride_map = [64, 64, 64, 128, 1]>>) -> ()
// CHECK-GENERIC-NEXT: "spyre_isa.dma_scatter"(%out, %pos) <{lx_access = #spyre_isa.access[0, strides = [1, 1]], outer = #spyre_isa.per_core[0, 1], index_base = #spyre_isa.per_core[0], count = 1 : i64, row_sticks = 1 : i64}> : (tensor<2x8x64xf16, #spyre.layout<device_size = [2, 8, 1, 1, 64], stride_map = [512, 64, 64, 1024, 1]>>, tensor<1xsi64>) -> ()
// CHECK-GENERIC-NEXT: }) : () -> ()
// CHECK-GENERIC-NEXT: }) {spyre.in_place = 0 : i64} : () -> ()
// CHECK-GENERIC-NEXT: }) : () -> ()

// -----

// A gather of one stick of each row from a per-core first stick (`from_stick`: one KV head of
// a cache row of two heads).
spyre_isa.program @heads(%tab: tensor<50x128xf16, #spyre.layout<device_size = [50, 2, 64], stride_map = [128, 64, 1]>>, %ids: tensor<2x5xsi64>, %out: tensor<10x64xf16, #spyre.layout<device_size = [1, 10, 64], stride_map = [64, 64, 1]>>) inputs 2 {
  spyre_isa.stream cores [0 to 1] {
    spyre_isa.dma_gather %tab[%ids[[0, 5]] count 5 row_sticks 1 from_stick [0, 1]] -> lx [0, strides = [1, 1]] : tensor<50x128xf16, #spyre.layout<device_size = [50, 2, 64], stride_map = [128, 64, 1]>>, tensor<2x5xsi64>
  }
}
// CHECK:              spyre_isa.dma_gather %tab[%ids[[0, 5]] count 5 row_sticks 1 from_stick [0, 1]] -> lx [0, strides = [1, 1]]
// CHECK-GENERIC:      "spyre_isa.dma_gather"(%tab, %ids) <{index_base = #spyre_isa.per_core[0, 5], count = 5 : i64, row_sticks = 1 : i64, first_stick = #spyre_isa.per_core[0, 1], lx_access = #spyre_isa.access[0, strides = [1, 1]]}>
