// RUN: spyre-opt %s --parsing-diagnostics --split-input-file | filecheck %s
// RUN: spyre-opt %S/../../inputs/sfp-special-immediates.mlir | spyre-opt | filecheck %s --check-prefix=IMM

// Core sets and per-core tables are lists the parser builds: more than 65536 cores is a parse
// error, not a list of 2^63 integers (a MemoryError).

"test.op"() {c = #spyre_isa.cores[4 to 9223372036854775808]} : () -> ()
// CHECK: core range 4 to 9223372036854775808 has more than 65536 cores

// -----

"test.op"() {t = #spyre_isa.per_core[0 step 1 x 100000]} : () -> ()
// CHECK: a per-core table of 100000 values; at most 65536

// An SFP immediate that is inf or NaN prints as its f32 bits and parses back.
// IMM:      spyre_isa.sfp_mul lx [0, strides = [1]], 0x7f800000 -> lx [2, strides = [2], f32] sizes [1]
// IMM-NEXT: spyre_isa.sfp_max lx [0, strides = [1]], 0x7fc00000 -> lx [2, strides = [2], f32] sizes [1]
// IMM-NEXT: spyre_isa.sfp_add lx [0, strides = [1]], 0xff800000 -> lx [2, strides = [2], f32] sizes [1]
// IMM-NEXT: spyre_isa.sfp_sub lx [0, strides = [1]], 1.500000e+00 -> lx [2, strides = [2], f32] sizes [1]
