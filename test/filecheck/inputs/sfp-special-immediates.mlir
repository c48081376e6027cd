// Input of dialects/spyre_isa/limits.mlir: SFP immediates that print as hex bit patterns.
spyre_isa.program @k(%a: tensor<64xf16, #spyre.layout<device_size = [1, 64], stride_map = [64, 1]>>) inputs 1 {
  spyre_isa.stream cores [0] {
    spyre_isa.sfp_mul lx [0, strides = [1]], 0x7F800000 -> lx [2, strides = [2], f32] sizes [1]
    spyre_isa.sfp_max lx [0, strides = [1]], 0x7FC00000 -> lx [2, strides = [2], f32] sizes [1]
    spyre_isa.sfp_add lx [0, strides = [1]], 0xFF800000 -> lx [2, strides = [2], f32] sizes [1]
    spyre_isa.sfp_sub lx [0, strides = [1]], 1.5 -> lx [2, strides = [2], f32] sizes [1]
  }
}
