// RUN: spyre-opt %s -p convert-spyre-to-isa --verify-diagnostics --split-input-file | filecheck %s
// A kernel whose values are in layouts its program cannot address is refused, naming the
// kernel, the op, the layout and why; spyre-propagate-layouts never leaves such a layout, so
// these come from hand-written spyre-level IR (here after spyre-fuse, spyre-divide-work and
// spyre-plan-scratchpad). Unchecked, each would lower without a word and give a wrong answer
// (docs/layouts.md, "What the lowering assumes").

// A matmul's lhs sticked along M (a transpose): the program steps each dim by one stick
// stride, and would read stick 0 for every row.
builtin.module {
  func.func @f(%x: tensor<128x128xf32>, %w: tensor<128x64xf32>) -> tensor<128x64xf32> {
    %0 = spyre.to_device %x : tensor<128x128xf32> -> tensor<128x128xf16, #spyre.layout<device_size = [2, 128, 64], stride_map = [64, 128, 1]>>
    %1 = spyre.to_device %w : tensor<128x64xf32> -> tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>
    %2 = spyre.permute %0 permutation [1, 0] : tensor<128x128xf16, #spyre.layout<device_size = [2, 128, 64], stride_map = [64, 128, 1]>> -> tensor<128x128xf16, #spyre.layout<device_size = [2, 128, 64], stride_map = [8192, 1, 128]>>
    %3 = spyre.kernel "k0"(%2, %1) split <n = 1, m = 4, k = 1> chunks <n = 1, m = 2, k = 1> lx <lhs = 0, rhs = 4096, acc = 20480, out = 24576, rhs_1 = 26624, lhs_1 = 43008, out_1 = 47104> multicast <chain = 4> : (tensor<128x128xf16, #spyre.layout<device_size = [2, 128, 64], stride_map = [8192, 1, 128]>>, tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>) -> tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>> {
    ^bb0(%4: tensor<128x128xf16, #spyre.layout<device_size = [2, 128, 64], stride_map = [8192, 1, 128]>>, %5: tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>):
      %6 = spyre.matmul %4, %5 : (tensor<128x128xf16, #spyre.layout<device_size = [2, 128, 64], stride_map = [8192, 1, 128]>>, tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>) -> tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>
      spyre.yield %6 : tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>
    }
    %4 = spyre.from_device %3 : tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>> -> tensor<128x64xf32>
    func.return %4 : tensor<128x64xf32>
  }
}
// CHECK: kernel k0: 'spyre.matmul' lhs (128, 128) in device_size [2, 128, 64], stride_map [8192, 1, 128]: the matmul steps each dim by one stick stride, so its sticks must hold the generic layout's (run spyre-propagate-layouts first)

// -----

// A gather result whose columns are split over two device dims: a row's sticks would be
// stored by one stride.
builtin.module {
  func.func @f(%t: tensor<10x256xf32>, %i: tensor<6xsi64>) -> tensor<6x256xf32> {
    %0 = spyre.to_device %t : tensor<10x256xf32> -> tensor<10x256xf16, #spyre.layout<device_size = [4, 10, 64], stride_map = [64, 256, 1]>>
    %1 = spyre.kernel "k0"(%0, %i) split <n = 6> chunks <n = 1> lx <rows = 0> : (tensor<10x256xf16, #spyre.layout<device_size = [4, 10, 64], stride_map = [64, 256, 1]>>, tensor<6xsi64>) -> tensor<6x256xf16, #spyre.layout<device_size = [2, 6, 2, 64], stride_map = [128, 256, 64, 1]>> {
    ^bb0(%2: tensor<10x256xf16, #spyre.layout<device_size = [4, 10, 64], stride_map = [64, 256, 1]>>, %3: tensor<6xsi64>):
      %4 = spyre.gather %2[%3] : (tensor<10x256xf16, #spyre.layout<device_size = [4, 10, 64], stride_map = [64, 256, 1]>>, tensor<6xsi64>) -> tensor<6x256xf16, #spyre.layout<device_size = [2, 6, 2, 64], stride_map = [128, 256, 64, 1]>>
      spyre.yield %4 : tensor<6x256xf16, #spyre.layout<device_size = [2, 6, 2, 64], stride_map = [128, 256, 64, 1]>>
    }
    %2 = spyre.from_device %1 : tensor<6x256xf16, #spyre.layout<device_size = [2, 6, 2, 64], stride_map = [128, 256, 64, 1]>> -> tensor<6x256xf32>
    func.return %2 : tensor<6x256xf32>
  }
}
// CHECK: kernel k0: 'spyre.gather' result (6, 256) in device_size [2, 6, 2, 64], stride_map [128, 256, 64, 1]: the gather stores a row's sticks by one stride, so its sticks must hold the generic layout's

// -----

// A slice starting inside a digit of its input (the stick dim in digits of 64 and 128,
// starting at 64): the loops nest in the digits from index 0 only, and the copy would run
// past the digit's end.
builtin.module {
  func.func @f(%x: tensor<4x256xf32>) -> tensor<4x128xf32> {
    %0 = spyre.to_device %x : tensor<4x256xf32> -> tensor<4x256xf16, #spyre.layout<device_size = [2, 4, 2, 64], stride_map = [128, 256, 64, 1]>>
    %1 = spyre.kernel "k0"(%0) split <d0 = 2, d1 = 4> chunks <d0 = 1, d1 = 1> lx <tile = 0> : (tensor<4x256xf16, #spyre.layout<device_size = [2, 4, 2, 64], stride_map = [128, 256, 64, 1]>>) -> tensor<4x128xf16, #spyre.layout<device_size = [2, 4, 64], stride_map = [64, 128, 1]>> {
    ^bb0(%2: tensor<4x256xf16, #spyre.layout<device_size = [2, 4, 2, 64], stride_map = [128, 256, 64, 1]>>):
      %3 = spyre.slice %2 start [0, 64] : tensor<4x256xf16, #spyre.layout<device_size = [2, 4, 2, 64], stride_map = [128, 256, 64, 1]>> -> tensor<4x128xf16, #spyre.layout<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>
      spyre.yield %3 : tensor<4x128xf16, #spyre.layout<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>
    }
    %2 = spyre.from_device %1 : tensor<4x128xf16, #spyre.layout<device_size = [2, 4, 64], stride_map = [64, 128, 1]>> -> tensor<4x128xf32>
    func.return %2 : tensor<4x128xf32>
  }
}
// CHECK: kernel k0: 'spyre.slice' of (4, 256) in device_size [2, 4, 2, 64], stride_map [128, 256, 64, 1] from [0, 64] into (4, 128) in device_size [2, 4, 64], stride_map [64, 128, 1]: the input's sticks do not hold the result's by one stride per loop from the start on (run spyre-propagate-layouts first)

// -----

// The same along rows kept as 64 x 2: a start at row 10 would read rows 64 to 73 from the next batch.
builtin.module {
  func.func @f(%x: tensor<3x128x64xf32>) -> tensor<2x64x64xf32> {
    %0 = spyre.to_device %x : tensor<3x128x64xf32> -> tensor<3x128x64xf16, #spyre.layout<device_size = [3, 64, 2, 64], stride_map = [8192, 64, 4096, 1]>>
    %1 = spyre.kernel "k0"(%0) split <d0 = 32, d1 = 1, d2 = 1> chunks <d0 = 1, d1 = 1, d2 = 1> lx <tile = 0> : (tensor<3x128x64xf16, #spyre.layout<device_size = [3, 64, 2, 64], stride_map = [8192, 64, 4096, 1]>>) -> tensor<2x64x64xf16, #spyre.layout<device_size = [64, 1, 2, 64], stride_map = [64, 64, 4096, 1]>> {
    ^bb0(%2: tensor<3x128x64xf16, #spyre.layout<device_size = [3, 64, 2, 64], stride_map = [8192, 64, 4096, 1]>>):
      %3 = spyre.slice %2 start [0, 10, 0] : tensor<3x128x64xf16, #spyre.layout<device_size = [3, 64, 2, 64], stride_map = [8192, 64, 4096, 1]>> -> tensor<2x64x64xf16, #spyre.layout<device_size = [64, 1, 2, 64], stride_map = [64, 64, 4096, 1]>>
      spyre.yield %3 : tensor<2x64x64xf16, #spyre.layout<device_size = [64, 1, 2, 64], stride_map = [64, 64, 4096, 1]>>
    }
    %2 = spyre.from_device %1 : tensor<2x64x64xf16, #spyre.layout<device_size = [64, 1, 2, 64], stride_map = [64, 64, 4096, 1]>> -> tensor<2x64x64xf32>
    func.return %2 : tensor<2x64x64xf32>
  }
}
// CHECK: kernel k0: 'spyre.slice' of (3, 128, 64) in device_size [3, 64, 2, 64], stride_map [8192, 64, 4096, 1] from [0, 10, 0] into (2, 64, 64) in device_size [64, 1, 2, 64], stride_map [64, 64, 4096, 1]: the input's sticks do not hold the result's by one stride per loop from the start on (run spyre-propagate-layouts first)

// -----

// A transpose whose result loop over rows (100 rows, one device dim) spans two digits of the
// source (rows kept as 64 x 2): the block transpose has no single stride for it. Unchecked,
// its DMA would run past the tensor and the pass fail its own verifier ("internal error").
builtin.module {
  func.func @f(%x: tensor<100x8x64xf32>) -> tensor<100x8x64xf32> {
    %0 = spyre.to_device %x : tensor<100x8x64xf32> -> tensor<100x8x64xf16, #spyre.layout<device_size = [64, 2, 8, 64], stride_map = [512, 32768, 64, 1]>>
    %1 = spyre.kernel "k0"(%0) split <d0 = 25, d1 = 1> chunks <d0 = 1, d1 = 1> lx <src = 0, dst = 32768> : (tensor<100x8x64xf16, #spyre.layout<device_size = [64, 2, 8, 64], stride_map = [512, 32768, 64, 1]>>) -> tensor<100x8x64xf16, #spyre.layout<device_size = [100, 64, 64], stride_map = [512, 1, 64]>> {
    ^bb0(%2: tensor<100x8x64xf16, #spyre.layout<device_size = [64, 2, 8, 64], stride_map = [512, 32768, 64, 1]>>):
      %3 = spyre.restickify %2 : tensor<100x8x64xf16, #spyre.layout<device_size = [64, 2, 8, 64], stride_map = [512, 32768, 64, 1]>> -> tensor<100x8x64xf16, #spyre.layout<device_size = [100, 64, 64], stride_map = [512, 1, 64]>>
      spyre.yield %3 : tensor<100x8x64xf16, #spyre.layout<device_size = [100, 64, 64], stride_map = [512, 1, 64]>>
    }
    %2 = spyre.from_device %1 : tensor<100x8x64xf16, #spyre.layout<device_size = [100, 64, 64], stride_map = [512, 1, 64]>> -> tensor<100x8x64xf32>
    func.return %2 : tensor<100x8x64xf32>
  }
}
// CHECK: kernel k0: 'spyre.restickify' (100, 8, 64) from device_size [64, 2, 8, 64], stride_map [512, 32768, 64, 1] to [100, 64, 64], [512, 1, 64] is not supported yet

// -----

// A relayout into the padded rows: the copy would read sticks past the tensor ("internal error").
builtin.module {
  func.func @f(%x: tensor<100x64xf32>) -> tensor<100x64xf32> {
    %0 = spyre.to_device %x : tensor<100x64xf32> -> tensor<100x64xf16, #spyre.layout<device_size = [100, 64], stride_map = [64, 1]>>
    %1 = spyre.kernel "k0"(%0) split <d0 = 1, d1 = 32> chunks <d0 = 1, d1 = 1> lx <tile = 0> : (tensor<100x64xf16, #spyre.layout<device_size = [100, 64], stride_map = [64, 1]>>) -> tensor<100x64xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [4096, 64, 1]>> {
    ^bb0(%2: tensor<100x64xf16, #spyre.layout<device_size = [100, 64], stride_map = [64, 1]>>):
      %3 = spyre.restickify %2 : tensor<100x64xf16, #spyre.layout<device_size = [100, 64], stride_map = [64, 1]>> -> tensor<100x64xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [4096, 64, 1]>>
      spyre.yield %3 : tensor<100x64xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [4096, 64, 1]>>
    }
    %2 = spyre.from_device %1 : tensor<100x64xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [4096, 64, 1]>> -> tensor<100x64xf32>
    func.return %2 : tensor<100x64xf32>
  }
}
// CHECK: kernel k0: 'spyre.restickify' (100, 64) from device_size [100, 64], stride_map [64, 1] to [2, 64, 64], [4096, 64, 1]: the sticks cannot be matched

// -----

// A slice whose result is padded past its input from the start: rows 30 .. 129 of 130, the
// result's 100 rows kept as 64 x 2. Its loops reach row 30 + 127, and the copy would read
// sticks past the input ("internal error").
builtin.module {
  func.func @f(%x: tensor<130x64xf32>) -> tensor<100x64xf32> {
    %0 = spyre.to_device %x : tensor<130x64xf32> -> tensor<130x64xf16, #spyre.layout<device_size = [130, 64], stride_map = [64, 1]>>
    %1 = spyre.kernel "k0"(%0) split <d0 = 1, d1 = 32> chunks <d0 = 1, d1 = 1> lx <tile = 0> : (tensor<130x64xf16, #spyre.layout<device_size = [130, 64], stride_map = [64, 1]>>) -> tensor<100x64xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [4096, 64, 1]>> {
    ^bb0(%2: tensor<130x64xf16, #spyre.layout<device_size = [130, 64], stride_map = [64, 1]>>):
      %3 = spyre.slice %2 start [30, 0] : tensor<130x64xf16, #spyre.layout<device_size = [130, 64], stride_map = [64, 1]>> -> tensor<100x64xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [4096, 64, 1]>>
      spyre.yield %3 : tensor<100x64xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [4096, 64, 1]>>
    }
    %2 = spyre.from_device %1 : tensor<100x64xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [4096, 64, 1]>> -> tensor<100x64xf32>
    func.return %2 : tensor<100x64xf32>
  }
}
// CHECK: kernel k0: 'spyre.slice' of (130, 64) in device_size [130, 64], stride_map [64, 1] from [30, 0] into (100, 64) in device_size [2, 64, 64], stride_map [4096, 64, 1]: the input's sticks do not hold the result's by one stride per loop from the start on (run spyre-propagate-layouts first)

// -----

// A concat input sticked along its rows (a transpose): its sticks would be copied as if they
// held the rows' elements.
builtin.module {
  func.func @f(%a: tensor<4x64xf32>, %b: tensor<4x64xf32>) -> tensor<8x64xf32> {
    %0 = spyre.to_device %a : tensor<4x64xf32> -> tensor<4x64xf16, #spyre.layout<device_size = [1, 64, 64], stride_map = [64, 1, 64]>>
    %1 = spyre.to_device %b : tensor<4x64xf32> -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
    %2 = spyre.kernel "k0"(%0, %1) split <d0 = 1, d1 = 8> chunks <d0 = 1, d1 = 1> lx <tile = 0> : (tensor<4x64xf16, #spyre.layout<device_size = [1, 64, 64], stride_map = [64, 1, 64]>>, tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<8x64xf16, #spyre.layout<device_size = [1, 8, 64], stride_map = [64, 64, 1]>> {
    ^bb0(%3: tensor<4x64xf16, #spyre.layout<device_size = [1, 64, 64], stride_map = [64, 1, 64]>>, %4: tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>):
      %5 = spyre.concat %3, %4 dim 0 : (tensor<4x64xf16, #spyre.layout<device_size = [1, 64, 64], stride_map = [64, 1, 64]>>, tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<8x64xf16, #spyre.layout<device_size = [1, 8, 64], stride_map = [64, 64, 1]>>
      spyre.yield %5 : tensor<8x64xf16, #spyre.layout<device_size = [1, 8, 64], stride_map = [64, 64, 1]>>
    }
    %3 = spyre.from_device %2 : tensor<8x64xf16, #spyre.layout<device_size = [1, 8, 64], stride_map = [64, 64, 1]>> -> tensor<8x64xf32>
    func.return %3 : tensor<8x64xf32>
  }
}

// CHECK: kernel k0: 'spyre.concat' input 0 (4, 64) in device_size [1, 64, 64], stride_map [64, 1, 64]: the concat copies whole sticks of the generic layout (run spyre-propagate-layouts first)
