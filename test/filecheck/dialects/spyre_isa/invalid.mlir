// RUN: spyre-opt %s --verify-diagnostics --split-input-file | filecheck %s

// One case per verifier error of the spyre_isa dialect. %a is a (4, 256) tensor in the
// generic stick layout: 16 sticks.

// Attributes.

"test.op"() {t = #spyre_isa.per_core[0 step 4 x 0]} : () -> ()
// CHECK: {{^}}#spyre_isa.per_core: a table needs at least one value{{$}}

// -----

"test.op"() {a = #spyre_isa.access[0, strides = [1], i32]} : () -> ()
// CHECK: {{^}}#spyre_isa.access: element type must be f16 or f32, got i32{{$}}

// -----

"test.op"() {a = #spyre_isa.access[[0, -4], strides = [1]]} : () -> ()
// CHECK: {{^}}#spyre_isa.access: negative base stick in [0, -4]{{$}}

// -----

"test.op"() {a = #spyre_isa.access[0, strides = [1, -1]]} : () -> ()
// CHECK: {{^}}#spyre_isa.access: negative stride in [1, -1]{{$}}

// -----

"test.op"() {c = #spyre_isa.cores[]} : () -> ()
// CHECK: {{^}}#spyre_isa.cores: a stream needs at least one core{{$}}

// -----

"test.op"() {c = #spyre_isa.cores[4 to 7, 0 to 3]} : () -> ()
// CHECK: {{^}}#spyre_isa.cores: cores must be increasing and distinct, got [4, 5, 6, 7, 0, 1, 2, 3]{{$}}

// -----

"test.op"() {c = #spyre_isa.cores[0 to 3, 3]} : () -> ()
// CHECK: {{^}}#spyre_isa.cores: cores must be increasing and distinct, got [0, 1, 2, 3, 3]{{$}}

// -----

"test.op"() {c = #spyre_isa.cores[-1 to 1]} : () -> ()
// CHECK: {{^}}#spyre_isa.cores: core numbers must be >= 0, got [-1, 0, 1]{{$}}

// -----

// spyre_isa.program

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 2 {
}
// CHECK: {{^}}'spyre_isa.program' @p: inputs = 2 but it has 1 arguments{{$}}

// -----

"spyre_isa.program"() <{sym_name = "p", num_inputs = #builtin.int<-1>}> ({
^bb0(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>):
}) : () -> ()
// CHECK: {{^}}'spyre_isa.program' @p: inputs = -1 but it has 1 arguments{{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, %b: tensor<4x256xf16>) inputs 1 {
}
// CHECK: {{^}}'spyre_isa.program' @p: argument 1: expected a device tensor with a #spyre.layout encoding, got tensor<4x256xf16>{{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  "test.op"() : () -> ()
}
// CHECK: {{^}}'spyre_isa.program' @p: only streams may appear at its top level, found 'test.op'{{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0 to 3] {
    spyre_isa.barrier
  }
  spyre_isa.stream cores [2, 8] {
    spyre_isa.barrier
  }
}
// CHECK: {{^}}'spyre_isa.program' @p: core 2 is in two streams{{$}}

// -----

// spyre_isa.stream

spyre_isa.stream cores [0] {
  spyre_isa.barrier
}
// CHECK: {{^}}'spyre_isa.stream' expects parent op 'spyre_isa.program'{{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0 to 3] {
    "test.op"() : () -> ()
  }
}
// CHECK: {{^}}'spyre_isa.stream' on cores [0, 1, 2, 3]: only instructions may appear in a stream, found 'test.op'{{$}}

// -----

spyre_isa.program @p() inputs 0 attributes {spyre.resident_in = array<i64: 8, 8>} {
}
// CHECK: {{^}}'spyre_isa.program' @p: spyre.resident_in must be array<i64: lo, hi> with 0 <= lo < hi (LX sticks), got array<i64: 8, 8>{{$}}

// -----

spyre_isa.program @p() inputs 0 attributes {spyre.resident_out = 3 : i64} {
}
// CHECK: {{^}}'spyre_isa.program' @p: spyre.resident_out must be array<i64: lo, hi> with 0 <= lo < hi (LX sticks), got 3 : i64{{$}}

// -----

spyre_isa.program @p() inputs 0 {
  spyre_isa.stream cores [0] {
    spyre_isa.program @q() inputs 0 {
    }
  }
}
// CHECK: {{^}}'spyre_isa.stream' on cores [0]: only instructions may appear in a stream, found 'spyre_isa.program'{{$}}

// -----

// Instructions.

func.func @f() {
  spyre_isa.barrier
  func.return
}
// CHECK: {{^}}'spyre_isa.barrier' expects parent op 'spyre_isa.stream'{{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0 to 3] {
    spyre_isa.dma_load %a[[0, 4, 8], strides = [1]] -> lx [0, strides = [1]] sizes [4] : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
  }
}
// CHECK: {{^}}'spyre_isa.dma_load': the DDR access base has 3 entries for a stream of 4 cores{{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0 to 3] {
    spyre_isa.dma_load %a[[0 step 4 x 4], strides = [1]] -> lx [0, strides = [1]] sizes [2, 2] : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
  }
}
// CHECK: {{^}}'spyre_isa.dma_load': the DDR access has 1 strides for a loop nest of 2 dims{{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 0 {
  spyre_isa.stream cores [0 to 3] {
    spyre_isa.dma_store lx [0, strides = [1]] -> %a[[0 step 4 x 4], strides = [4, 1]] sizes [2, 2] : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
  }
}
// CHECK: {{^}}'spyre_isa.dma_store': the LX access has 1 strides for a loop nest of 2 dims{{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0 to 3] {
    spyre_isa.dma_load %a[[0 step 4 x 4], strides = [1]] -> lx [0, strides = [1]] sizes [0] : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
  }
}
// CHECK: {{^}}'spyre_isa.dma_load': loop sizes must be >= 1, got [0]{{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0 to 3] {
    spyre_isa.dma_load %a[[0 step 4 x 4], strides = []] -> lx [0, strides = []] sizes [] : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
  }
}
// CHECK: {{^}}'spyre_isa.dma_load': loop sizes must be >= 1, got []{{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0] {
    spyre_isa.dma_load %a[0, strides = [1]] -> lx [0, strides = [2], f32] sizes [4] : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
  }
}
// CHECK: {{^}}'spyre_isa.dma_load': the LX access must be f16 (DMA copies whole sticks, it does not convert){{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16>) inputs 1 {
  spyre_isa.stream cores [0] {
    spyre_isa.dma_load %a[0, strides = [1]] -> lx [0, strides = [1]] sizes [4] : tensor<4x256xf16>
  }
}
// CHECK: {{^}}'spyre_isa.dma_load': the DDR operand: expected a device tensor with a #spyre.layout encoding, got tensor<4x256xf16>{{$}}

