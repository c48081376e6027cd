// RUN: spyre-opt %S/../inputs/kernels.mlir -p 'spyre-fuse,spyre-divide-work{split_k=false},spyre-plan-scratchpad,convert-spyre-to-isa' | filecheck %s
// RUN: spyre-opt %S/../inputs/kernels.mlir -p 'spyre-fuse,spyre-divide-work{multicast=false split_k=false},spyre-plan-scratchpad,convert-spyre-to-isa' | filecheck %s --check-prefix=OFF
// B tiles multicast down a chain of cores over the ring (spyre-divide-work chose
// split <n = 1, m = 8> with spyre.multicast = 8 for the 128x256x512 matmul): cores 0-7 share
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
// OFF-LABEL:   spyre_isa.program @k0
// OFF-NOT:       spyre_isa.ring_send
// OFF-NOT:       spyre_isa.wait
// OFF:         spyre_isa.program @k1
