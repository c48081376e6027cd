// Inputs of the kinds the fuzz harness draws (bench/fuzz.py, docs/fuzzing.md) that reach the
// tools' error paths: unchecked, each would print a Python traceback, crash or give a false
// verdict. Every failure is a diagnostic (exit 1) naming the line or the op.

// A use before the definition: xDSL does not check dominance, the tools do.
// RUN: not spyre-opt %S/../inputs/use-before-def.txt.mlir 2>&1 | filecheck %s --check-prefix=DOM
// RUN: not spyre-run %S/../inputs/use-before-def.txt.mlir 2>&1 | filecheck %s --check-prefix=DOM
// DOM:     'torch.aten.relu': operand 0 ({{.*}}) does not dominate this use
// DOM-NOT: Traceback

// A weight blob shorter than its type (unchecked: a ValueError in numpy).
// RUN: not spyre-opt %S/../inputs/bad-blob.txt.mlir 2>&1 | filecheck %s --check-prefix=BLOB
// RUN: not spyre-run %S/../inputs/bad-blob.txt.mlir --reference 2>&1 | filecheck %s --check-prefix=BLOB
// BLOB:     'torch.vtensor.literal': the blob of dense_resource<w> holds 12 bytes after its header, tensor<4xf32> needs 16
// BLOB-NOT: Traceback

// A type constraint that fails while the op is parsed: located like a parse error.
// RUN: not spyre-opt %S/../inputs/attr-error-in-op.txt.mlir 2>&1 | filecheck %s --check-prefix=ATTR
// ATTR:      attr-error-in-op.txt.mlir:4:5
// ATTR-NEXT:     %r = math.exp %a : i64
// ATTR:      Unexpected attribute i64

// A verifier message that does not name its op gets the op's line.
// RUN: not spyre-opt %S/../inputs/relu-two-operands.txt.mlir 2>&1 | filecheck %s --check-prefix=OPLINE
// OPLINE:      Expected 1 operand, but got 2
// OPLINE-NEXT: "torch.aten.relu"(%a, %a)

// A declared result the op's operands do not give (unchecked: a LayoutError in the lowering).
// RUN: not spyre-opt %S/../inputs/inconsistent-slice.txt.mlir -p spyre-pipeline 2>&1 | filecheck %s --check-prefix=SLICE
// RUN: not spyre-run %S/../inputs/inconsistent-slice.txt.mlir --reference 2>&1 | filecheck %s --check-prefix=SLICEREF
// SLICE:    'torch.aten.slice.Tensor': its result shape (2, 4, 64) does not hold the 384 elements of (2, 3, 64)
// SLICEREF: 'torch.aten.slice.Tensor': PyTorch computes a result of shape (2, 3, 64), the op declares !torch.vtensor<[2,4,64],f32>

// spyre-run returns tensors; a dtype code PyTorch does not know is refused (PyTorch segfaults on it).
// RUN: not spyre-run %S/../inputs/list-result.txt.mlir 2>&1 | filecheck %s --check-prefix=LIST
// LIST: spyre-run: error: @main returns !torch.list<vtensor>; spyre-run returns tensors only
// RUN: not spyre-run %S/../inputs/bad-dtype-code.txt.mlir --reference 2>&1 | filecheck %s --check-prefix=DTYPE
// DTYPE: spyre-run: error: 'torch.aten._to_copy': dtype = -1 is not a ScalarType code this runtime knows

// A softmax over an extent-1 dim (the device reduces along sticked dims only: it stays on the
// host) and an embedding; NaN where the exact answer is NaN agrees with the reference.
// RUN: spyre-run %S/../inputs/softmax-extent-1.txt.mlir --reference --no-profile | filecheck %s --check-prefix=EXT1
// EXT1: output 0 vs reference: {{.*}} within the dl16 bound: yes
// EXT1: output 1 vs reference: {{.*}} within the dl16 bound: yes
// RUN: spyre-run %S/../inputs/nan-agreement.txt.mlir --reference --no-profile | filecheck %s --check-prefix=NAN
// NAN: output 0 vs reference: {{.*}} within the dl16 bound: yes

// A function of device tensors (spyre level) runs: its arguments are transferred in their layouts.
// RUN: spyre-run %S/../transforms/spyre-fuse.mlir --entry chain --no-profile | filecheck %s --check-prefix=DEVARGS
// DEVARGS: output 0: shape (4, 64) float32
// DEVARGS: output 1: shape (4, 64) float32

// A bf16 program on the host rounds as bf16 does: the reference's bound says so.
// RUN: spyre-run %S/../inputs/atan-bf16.txt.mlir --reference --no-profile | filecheck %s --check-prefix=BF16
// BF16: output 0 vs reference: {{.*}} within the dl16 bound: yes

