// RUN: spyre-opt %s -p spyre-fuse --verify-diagnostics --split-input-file | filecheck %s
// A pointwise op whose inputs its kernel cannot address is refused, naming the op, the
// layouts and why (spyre-propagate-layouts never leaves such a layout: hand-written IR).

// An output padded past its input's extent: 100 rows kept as 64 x 2 (128 rows on the
// device) read from an input that keeps them as one device dim of 100. The loop over the
// 64-row blocks would run past the input's rows: its DMA would read sticks past the tensor
// and the lowering fail its own verifier ("internal error").
func.func @f(%x: tensor<100x64xf32>) -> tensor<100x64xf32> {
  %0 = spyre.to_device %x : tensor<100x64xf32> -> tensor<100x64xf16, #spyre.layout<device_size = [100, 64], stride_map = [64, 1]>>
  %1 = spyre.pointwise %0 : (tensor<100x64xf16, #spyre.layout<device_size = [100, 64], stride_map = [64, 1]>>) -> tensor<100x64xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [4096, 64, 1]>> {
  ^bb0(%a: f32):
    %c = arith.constant 2.0 : f32
    %m = arith.mulf %a, %c : f32
    spyre.yield %m : f32
  }
  %2 = spyre.from_device %1 : tensor<100x64xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [4096, 64, 1]>> -> tensor<100x64xf32>
  func.return %2 : tensor<100x64xf32>
}
// CHECK: 'spyre.pointwise': input 0 (100, 64) in device_size [100, 64], stride_map [64, 1] does not share the sticks of the output (100, 64) in device_size [2, 64, 64], stride_map [4096, 64, 1]: no stick stride per loop reads it (a stick along another dim, digits that do not nest in the output's, or an output padded past the input's extent) (run spyre-propagate-layouts first)

// -----

// The same along the stick dim, the input's top digit not the outermost: 130 columns kept
// as 64 x 3 in the input, as 64 x 2 x 2 (256) in the output. Unchecked, the overhanging loop
// would read the next row's sticks into the padding, and for the last row sticks past the tensor.
func.func @f(%x: tensor<2x130xf32>) -> tensor<2x130xf32> {
  %0 = spyre.to_device %x : tensor<2x130xf32> -> tensor<2x130xf16, #spyre.layout<device_size = [2, 3, 64], stride_map = [130, 64, 1]>>
  %1 = spyre.pointwise %0 : (tensor<2x130xf16, #spyre.layout<device_size = [2, 3, 64], stride_map = [130, 64, 1]>>) -> tensor<2x130xf16, #spyre.layout<device_size = [2, 2, 2, 64], stride_map = [128, 130, 64, 1]>> {
  ^bb0(%a: f32):
    spyre.yield %a : f32
  }
  %2 = spyre.from_device %1 : tensor<2x130xf16, #spyre.layout<device_size = [2, 2, 2, 64], stride_map = [128, 130, 64, 1]>> -> tensor<2x130xf32>
  func.return %2 : tensor<2x130xf32>
}
// CHECK: 'spyre.pointwise': input 0 (2, 130) in device_size [2, 3, 64], stride_map [130, 64, 1] does not share the sticks of the output (2, 130) in device_size [2, 2, 2, 64], stride_map [128, 130, 64, 1]: no stick stride per loop reads it
