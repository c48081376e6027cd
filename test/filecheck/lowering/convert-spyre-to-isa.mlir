// RUN: spyre-opt %S/../inputs/kernels.mlir -p 'spyre-fuse{epilogues=false},spyre-divide-work{strategy=even},spyre-plan-scratchpad{double_buffer=false cost=false},convert-spyre-to-isa' | filecheck %s
// RUN: spyre-opt %S/../inputs/kernels.mlir -p spyre-fuse,convert-spyre-to-isa --verify-diagnostics | filecheck %s --check-prefix=UNPLANNED
// Every planned kernel becomes a program of SPMD streams (addresses per core are tables, in
// sticks); the kernel op becomes a launch. A ragged last part gets a stream of its own.

// Matmul: A tile (4 K-sticks x 8 rows), B tile (4 N-sticks x 256 rows), PT into fp32 partial
// sums, one SFP copy rounds them into the output tile, DMA out.
// CHECK-LABEL: spyre_isa.program @k0(%in0: {{.*}}, %in1: {{.*}}, %out: {{.*}}) inputs 2 {
// CHECK-NEXT:    spyre_isa.stream cores [0 to 31] {
// CHECK-NEXT:      spyre_isa.dma_load %in0[[0, 8, 16, {{.*}}, 120, 0, 8, {{.*}}], strides = [128, 1]] -> lx [0, strides = [8, 1]] sizes [4, 8]
// CHECK-NEXT:      spyre_isa.dma_load %in1[[0, {{.*}}, 0, 1024, {{.*}}, 1024], strides = [256, 1]] -> lx [32, strides = [256, 1]] sizes [4, 256]
// CHECK-NEXT:      spyre_isa.pt_matmul lx [0, strides = [1, 8]], lx [32, strides = [1, 256]] -> lx [1056, strides = [2, 16], f32] m = 8 n = 256 k = 256
// CHECK-NEXT:      spyre_isa.sfp_copy lx [1056, strides = [16, 2], f32] -> lx [1120, strides = [8, 1]] sizes [4, 8]
// CHECK-NEXT:      spyre_isa.dma_store lx [1120, strides = [8, 1]] -> %out[[0, 8, {{.*}}, 512, 520, {{.*}}], strides = [128, 1]] sizes [4, 8]
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// Bias add: the bias tile is read with stride 0 along the rows it broadcasts over.
// CHECK-LABEL: spyre_isa.program @k1
// CHECK:         spyre_isa.dma_load %in1[[0, {{.*}}, 4, {{.*}}], strides = [1]] -> lx [32, strides = [1]] sizes [4]
// CHECK-NEXT:    spyre_isa.sfp_add lx [0, strides = [8, 1]], lx [32, strides = [1, 0]] -> lx [36, strides = [8, 1]] sizes [4, 8]

// ReLU: the zero is an immediate.
// CHECK-LABEL: spyre_isa.program @k2
// CHECK:         spyre_isa.sfp_max lx [0, strides = [4, 1]], 0.000000e+00 -> lx [16, strides = [4, 1]] sizes [4, 4]

// Transpose (200, 100): 64 x 64 blocks; the last block along each dim is short (rows along
// the old stick dim: 100 = 64 + 36; columns: 200 = 3 x 64 + 8), so four streams.
// CHECK-LABEL: spyre_isa.program @k3
// CHECK:         spyre_isa.stream cores [0 to 2] {
// CHECK-NEXT:      spyre_isa.dma_load %in0[[0 step 100 x 3], strides = [100, 64, 1]] -> lx [0, strides = [64, 64, 1]] sizes [1, 1, 64]
// CHECK-NEXT:      spyre_isa.sfp_transpose lx [0, strides = [64, 1]] -> lx [64, strides = [64, 1]] blocks = 1 rows = 64 cols = 64
// CHECK-NEXT:      spyre_isa.dma_store lx [64, strides = [64, 64, 1]] -> %out[[0 step 64 x 3], strides = [64, 200, 1]] sizes [1, 1, 64]
// CHECK:         spyre_isa.stream cores [3] {
// CHECK:           blocks = 1 rows = 64 cols = 8
// CHECK:         spyre_isa.stream cores [4 to 6] {
// CHECK:           blocks = 1 rows = 36 cols = 64
// CHECK:         spyre_isa.stream cores [7] {
// CHECK:           blocks = 1 rows = 36 cols = 8

// ReLU on (200, 100): 28 cores take 7 rows, core 28 the last 4.
// CHECK-LABEL: spyre_isa.program @k4
// CHECK:         spyre_isa.stream cores [0 to 27] {
// CHECK-NEXT:      spyre_isa.dma_load %in0[[0 step 7 x 28], strides = [200, 1]] -> lx [0, strides = [7, 1]] sizes [2, 7]
// CHECK:         spyre_isa.stream cores [28] {
// CHECK-NEXT:      spyre_isa.dma_load %in0[196, strides = [200, 1]] -> lx [0, strides = [4, 1]] sizes [2, 4]

// CHECK-LABEL: func.func @kernels
// CHECK:         %[[K0:.*]] = spyre_isa.launch @k0(%{{.*}}, %{{.*}})
// CHECK-NEXT:    spyre_isa.launch @k1(%[[K0]], %{{.*}})
// CHECK-NOT:     spyre.kernel

// UNPLANNED: kernel k0: run spyre-divide-work and spyre-plan-scratchpad first (split, chunks and lx are needed)