// A random input no memory holds (unchecked: a MemoryError, or numpy's "Maximum allowed
// dimension exceeded" with no location): refused before anything is allocated, naming the argument.
// RUN: not spyre-run %S/../inputs/huge-random-input.txt.mlir 2>&1 | filecheck %s --check-prefix=HUGE
// HUGE:     spyre-run: error: @main argument 0: a random input of shape (262144, 262144) (i1) has 68719476736 elements, 274877906944 bytes at 4 per element, more than the device's usable DDR (120259084288 bytes): it could not run; use smaller shapes
// HUGE-NOT: Traceback

// A random input the device's DDR holds but the host cannot draw (unchecked: a MemoryError
// for a (65536, 65536) f32 input on a 24 GB machine): refused before anything is allocated. This one
// (64 GiB in DDR) needs about 240 GB of host memory.
// RUN: not spyre-run %S/../inputs/host-sized-random-input.txt.mlir 2>&1 | filecheck %s --check-prefix=HOST
// HOST:     spyre-run: error: @main: random inputs of shapes [(131072, 131072)] need about 240518168576 bytes of host memory (float64 draws, float32 arrays, their DDR copies), more than the {{[0-9]+}} bytes this machine has available: use smaller shapes or --input
// HOST-NOT: Traceback

// A stride that does not fit in 64 bits (unchecked: an OverflowError in the device model, as
// "internal error"): refused where it is parsed, naming the line.
// RUN: not spyre-opt %S/../inputs/huge-stride.txt.mlir 2>&1 | filecheck %s --check-prefix=STRIDE
// RUN: not spyre-run %S/../inputs/huge-stride.txt.mlir 2>&1 | filecheck %s --check-prefix=STRIDE
// STRIDE:      huge-stride.txt.mlir:7:7
// STRIDE:      #spyre.ints: 9223372036854775808 in [9223372036854775808, 1] does not fit in 64 bits
// STRIDE-NOT:  Traceback

// A matmul kernel whose split was edited to k = 8 after planning: its lx plan has no buffer for
// the next k part's partial sums (unchecked: a KeyError inside convert-spyre-to-isa).
// RUN: not spyre-opt %S/../inputs/k-split-without-acc-in.mlir -p convert-spyre-to-isa 2>&1 | filecheck %s --check-prefix=ACCIN
// ACCIN:     kernel g2_k0: its lx plan places no buffer 'acc_in', which its split and layouts need
// ACCIN-NOT: Traceback

// An LX plan edited after planning (unchecked: a wrong answer without a sign, as two buffers
// share sticks): buffers that overlap, one past the end of LX, a resident value over a buffer.
// RUN: sed 's/rhs = 8192,/rhs = 7936,/' %S/../inputs/planned-matmul.mlir | not spyre-opt -p convert-spyre-to-isa 2>&1 | filecheck %s --check-prefix=OVERLAP
// OVERLAP:     kernel k0: its lx plan overlaps 'lhs' (LX bytes 0 to 8192) and 'rhs' (7936 to 40704): each buffer needs sticks of its own
// OVERLAP-NOT: Traceback
// RUN: sed 's/res_1 = 88192>/res_1 = 2096128>/' %S/../inputs/planned-matmul.mlir | not spyre-opt -p convert-spyre-to-isa 2>&1 | filecheck %s --check-prefix=PASTLX
// PASTLX:      kernel k0: its lx plan places 'res_1' at 2096128 for 2048 bytes, past the end of LX (2097152 bytes per core)
// RUN: sed 's/multicast <chain = 8>/multicast <chain = 8> resident_out <offset = 88192> lx_budget <bytes = 88192>/' %S/../inputs/planned-matmul.mlir | not spyre-opt -p convert-spyre-to-isa 2>&1 | filecheck %s --check-prefix=RESIDENT
// RESIDENT:    kernel k0: the LX range of its spyre.resident_out overlaps 'res_1' (LX bytes 88192 to 90240) and 'spyre.resident_out' (88192 to 104576): a value kept in LX between launches lies apart from the kernel's buffers
// The plan as spyre-plan-scratchpad wrote it lowers.
// RUN: spyre-opt %S/../inputs/planned-matmul.mlir -p convert-spyre-to-isa | filecheck %s --check-prefix=PLANNED
// PLANNED:     spyre_isa.program @k0

// A literal whose value does not fit its element type (unchecked: an OverflowError while
// xDSL packs the values): refused where it is parsed.
// RUN: not spyre-opt %S/../inputs/literal-out-of-range.txt.mlir 2>&1 | filecheck %s --check-prefix=RANGE
// RUN: not spyre-run %S/../inputs/literal-out-of-range.txt.mlir 2>&1 | filecheck %s --check-prefix=RANGE
// RANGE:      literal-out-of-range.txt.mlir:2:30
// RANGE:      a literal value does not fit its element type (out of range)
// RANGE-NOT:  Traceback