// -----

// Core 3 reads sticks 13..16 of a 16-stick tensor.
spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0 to 3] {
    spyre_isa.dma_load %a[[0, 4, 8, 13], strides = [1]] -> lx [0, strides = [1]] sizes [4] : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
  }
}
// CHECK: {{^}}'spyre_isa.dma_load': DDR sticks up to 16 are outside the tensor (16 sticks of tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>){{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0] {
    spyre_isa.dma_load %a[0, strides = [2, 1]] -> lx [0, strides = [2, 1]] sizes [8, 3] : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
  }
}
// CHECK: {{^}}'spyre_isa.dma_load': DDR sticks up to 16 are outside the tensor (16 sticks of tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>){{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0] {
    spyre_isa.pt_matmul lx [0, strides = [1, 1]], lx [4, strides = [1, 256]] -> lx [1100, strides = [2, 2], f32] m = 0 n = 64 k = 256
  }
}
// CHECK: {{^}}'spyre_isa.pt_matmul': m, n, k must be >= 1, got 0, 64, 256{{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0 to 3] {
    spyre_isa.pt_matmul lx [0, strides = [1, 1]], lx [[4, 5], strides = [1, 256]] -> lx [1100, strides = [2, 2], f32] m = 4 n = 64 k = 256
  }
}
// CHECK: {{^}}'spyre_isa.pt_matmul': rhs base has 2 entries for a stream of 4 cores{{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0] {
    spyre_isa.pt_matmul lx [0, strides = [1]], lx [4, strides = [1, 256]] -> lx [1100, strides = [2, 2], f32] m = 4 n = 64 k = 256
  }
}
// CHECK: {{^}}'spyre_isa.pt_matmul': lhs needs 2 strides (row, stick), got 1{{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0] {
    spyre_isa.pt_matmul lx [0, strides = [1, 1]], lx [4, strides = [1, 256]] -> lx [1100, strides = [2, 2]] m = 4 n = 64 k = 256 accumulate
  }
}
// CHECK: {{^}}'spyre_isa.pt_matmul': acc must be f32{{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0] {
    spyre_isa.pt_matmul lx [0, strides = [2, 2], f32], lx [4, strides = [1, 256]] -> lx [1100, strides = [2, 2], f32] m = 4 n = 64 k = 256
  }
}
// CHECK: {{^}}'spyre_isa.pt_matmul': lhs must be f16{{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0 to 3] {
    spyre_isa.sfp_exp lx [0, strides = [1]] -> lx [[8, 9], strides = [1]] sizes [4]
  }
}
// CHECK: {{^}}'spyre_isa.sfp_exp': dst base has 2 entries for a stream of 4 cores{{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0] {
    spyre_isa.sfp_copy lx [0, strides = [1, 1]] -> lx [8, strides = [1]] sizes [4]
  }
}
// CHECK: {{^}}'spyre_isa.sfp_copy': src has 2 strides for a loop nest of 1 dims{{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0] {
    spyre_isa.sfp_add lx [0, strides = [1]], lx [4, strides = [1, 0]] -> lx [8, strides = [1]] sizes [4]
  }
}
// CHECK: {{^}}'spyre_isa.sfp_add': rhs has 2 strides for a loop nest of 1 dims{{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0] {
    spyre_isa.sfp_mul lx [0, strides = [1]], 1.0 -> lx [8, strides = [1]] sizes [4, 1]
  }
}
// CHECK: {{^}}'spyre_isa.sfp_mul': lhs has 1 strides for a loop nest of 2 dims{{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0] {
    "spyre_isa.sfp_sub"() <{lhs = #spyre_isa.access[0, strides = [1]], rhs = #spyre_isa.access[4, strides = [1]], imm = 1.0 : f32, dst = #spyre_isa.access[8, strides = [1]], sizes = #spyre.ints[4]}> : () -> ()
  }
}
// CHECK: {{^}}'spyre_isa.sfp_sub': needs exactly one of an LX rhs and an immediate{{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0] {
    "spyre_isa.sfp_sub"() <{lhs = #spyre_isa.access[0, strides = [1]], dst = #spyre_isa.access[8, strides = [1]], sizes = #spyre.ints[4]}> : () -> ()
  }
}
// CHECK: {{^}}'spyre_isa.sfp_sub': needs exactly one of an LX rhs and an immediate{{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0] {
    "spyre_isa.sfp_max"() <{lhs = #spyre_isa.access[0, strides = [1]], imm = 0.0 : f64, dst = #spyre_isa.access[8, strides = [1]], sizes = #spyre.ints[4]}> : () -> ()
  }
}
// CHECK: {{^}}'spyre_isa.sfp_max': the immediate must be f32, got 0.000000e+00 : f64{{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0] {
    spyre_isa.sfp_transpose lx [0, strides = [64, 1]] -> lx [128, strides = [64, 1]] blocks = 1 rows = 65 cols = 64
  }
}
// CHECK: {{^}}'spyre_isa.sfp_transpose': need blocks >= 1 and 1 <= rows, cols <= 64, got 1, 65, 64{{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0] {
    spyre_isa.sfp_transpose lx [0, strides = [64, 1]] -> lx [128, strides = [64, 1]] blocks = 0 rows = 64 cols = 64
  }
}
// CHECK: {{^}}'spyre_isa.sfp_transpose': need blocks >= 1 and 1 <= rows, cols <= 64, got 0, 64, 64{{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0] {
    spyre_isa.sfp_transpose lx [0, strides = [64, 1]] -> lx [128, strides = [128, 2], f32] blocks = 1 rows = 64 cols = 64
  }
}
// CHECK: {{^}}'spyre_isa.sfp_transpose': dst must be f16 with 2 strides (block, row){{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0 to 3] {
    spyre_isa.sfp_transpose lx [[0, 64, 128], strides = [64, 1]] -> lx [1024, strides = [64, 1]] blocks = 1 rows = 64 cols = 64
  }
}
// CHECK: {{^}}'spyre_isa.sfp_transpose': src base has 3 entries for a stream of 4 cores{{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0] {
    spyre_isa.wait 0 count 0
  }
}
// CHECK: {{^}}'spyre_isa.wait': count must be >= 1, got 0{{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0] {
    spyre_isa.wait -2 count 1
  }
}
// CHECK: {{^}}'spyre_isa.wait': token must be >= 0, got -2{{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0] {
    spyre_isa.signal -1
  }
}
// CHECK: {{^}}'spyre_isa.signal': token must be >= 0, got -1{{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0, 1] {
    spyre_isa.wait [3, 4, 5] count 1
  }
}
// CHECK: {{^}}'spyre_isa.wait': token has 3 entries for a stream of 2 cores{{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0, 1] {
    spyre_isa.signal [0, -4]
  }
}
// CHECK: {{^}}'spyre_isa.signal': token must be >= 0, got -4{{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0, 1] {
    spyre_isa.ring_send lx [0, strides = [1]] -> core + 1 lx [8, strides = [1]] sizes [4] notify [1, 2, 3, 4]
  }
}
// CHECK: {{^}}'spyre_isa.ring_send': notify has 4 entries for a stream of 2 cores{{$}}

