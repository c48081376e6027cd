// RUN: spyre-opt %s --verify-diagnostics --split-input-file | filecheck %s
// Counts the instruction format cannot hold (16-bit loop fields: at most 65535, spyre_isa
// MAX_LOOP_COUNT) are refused by the verifier, naming the instruction, the field and the
// value, before anything is planned or executed. %a: a (4, 256) tensor, 16 sticks.

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0] {
    spyre_isa.dma_load %a[0, strides = [0]] -> lx [0, strides = [0]] sizes [70000] : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
  }
}
// CHECK: {{^}}'spyre_isa.dma_load': loop size 70000 (dim 0 of [70000]) exceeds the instruction format: its 16-bit count fields hold at most 65535{{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0] {
    spyre_isa.sfp_exp lx [0, strides = [0, 0]] -> lx [64, strides = [0, 0]] sizes [2, 65536]
  }
}
// CHECK: {{^}}'spyre_isa.sfp_exp': loop size 65536 (dim 1 of [2, 65536]) exceeds the instruction format: its 16-bit count fields hold at most 65535{{$}}

// -----

spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0] {
    spyre_isa.pt_matmul lx [0, strides = [1, 1]], lx [4, strides = [1, 256]] -> lx [1100, strides = [2, 2], f32] m = 4 n = 64 k = 100000
  }
}
// CHECK: {{^}}'spyre_isa.pt_matmul': k = 100000 exceeds the instruction format: its 16-bit count fields hold at most 65535{{$}}

// -----

// The largest count the fields hold verifies.
spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0] {
    spyre_isa.sfp_exp lx [0, strides = [0]] -> lx [64, strides = [0]] sizes [65535]
  }
}
// CHECK: spyre_isa.sfp_exp lx [0, strides = [0]] -> lx [64, strides = [0]] sizes [65535]
