// RUN: spyre-opt %S/../inputs/kernels.mlir -p 'spyre-fuse,spyre-divide-work,spyre-plan-scratchpad,convert-spyre-to-isa' | filecheck %s
// A k split (spyre-divide-work chose split <n = 1, m = 8, k = 2> with chains of 8 for the
// 128x256x512 matmul): cores 2i and 2i + 1 sum the two halves of k for the same 16 rows. The
// chains of cores sharing B tiles (same n and k range) are every other core, so B pieces go
// to core + 2. Core 2i + 1 sends its fp32 sums to core 2i's acc_in (token 2 * 32 + 2 * 2i),
// and from the second output tile on first waits for core 2i's credit (`after` token + 1); core 2i
// adds them, frees acc_in, applies the epilogue to the fp32 sums (the bias add reads the
// accumulator; only its result is rounded) and stores. Cores 2 to 12 (13) of
// the chains run one stream, their tokens per-core tables.

// CHECK:      spyre_isa.program @k0(
// CHECK:      spyre_isa.stream cores [0] {
// CHECK:        spyre_isa.ring_send lx [[[B:[0-9]+]], strides = [128, 1]] -> core + [2] lx [[[B]], strides = [128, 1]] sizes [1, 128] piece 64 notify [4]
// CHECK:        spyre_isa.pt_matmul {{.*}} -> lx [[[ACC:[0-9]+]], strides = [2, 32], f32] m = 16 n = 64 k = 128
// CHECK-NEXT:   spyre_isa.wait [64] count 1
// CHECK-NEXT:   spyre_isa.sfp_add lx [[[ACC]], strides = [32, 2], f32], lx [[[IN:[0-9]+]], strides = [32, 2], f32] -> lx [[[ACC]], strides = [32, 2], f32] sizes [1, 16]
// CHECK-NEXT:   spyre_isa.signal [65]
// CHECK-NEXT:   spyre_isa.dma_load %in2
// CHECK-NEXT:   spyre_isa.sfp_add lx [[[ACC]], strides = [32, 2], f32], lx [[[BIAS:[0-9]+]], strides = [1, 0]] -> lx [[[RES:[0-9]+]], strides = [16, 1]] sizes [1, 16]
// CHECK-NEXT:   spyre_isa.dma_store lx [[[RES]], strides = [16, 1]]
// CHECK:      spyre_isa.stream cores [1] {
// CHECK-NOT:    spyre_isa.dma_store
// CHECK:        spyre_isa.pt_matmul {{.*}} -> lx [[[ACC]], strides = [2, 32], f32] m = 16 n = 64 k = 128
// CHECK-NEXT:   spyre_isa.ring_send lx [[[ACC]], strides = [1]] -> core + [-1] lx [[[IN]], strides = [1]] sizes [32] notify [64]
// CHECK-NOT:    spyre_isa.dma_store
// CHECK:        spyre_isa.pt_matmul
// CHECK-NEXT:   spyre_isa.ring_send lx [[[ACC]], strides = [1]] -> core + [-1] lx [[[IN]], strides = [1]] sizes [32] after [65] notify [64]
// CHECK-NOT:    spyre_isa.dma_store
// CHECK:      spyre_isa.stream cores [2, 4, 6, 8, 10, 12] {