// -----

// spyre_isa.launch

func.func @main(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) {
  spyre_isa.launch @nope(%a) : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) -> ()
  func.return
}
// CHECK: {{^}}'spyre_isa.launch': no spyre_isa.program named @nope{{$}}

// -----

func.func @main(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) {
  spyre_isa.launch @main(%a) : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) -> ()
  func.return
}
// CHECK: {{^}}'spyre_isa.launch': no spyre_isa.program named @main{{$}}

// -----

spyre_isa.program @k(%in: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, %out: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
}
func.func @main(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) -> tensor<256x4xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [256, 1, 4]>> {
  %0 = spyre_isa.launch @k(%a) : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) -> tensor<256x4xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [256, 1, 4]>>
  func.return %0 : tensor<256x4xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [256, 1, 4]>>
}
// CHECK: {{^}}'spyre_isa.launch': @k takes 1 inputs and 1 outputs of types (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>){{$}}

// -----

// A launch names its kernel with a string.
spyre_isa.program @k(%in: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, %out: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
}
func.func @main(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) {
  %0 = spyre_isa.launch @k(%a) {kernel = 3 : i64} : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
  func.return
}
// CHECK: {{^}}'spyre_isa.launch': kernel must be a string (the kernel's name), not 3 : i64{{$}}

