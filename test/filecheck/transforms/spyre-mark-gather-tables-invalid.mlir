// RUN: spyre-opt %s --verify-diagnostics --split-input-file | filecheck %s
// The verifier of `spyre.to_device gather_table` (spyre-mark-gather-tables' mark): the host
// uploads such a table row by row as gathers read it, so a mark on an upload read otherwise
// would give its other readers rows never sent. Each wrong mark is refused, saying why.

// Brought back to the host whole.
builtin.module {
  func.func @main(%w: tensor<50x64xf32>) -> tensor<50x64xf32> {
    %t = spyre.to_device %w gather_table : tensor<50x64xf32> -> tensor<50x64xf16, #spyre.layout<device_size = [1, 50, 64], stride_map = [64, 64, 1]>>
    %b = spyre.from_device %t : tensor<50x64xf16, #spyre.layout<device_size = [1, 50, 64], stride_map = [64, 64, 1]>> -> tensor<50x64xf32>
    func.return %b : tensor<50x64xf32>
  }
}
// CHECK: 'spyre.to_device': gather_table, but its result is read other than as the table of gathers

// -----

// Read by a program's dma_load.
builtin.module {
  spyre_isa.program @load(%w: tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, %out: tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) inputs 1 {
    spyre_isa.stream cores [0 to 0] {
      spyre_isa.dma_load %w[[0], strides = [1]] -> lx [0, strides = [1]] sizes [4] : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
      spyre_isa.dma_store lx [0, strides = [1]] -> %out[[0], strides = [1]] sizes [4] : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
    }
  }
  func.func @main(%w: tensor<4x64xf32>) -> tensor<4x64xf32> {
    %t = spyre.to_device %w gather_table : tensor<4x64xf32> -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
    %y = spyre_isa.launch @load(%t) : (tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
    %r = spyre.from_device %y : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf32>
    func.return %r : tensor<4x64xf32>
  }
}
// CHECK: 'spyre.to_device': gather_table, but its result is read other than as the table of gathers

// -----

// Permuted on the way (the upload rearranges the whole tensor).
builtin.module {
  func.func @main(%v: tensor<64x4xf32>) {
    %p = spyre.to_device %v permutation [1, 0] gather_table : tensor<64x4xf32> -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
    func.return
  }
}
// CHECK: 'spyre.to_device': a gather_table is uploaded as it is, with no permutation
