// RUN: spyre-opt %S/../inputs/kernels.mlir -p 'spyre-fuse{epilogues=false},spyre-divide-work{strategy=even},spyre-plan-scratchpad{double_buffer=false cost=false}' | filecheck %s
// RUN: spyre-opt %S/../inputs/kernels.mlir -p 'spyre-fuse{epilogues=false},spyre-divide-work{strategy=even},spyre-plan-scratchpad' | filecheck %s --check-prefix=DOUBLE
// RUN: spyre-opt %S/../inputs/kernels.mlir -p 'spyre-fuse{epilogues=false},spyre-divide-work{cores=1 strategy=even},spyre-plan-scratchpad{cores=1 budget_bytes=65536 double_buffer=false cost=false}' | filecheck %s --check-prefix=SMALL
// RUN: spyre-opt %S/../inputs/kernels.mlir -p 'spyre-fuse,spyre-divide-work{split_k=false},spyre-plan-scratchpad{budget_bytes=256}' --verify-diagnostics | filecheck %s --check-prefix=TOOSMALL
// Buffers are placed one after another (byte offsets, 128-aligned). With room to spare each
// core does its part in one chunk; a small budget chunks the work until it fits.

// matmul per core: A 8 rows x 4 sticks, B 256 rows x 4 sticks, fp32 acc 8 x 8 sticks, out 8 x 4
// CHECK: spyre.kernel "k0"({{.*}}) split <n = 2, m = 16, k = 1> chunks <n = 1, m = 1, k = 1> lx <lhs = 0, rhs = 4096, acc = 135168, out = 143360>
// bias add: x tile 32 sticks, bias 4 sticks (broadcast over rows), out 32 sticks
// CHECK: spyre.kernel "k1"({{.*}}) split <{{.*}}> chunks <d0 = 1, d1 = 1> lx <in0 = 0, in1 = 4096, out = 4608>
// transpose: one 64-stick source and destination block per core
// CHECK: spyre.kernel "k3"({{.*}}) split <{{.*}}> chunks <d0 = 1, d1 = 1> lx <src = 0, dst = 8192>

// The defaults double-buffer streamed tiles (a second buffer `name_1` that convert-spyre-to-isa
// alternates with the first) and pick the matmul's chunks by estimated time: here 4 n chunks x
// 4 k chunks, so that each tile's loads overlap the previous tile's PT passes. The transpose
// is not double-buffered.
// DOUBLE: spyre.kernel "k0"({{.*}}) split <n = 2, m = 16, k = 1> chunks <n = 4, m = 1, k = 4> lx <lhs = 0, rhs = 1024, acc = 9216, out = 11264, lhs_1 = 12288, rhs_1 = 13312, out_1 = 21504>
// DOUBLE: spyre.kernel "k1"({{.*}}) split <{{.*}}> chunks <d0 = 1, d1 = 1> lx <in0 = 0, in1 = 4096, out = 4608, in0_1 = 8704, in1_1 = 12800, out_1 = 13312>
// DOUBLE: spyre.kernel "k3"({{.*}}) split <{{.*}}> chunks <d0 = 1, d1 = 1> lx <src = 0, dst = 8192>

// One core, 64 KiB: the 128x256x512 matmul streams through LX in chunks (A, B, acc, out fit).
// SMALL: spyre.kernel "k0"({{.*}}) split <n = 1, m = 1, k = 1> chunks <n = 8, m = 2, k = 2> lx <lhs = 0, rhs = 16384, acc = 32768, out = 49152>
// SMALL: spyre.kernel "k1"({{.*}}) split <d0 = 1, d1 = 1> chunks <d0 = 8, d1 = 1> lx <in0 = 0, in1 = 16384, out = 16512>
// SMALL: spyre.kernel "k2"({{.*}}) split <d0 = 1, d1 = 1> chunks <d0 = 2, d1 = 1> lx <in0 = 0, out = 25600>

// TOOSMALL: kernel k0: its smallest chunk needs 17024 bytes of LX per core, the planner's budget is 256