// -----

// The right types, split the wrong way between inputs and outputs.
spyre_isa.program @k(%in: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, %out: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
}
func.func @main(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) {
  spyre_isa.launch @k(%a, %a) : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) -> ()
  func.return
}
// CHECK: {{^}}'spyre_isa.launch': @k takes 1 inputs and 1 outputs of types (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>){{$}}

// -----

// A program writes only its outputs: its inputs are values other launches may still read.
spyre_isa.program @k(%in: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, %out: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0] {
    spyre_isa.dma_store lx [0, strides = [1]] -> %in[0, strides = [1]] sizes [4] : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
  }
}
// CHECK: {{^}}'spyre_isa.dma_store': stores into input 0 of @k; a program writes only its outputs (arguments 1 and up){{$}}

// -----

spyre_isa.program @k(%in: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, %out: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0] {
    spyre_isa.sfp_reduce_sum lx [0, strides = [1, 4]] -> lx [100, strides = [1, 0]] sizes [4, 4] tail 65
  }
}
// CHECK: {{^}}'spyre_isa.sfp_reduce_sum': tail must be in 1..64, got 65{{$}}

// -----

spyre_isa.program @k(%in: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, %out: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0 to 1] {
    spyre_isa.ring_send lx [0, strides = [1], f32] -> core + 1 lx [200, strides = [1]] sizes [16]
  }
}
// CHECK: {{^}}'spyre_isa.ring_send': src and dst must have the same element type (the ring moves bytes){{$}}

// -----

spyre_isa.program @k(%in: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, %out: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0 to 1] {
    spyre_isa.ring_send lx [0, strides = [1]] -> core + [1, 2, 3] lx [200, strides = [1]] sizes [16]
  }
}
// CHECK: {{^}}'spyre_isa.ring_send': shift has 3 entries for a stream of 2 cores{{$}}

// -----

spyre_isa.program @k(%in: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, %out: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0 to 1] {
    spyre_isa.ring_send lx [0, strides = [16, 1]] -> core + 1 lx [200, strides = [16, 1]] sizes [2, 16] piece 17
  }
}
// CHECK: {{^}}'spyre_isa.ring_send': piece must be between 1 and the last loop size 16 (steps per piece), got 17{{$}}

