// A stride past 64 bits in an LX window (fuzz: an OverflowError in the device model's numpy).
builtin.module attributes {spyre.numerics = "dl16"} {
  spyre_isa.program @k0(%in0: tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, %out: tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) inputs 1 {
    spyre_isa.stream cores [0 to 3] {
      spyre_isa.dma_load %in0[[0 step 1 x 4], strides = [1, 4]] -> lx [0, strides = [1, 1]] sizes [1, 1] : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
      spyre_isa.sfp_add lx [0, strides = [1, 1]], lx [0, strides = [1, 1]] -> lx [1, strides = [1, 1]] sizes [1, 1]
      spyre_isa.sfp_reduce_max lx [1, strides = [9223372036854775808, 1]] -> lx [2, strides = [1, 0]] sizes [1, 1] tail 64
      spyre_isa.sfp_sub lx [1, strides = [1, 1]], lx [2, strides = [1, 0]] -> lx [6, strides = [2, 2], f32] sizes [1, 1]
      spyre_isa.sfp_exp lx [6, strides = [2, 2], f32] -> lx [3, strides = [1, 1]] sizes [1, 1]
      spyre_isa.sfp_reduce_sum lx [3, strides = [1, 1]] -> lx [8, strides = [2, 0], f32] sizes [1, 1] tail 64
      spyre_isa.sfp_copy lx [8, strides = [2], f32] -> lx [4, strides = [1]] sizes [1]
      spyre_isa.sfp_div lx [3, strides = [1, 1]], lx [4, strides = [1, 0]] -> lx [5, strides = [1, 1]] sizes [1, 1]
      spyre_isa.dma_store lx [5, strides = [1, 1]] -> %out[[0 step 1 x 4], strides = [1, 4]] sizes [1, 1] : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
    }
  }
  func.func @main(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
    %0 = spyre.to_device %x : tensor<4x64xf32> -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
    %s = spyre_isa.launch @k0(%0) : (tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
    %1 = spyre.from_device %s : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf32>
    func.return %1 : tensor<4x64xf32>
  }
}
