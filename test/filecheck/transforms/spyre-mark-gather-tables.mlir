// RUN: spyre-opt %s -p spyre-mark-gather-tables --split-input-file | filecheck %s
// RUN: spyre-opt %s -p spyre-mark-gather-tables --split-input-file | spyre-opt --split-input-file | filecheck %s
// spyre-mark-gather-tables: an upload that only gathers read (each reader a launch whose
// program reads that input only as a spyre_isa.dma_gather table) is marked gather_table; the
// host uploads it row by row as the gathers read its rows. An upload read in any other way
// (by a program's dma_load, brought back to the host, permuted) stays unmarked. The mark
// survives printing and parsing (the second RUN), and its verifier refuses a wrong one
// (spyre-mark-gather-tables-invalid.mlir).

// An embedding's table, read by a gather: marked. The same table uploaded again and also
// brought back to the host: not marked.
builtin.module {
  spyre_isa.program @gather(%tab: tensor<50x64xf16, #spyre.layout<device_size = [1, 50, 64], stride_map = [64, 64, 1]>>, %ids: tensor<2x5xsi64>, %out: tensor<10x64xf16, #spyre.layout<device_size = [1, 10, 64], stride_map = [64, 64, 1]>>) inputs 2 {
    spyre_isa.stream cores [0 to 1] {
      spyre_isa.dma_gather %tab[%ids[[0, 5]] count 5 row_sticks 1] -> lx [0, strides = [1, 1]] : tensor<50x64xf16, #spyre.layout<device_size = [1, 50, 64], stride_map = [64, 64, 1]>>, tensor<2x5xsi64>
      spyre_isa.dma_store lx [0, strides = [1]] -> %out[[0, 5], strides = [1]] sizes [5] : tensor<10x64xf16, #spyre.layout<device_size = [1, 10, 64], stride_map = [64, 64, 1]>>
    }
  }
  func.func @main(%w: tensor<50x64xf32>, %ids: tensor<2x5xsi64>) -> (tensor<10x64xf32>, tensor<50x64xf32>) {
    %t = spyre.to_device %w : tensor<50x64xf32> -> tensor<50x64xf16, #spyre.layout<device_size = [1, 50, 64], stride_map = [64, 64, 1]>>
    %u = spyre.to_device %w : tensor<50x64xf32> -> tensor<50x64xf16, #spyre.layout<device_size = [1, 50, 64], stride_map = [64, 64, 1]>>
    %g = spyre_isa.launch @gather(%t, %ids) : (tensor<50x64xf16, #spyre.layout<device_size = [1, 50, 64], stride_map = [64, 64, 1]>>, tensor<2x5xsi64>) -> tensor<10x64xf16, #spyre.layout<device_size = [1, 10, 64], stride_map = [64, 64, 1]>>
    %h = spyre_isa.launch @gather(%u, %ids) : (tensor<50x64xf16, #spyre.layout<device_size = [1, 50, 64], stride_map = [64, 64, 1]>>, tensor<2x5xsi64>) -> tensor<10x64xf16, #spyre.layout<device_size = [1, 10, 64], stride_map = [64, 64, 1]>>
    %r = spyre.from_device %g : tensor<10x64xf16, #spyre.layout<device_size = [1, 10, 64], stride_map = [64, 64, 1]>> -> tensor<10x64xf32>
    %back = spyre.from_device %u : tensor<50x64xf16, #spyre.layout<device_size = [1, 50, 64], stride_map = [64, 64, 1]>> -> tensor<50x64xf32>
    func.return %r, %back : tensor<10x64xf32>, tensor<50x64xf32>
  }
}
// CHECK-LABEL: func.func @main
// CHECK:         %t = spyre.to_device %w gather_table : tensor<50x64xf32> -> tensor<50x64xf16,
// CHECK-NEXT:    %u = spyre.to_device %w : tensor<50x64xf32> -> tensor<50x64xf16,

// -----

// A weight a program reads with dma_load (a linear layer's), and a table uploaded permuted:
// not marked.
builtin.module {
  spyre_isa.program @load(%w: tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, %out: tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) inputs 1 {
    spyre_isa.stream cores [0 to 0] {
      spyre_isa.dma_load %w[[0], strides = [1]] -> lx [0, strides = [1]] sizes [4] : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
      spyre_isa.dma_store lx [0, strides = [1]] -> %out[[0], strides = [1]] sizes [4] : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
    }
  }
  func.func @main(%w: tensor<4x64xf32>, %v: tensor<64x4xf32>) -> tensor<4x64xf32> {
    %t = spyre.to_device %w : tensor<4x64xf32> -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
    %p = spyre.to_device %v permutation [1, 0] : tensor<64x4xf32> -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
    %y = spyre_isa.launch @load(%t) : (tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
    %z = spyre_isa.launch @load(%p) : (tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
    %r = spyre.from_device %y : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf32>
    func.return %r : tensor<4x64xf32>
  }
}
// CHECK-LABEL: func.func @main
// CHECK:         %t = spyre.to_device %w : tensor<4x64xf32> -> tensor<4x64xf16,
// CHECK-NEXT:    %p = spyre.to_device %v permutation [1, 0] : tensor<64x4xf32> -> tensor<4x64xf16,
// CHECK-NOT:     gather_table