// -----

spyre_isa.program @k(%in: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, %out: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0 to 1] {
    spyre_isa.ring_send lx [0, strides = [1]] -> core + 1 lx [200, strides = [1]] sizes [16] piece 0
  }
}
// CHECK: {{^}}'spyre_isa.ring_send': piece must be between 1 and the last loop size 16 (steps per piece), got 0{{$}}

// -----

spyre_isa.program @k(%in: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, %out: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0 to 1] {
    spyre_isa.ring_send lx [0, strides = [1]] -> core + 1 lx [200, strides = [1]] sizes [16] after -3
  }
}
// CHECK: {{^}}'spyre_isa.ring_send': after token must be >= 0, got -3{{$}}

// -----

spyre_isa.program @g(%tab: tensor<50x64xf16, #spyre.layout<device_size = [1, 50, 64], stride_map = [64, 64, 1]>>, %ids: tensor<2x5xsi64>, %out: tensor<10x64xf16, #spyre.layout<device_size = [1, 10, 64], stride_map = [64, 64, 1]>>) inputs 2 {
  spyre_isa.stream cores [0 to 1] {
    spyre_isa.dma_gather %tab[%ids[[0, 6]] count 5 row_sticks 1] -> lx [0, strides = [1, 1]] : tensor<50x64xf16, #spyre.layout<device_size = [1, 50, 64], stride_map = [64, 64, 1]>>, tensor<2x5xsi64>
  }
}
// CHECK: {{^}}'spyre_isa.dma_gather': indices 6..10 past the 10 given{{$}}

// -----

// A gather of one stick from each row's second (a KV head's of a cache row): a row of 128
// holds two sticks, so from stick 2 is past it.
spyre_isa.program @g2(%tab: tensor<50x128xf16, #spyre.layout<device_size = [50, 2, 64], stride_map = [128, 64, 1]>>, %ids: tensor<2x5xsi64>, %out: tensor<10x64xf16, #spyre.layout<device_size = [1, 10, 64], stride_map = [64, 64, 1]>>) inputs 2 {
  spyre_isa.stream cores [0 to 1] {
    spyre_isa.dma_gather %tab[%ids[[0, 5]] count 5 row_sticks 1 from_stick [1, 2]] -> lx [0, strides = [1, 1]] : tensor<50x128xf16, #spyre.layout<device_size = [50, 2, 64], stride_map = [128, 64, 1]>>, tensor<2x5xsi64>
  }
}
// CHECK: {{^}}'spyre_isa.dma_gather': 1 sticks from stick 2 of a row of 128 (2 sticks){{$}}

// -----

spyre_isa.program @sc(%cache: tensor<2x8x64xf16, #spyre.layout<device_size = [2, 8, 1, 1, 64], stride_map = [512, 64, 64, 1024, 1]>>, %pos: tensor<1xsi64>, %out: tensor<2x8x64xf16, #spyre.layout<device_size = [2, 8, 1, 1, 64], stride_map = [512, 64, 64, 1024, 1]>>) inputs 2 {
  spyre_isa.stream cores [0 to 1] {
    spyre_isa.dma_scatter lx [0, strides = [1, 1]] -> %out[[0, 2], %pos[[0]] count 1 row_sticks 1] : tensor<2x8x64xf16, #spyre.layout<device_size = [2, 8, 1, 1, 64], stride_map = [512, 64, 64, 1024, 1]>>, tensor<1xsi64>
  }
}
// CHECK: {{^}}'spyre_isa.dma_scatter': outer 2 out of range for 2 rows of (O, L, C){{$}}

// -----

spyre_isa.program @sc(%cache: tensor<2x8x64xf16, #spyre.layout<device_size = [2, 8, 1, 1, 64], stride_map = [512, 64, 64, 1024, 1]>>, %pos: tensor<1xsi64>, %out: tensor<2x1x64xf16, #spyre.layout<device_size = [2, 1, 1, 1, 64], stride_map = [64, 64, 64, 128, 1]>>) inputs 2 attributes {spyre.in_place = 0 : i64} {
}
// CHECK: {{^}}'spyre_isa.program' @sc: its output is written in input 0's buffer (spyre.in_place), so their types must be equal: {{.*}}
