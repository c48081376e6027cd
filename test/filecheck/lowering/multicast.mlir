// RUN: spyre-opt %S/../inputs/kernels.mlir -p 'spyre-fuse,spyre-divide-work,spyre-plan-scratchpad,convert-spyre-to-isa' | filecheck %s
// RUN: spyre-opt %S/../inputs/kernels.mlir -p 'spyre-fuse,spyre-divide-work{multicast=false},spyre-plan-scratchpad,convert-spyre-to-isa' | filecheck %s --check-prefix=OFF
// B tiles multicast down a chain of cores over the ring (spyre-divide-work chose
// split <n = 2, m = 4> with spyre.multicast = 4 for the 128x256x512 matmul): cores 0-3 share
// every B tile. Core 0 loads each tile from DDR and passes it on (ring_send ... notify 2c: a
// piece landed in core c's buffer); a middle core waits for the piece, passes it on, and once
// done with a tile frees its buffer (signal 2c+1); a sender reusing a buffer first waits for
// its successor's credit. The last core only receives.

// CHECK-LABEL: spyre_isa.program @k0
// CHECK:         spyre_isa.stream cores [0] {
// CHECK-NEXT:      spyre_isa.dma_load %in0
// CHECK-NEXT:      spyre_isa.dma_load %in1[0, {{.*}}] -> lx [[[B0:[0-9]+]], strides = [64, 1]] sizes [2, 64]
// CHECK-NEXT:      spyre_isa.ring_send lx [[[B0]], {{.*}}] -> core + [1] lx [[[B0]], {{.*}}] sizes [2, 64] notify 2
// CHECK:           spyre_isa.dma_load %in1[64, {{.*}}] -> lx [[[B1:[0-9]+]],
// CHECK-NEXT:      spyre_isa.ring_send lx [[[B1]], {{.*}} notify 2
// Third tile: the first buffer again, once core 1 has freed it.
// CHECK:           spyre_isa.dma_load %in1[128, {{.*}}] -> lx [[[B0]],
// CHECK-NEXT:      spyre_isa.wait 3 count 1
// CHECK-NEXT:      spyre_isa.ring_send lx [[[B0]], {{.*}} notify 2
// CHECK:         spyre_isa.stream cores [1] {
// CHECK-NOT:       spyre_isa.dma_load %in1
// CHECK:           spyre_isa.wait 2 count 1
// CHECK-NEXT:      spyre_isa.ring_send lx [[[B0]], {{.*}} notify 4
// CHECK:           spyre_isa.signal 3
// CHECK:         spyre_isa.stream cores [3] {
// CHECK-NOT:       spyre_isa.ring_send
// CHECK:           spyre_isa.wait 6 count 1
// CHECK-NOT:       spyre_isa.ring_send
// CHECK:           spyre_isa.signal 7
// CHECK:         spyre_isa.stream cores [4] {
// CHECK-NEXT:      spyre_isa.dma_load %in0
// CHECK-NEXT:      spyre_isa.dma_load %in1

// Without multicast every core loads its B tiles from DDR, and no ring traffic or sync appears.
// OFF-LABEL:   spyre_isa.program @k0
// OFF-NOT:       spyre_isa.ring_send
// OFF-NOT:       spyre_isa.wait
// OFF:         spyre_isa.program @k1
