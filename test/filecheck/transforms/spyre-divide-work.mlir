// RUN: spyre-opt %S/../inputs/kernels.mlir -p 'spyre-fuse{epilogues=false},spyre-divide-work{strategy=even}' | filecheck %s
// RUN: spyre-opt %S/../inputs/kernels.mlir -p 'spyre-fuse{epilogues=false},spyre-divide-work{cores=4 strategy=even}' | filecheck %s --check-prefix=FOUR
// RUN: spyre-opt %S/../inputs/kernels.mlir -p spyre-fuse,spyre-divide-work | filecheck %s --check-prefix=COST
// RUN: spyre-opt %S/../inputs/kernels.mlir -p 'spyre-fuse,spyre-divide-work{split_k=false}' | filecheck %s --check-prefix=NOK
// RUN: spyre-opt %S/../inputs/kernels.mlir -p 'spyre-fuse,spyre-divide-work{strategy=greedy}' --verify-diagnostics | filecheck %s --check-prefix=BAD
// Even splits over the cores: halve the parallel dim with the most units per core while the
// parts fit. Matmul splits n (output sticks) and m (rows), never k (strategy=cost may). Pointwise and restickify
// split the output's device dims; a transpose advances the old stick dim in blocks of 64.

// 128x256x512: n has 8 sticks, m 128 rows -> n = 2 (4 sticks each), m = 16 (8 rows each)
// CHECK: spyre.kernel "k0"({{.*}}) split <n = 2, m = 16, k = 1>
// bias add on (128, 512): device dims [8 sticks, 128 rows]
// CHECK: spyre.kernel "k1"({{.*}}) split <d0 = 2, d1 = 16>
// relu on (100, 200): [4, 100] -> 25 parts of 4 rows (no empty part)
// CHECK: spyre.kernel "k2"({{.*}}) split <d0 = 1, d1 = 25>
// transpose to (200, 100): [2 sticks, 200 rows = 4 blocks of 64]
// CHECK: spyre.kernel "k3"({{.*}}) split <d0 = 2, d1 = 4>
// relu on (200, 100): 29 parts of 7 rows, the last one ragged (4 rows)
// CHECK: spyre.kernel "k4"({{.*}}) split <d0 = 1, d1 = 29>

// Four cores: rows have the most units per part, so m is halved until the parts fit.
// FOUR: spyre.kernel "k0"({{.*}}) split <n = 1, m = 4, k = 1>
// FOUR: spyre.kernel "k2"({{.*}}) split <d0 = 1, d1 = 4>
// FOUR: spyre.kernel "k3"({{.*}}) split <d0 = 2, d1 = 2>

// The default, strategy=cost, ranks every split of the matmul, with and without passing B
// tiles along the ring between the cores that share them, by its estimated time
// (analysis/cost.py). For 128x256x512 it takes 8 row blocks of 16 rows on 8 cores, one chain
// passing B along the ring (the first core loads it from DDR once): 0.5 MB of DDR traffic
// where the even split reads 4.5 MB. The other kernels split as with strategy=even.
// (With the default spyre-fuse the bias add is the matmul's epilogue, so k1 is the relu.)
// With k splits allowed (the default, split_k) it also halves k: 16 cores, pairs of adjacent
// cores sum the two halves of k for the same rows and add their partial sums over the ring;
// each chain of 8 (every other core) shares half the B tiles.
// COST: spyre.kernel "k0"({{.*}}) split <n = 1, m = 8, k = 2> {spyre.multicast = 8 : i64}
// COST: spyre.kernel "k1"({{.*}}) split <d0 = 1, d1 = 25>
// NOK: spyre.kernel "k0"({{.*}}) split <n = 1, m = 8, k = 1> {spyre.multicast = 8 : i64}

// BAD: spyre-divide-work: unknown strategy 'greedy' (supported: cost, even)
