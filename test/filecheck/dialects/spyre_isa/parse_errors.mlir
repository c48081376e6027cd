// RUN: spyre-opt %s --parsing-diagnostics --split-input-file | filecheck %s

// Malformed spyre_isa syntax is a parse error at the offending token, not a traceback.

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0] {
    spyre_isa.dma_load %a[0, strides = [1]] -> lx [0, strides = [1]] : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
  }
}
// CHECK:      spyre_isa.dma_load %a[0, strides = [1]] -> lx [0, strides = [1]] : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
// CHECK-NEXT: ^
// CHECK-NEXT: Expected 'sizes'

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0] {
    spyre_isa.dma_store [0, strides = [1]] -> %a[0, strides = [1]] sizes [1] : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
  }
}
// CHECK: Expected 'lx'

// -----

spyre_isa.program @p() inputs 0 {
  spyre_isa.stream cores [0] {
    spyre_isa.sfp_exp lx [0, [1]] -> lx [1, strides = [1]] sizes [1]
  }
}
// CHECK: Expected 'strides'

// -----

// Immediates are float literals.
spyre_isa.program @p() inputs 0 {
  spyre_isa.stream cores [0] {
    spyre_isa.sfp_add lx [0, strides = [1]], 2 -> lx [1, strides = [1]] sizes [1]
  }
}
// CHECK: Expected float literal

// -----

spyre_isa.program @p() inputs 0 {
  spyre_isa.stream cores [0] {
    spyre_isa.pt_matmul lx [0, strides = [1, 1]], lx [4, strides = [1, 256]] -> lx [260, strides = [2, 2], f32] m = 1 n = 64
  }
}
// CHECK: Expected 'k'

// -----

spyre_isa.program @p() {
}
// CHECK: Expected 'inputs'

// -----

spyre_isa.program @p() inputs 0 {
  spyre_isa.stream {
  }
}
// CHECK: Expected 'cores'

// -----

"test.op"() {t = #spyre_isa.per_core[0 step 4 x -1]} : () -> ()
// CHECK: Expected integer literal

// -----

"test.op"() {c = #spyre_isa.cores[0, 3 to 1]} : () -> ()
// CHECK: empty core range 3 to 1
