// RUN: spyre-opt %s --verify-diagnostics --split-input-file | filecheck %s

// One case per verifier error of the spyre dialect. Valid layouts are computed with
// spyre_mlir.layout; the broken ones are the generic (4, 256) layout
// device_size = [4, 4, 64], stride_map = [64, 256, 1] with one thing changed.

// #spyre.layout on its own: lengths, emptiness, sizes, strides.

"test.op"() {l = #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256]>} : () -> ()
// CHECK: {{^}}#spyre.layout: device_size has 3 dims but stride_map has 2{{$}}

// -----

"test.op"() {l = #spyre.layout<device_size = [], stride_map = []>} : () -> ()
// CHECK: {{^}}#spyre.layout: needs at least the stick dim{{$}}

// -----

"test.op"() {l = #spyre.layout<device_size = [4, 0, 64], stride_map = [64, 256, 1]>} : () -> ()
// CHECK: {{^}}#spyre.layout: device_size [4, 0, 64] has a dim < 1{{$}}

// -----

"test.op"() {l = #spyre.layout<device_size = [4, 4, 64], stride_map = [0, 256, 1]>} : () -> ()
// CHECK: {{^}}#spyre.layout: stride_map [0, 256, 1] has a stride that is neither > 0 nor -1 (0 only on the lane dim: a splat){{$}}

// -----

// A layout against its tensor's shape (checked by every op that takes or makes a device tensor).

%0 = "test.op"() : () -> tensor<4x256xf32>
%1 = spyre.to_device %0 : tensor<4x256xf32> -> tensor<4x256xf16, #spyre.layout<device_size = [8, 4, 32], stride_map = [32, 256, 1]>>
// CHECK: {{^}}'spyre.to_device': the result: layout of tensor<4x256xf16, #spyre.layout<device_size = [8, 4, 32], stride_map = [32, 256, 1]>> is invalid: the last device dim is the stick: it must hold 64 elements of 2 bytes, not 32{{$}}

// -----

%0 = "test.op"() : () -> tensor<4x256xf32>
%1 = spyre.to_device %0 : tensor<4x256xf32> -> tensor<4x256xf16, #spyre.layout<device_size = [2, 4, 64], stride_map = [128, 256, 2]>>
// CHECK: {{^}}'spyre.to_device': the result: layout of tensor<4x256xf16, #spyre.layout<device_size = [2, 4, 64], stride_map = [128, 256, 2]>> is invalid: the stick (last device dim) must step one element along host dim 1, not 2{{$}}

// -----

// Dim 0 (extent 4) is only "stepped" by a size-1 device dim.
%0 = "test.op"() : () -> tensor<4x256xf32>
%1 = spyre.to_device %0 : tensor<4x256xf32> -> tensor<4x256xf16, #spyre.layout<device_size = [4, 1, 64], stride_map = [64, 256, 1]>>
// CHECK: {{^}}'spyre.to_device': the result: layout of tensor<4x256xf16, #spyre.layout<device_size = [4, 1, 64], stride_map = [64, 256, 1]>> is invalid: host dim 0 (extent 4) is not mapped by any device dim{{$}}

// -----

// Along dim 1 the lanes cover elements 0..63, then device dim 0 jumps by 128: 64..127 are skipped.
%0 = "test.op"() : () -> tensor<4x256xf32>
%1 = spyre.to_device %0 : tensor<4x256xf32> -> tensor<4x256xf16, #spyre.layout<device_size = [2, 4, 64], stride_map = [128, 256, 1]>>
// CHECK: {{^}}'spyre.to_device': the result: layout of tensor<4x256xf16, #spyre.layout<device_size = [2, 4, 64], stride_map = [128, 256, 1]>> is invalid: host dim 1: device dim 0 steps 128 elements, expected 64 (digits must form a mixed radix without gaps or overlaps){{$}}

// -----

// Five sticks along a dim of 256 = 4 sticks: the fifth is padding only.
%0 = "test.op"() : () -> tensor<4x256xf32>
%1 = spyre.to_device %0 : tensor<4x256xf32> -> tensor<4x256xf16, #spyre.layout<device_size = [5, 4, 64], stride_map = [64, 256, 1]>>
// CHECK: {{^}}'spyre.to_device': the result: layout of tensor<4x256xf16, #spyre.layout<device_size = [5, 4, 64], stride_map = [64, 256, 1]>> is invalid: host dim 1: device dim 0 has whole slices of padding (5 x 64 for extent 256){{$}}

// -----

%0 = "test.op"() : () -> tensor<4x256xf32>
%1 = spyre.to_device %0 : tensor<4x256xf32> -> tensor<4x256xf16, #spyre.layout<device_size = [3, 4, 64], stride_map = [64, 256, 1]>>
// CHECK: {{^}}'spyre.to_device': the result: layout of tensor<4x256xf16, #spyre.layout<device_size = [3, 4, 64], stride_map = [64, 256, 1]>> is invalid: host dim 1: device dims cover 192 of 256 elements{{$}}

// -----

// 1000 is neither a multiple of dim 0's stride 256 nor inside dim 1's extent.
%0 = "test.op"() : () -> tensor<4x256xf32>
%1 = spyre.to_device %0 : tensor<4x256xf32> -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [1000, 256, 1]>>
// CHECK: {{^}}'spyre.to_device': the result: layout of tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [1000, 256, 1]>> is invalid: device dim 0 (size 4, stride 1000) does not step along any dim of shape (4, 256){{$}}

// -----

%0 = "test.op"() : () -> tensor<?x256xf32>
%1 = spyre.to_device %0 : tensor<?x256xf32> -> tensor<?x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
// CHECK: {{^}}'spyre.to_device': the result: device tensors have a static shape, got tensor<?x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>{{$}}

// -----

// Device tensors hold f16.
%0 = "test.op"() : () -> tensor<4x256xf32>
%1 = spyre.to_device %0 : tensor<4x256xf32> -> tensor<4x256xf32, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
// CHECK: {{^}}'spyre.to_device': the result: device tensors hold f16 (DL16) elements, got f32 in tensor<4x256xf32, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>{{$}}

// -----

// spyre.to_device

%0 = "test.op"() : () -> tensor<4x256xf32>
%1 = spyre.to_device %0 : tensor<4x256xf32> -> tensor<4x256xf16>
// CHECK: {{^}}'spyre.to_device': the result: expected a device tensor with a #spyre.layout encoding, got tensor<4x256xf16>{{$}}

// -----

%0 = "test.op"() : () -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
%1 = spyre.to_device %0 : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>> -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
// CHECK: {{^}}'spyre.to_device': the input must be a host tensor (no encoding), got tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>{{$}}

// -----

%0 = "test.op"() : () -> tensor<4x100xf32>
%1 = spyre.to_device %0 : tensor<4x100xf32> -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
// CHECK: {{^}}'spyre.to_device': result shape (4, 256) does not hold the 400 elements of (4, 100){{$}}

// -----

%0 = "test.op"() : () -> tensor<256x4xf32>
%1 = spyre.to_device %0 permutation [0, 0] : tensor<256x4xf32> -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
// CHECK: {{^}}'spyre.to_device': [0, 0] is not a permutation of rank 2{{$}}

// -----

%0 = "test.op"() : () -> tensor<4x256x1xf32>
%1 = spyre.to_device %0 permutation [1, 0] : tensor<4x256x1xf32> -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
// CHECK: {{^}}'spyre.to_device': [1, 0] is not a permutation of rank 3{{$}}

// -----

// spyre.from_device

%0 = "test.op"() : () -> tensor<4x256xf32>
%1 = spyre.from_device %0 : tensor<4x256xf32> -> tensor<4x256xf32>
// CHECK: {{^}}'spyre.from_device': the input: expected a device tensor with a #spyre.layout encoding, got tensor<4x256xf32>{{$}}

// -----

%0 = "test.op"() : () -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
%1 = spyre.from_device %0 : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>> -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
// CHECK: {{^}}'spyre.from_device': the result must be a host tensor (no encoding), got tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>{{$}}

// -----

%0 = "test.op"() : () -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
%1 = spyre.from_device %0 : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>> -> tensor<1024xf32>
// CHECK: {{^}}'spyre.from_device': result shape (1024,) != input shape (4, 256){{$}}

// -----

// spyre.matmul

%0, %1 = "test.op"() : () -> (tensor<4x256xf32>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>)
%2 = spyre.matmul %0, %1 : (tensor<4x256xf32>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
// CHECK: {{^}}'spyre.matmul': lhs: expected a device tensor with a #spyre.layout encoding, got tensor<4x256xf32>{{$}}

// -----

// Stride 256 steps along dim 1 (of extent 512), not dim 0.
%0, %1 = "test.op"() : () -> (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>)
%2 = spyre.matmul %0, %1 : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 256, 1]>>
// CHECK: {{^}}'spyre.matmul': the result: layout of tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 256, 1]>> is invalid: host dim 0 (extent 4) is not mapped by any device dim{{$}}

// -----

%0, %1 = "test.op"() : () -> (tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>)
%2 = spyre.matmul %0, %1 : (tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>
// CHECK: {{^}}'spyre.matmul': operands must have the same rank >= 2, got (512,), (256, 512) -> (512,){{$}}

// -----

%0, %1 = "test.op"() : () -> (tensor<2x4x128xf16, #spyre.layout<device_size = [4, 2, 2, 64], stride_map = [128, 64, 512, 1]>>, tensor<3x128x64xf16, #spyre.layout<device_size = [128, 1, 3, 64], stride_map = [64, 64, 8192, 1]>>)
%2 = spyre.matmul %0, %1 : (tensor<2x4x128xf16, #spyre.layout<device_size = [4, 2, 2, 64], stride_map = [128, 64, 512, 1]>>, tensor<3x128x64xf16, #spyre.layout<device_size = [128, 1, 3, 64], stride_map = [64, 64, 8192, 1]>>) -> tensor<2x4x64xf16, #spyre.layout<device_size = [4, 1, 2, 64], stride_map = [64, 64, 256, 1]>>
// CHECK: {{^}}'spyre.matmul': batch dims differ: (2, 4, 128), (3, 128, 64) -> (2, 4, 64){{$}}

// -----

%0, %1 = "test.op"() : () -> (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>)
%2 = spyre.matmul %0, %1 : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
// CHECK: {{^}}'spyre.matmul': contracting dims differ: (4, 256) @ (4, 256){{$}}

// -----

%0, %1 = "test.op"() : () -> (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>)
%2 = spyre.matmul %0, %1 : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
// CHECK: {{^}}'spyre.matmul': result shape (4, 256) != (4, 512){{$}}

// -----

// spyre.pointwise

%0, %1 = "test.op"() : () -> (tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, -1]>>)
%2 = spyre.pointwise %0, %1 : (tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, -1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>> {
^bb0(%a: f32, %b: f32):
  %s = arith.addf %a, %b : f32
  spyre.yield %s : f32
}
// CHECK: {{^}}'spyre.pointwise': input 1: layout of tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, -1]>> is invalid: host dim 0: device dim 0 steps 64 elements, expected 1 (digits must form a mixed radix without gaps or overlaps){{$}}

// -----

%0, %1 = "test.op"() : () -> (tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>, tensor<1024xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>)
%2 = spyre.pointwise %0, %1 : (tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>, tensor<1024xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>> {
^bb0(%a: f32, %b: f32):
  %s = arith.addf %a, %b : f32
  spyre.yield %s : f32
}
// CHECK: {{^}}'spyre.pointwise': input 1 of shape (1024,) does not broadcast to (4, 512){{$}}

// -----

%0, %1 = "test.op"() : () -> (tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>)
%2 = spyre.pointwise %0, %1 : (tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>> {
^bb0(%a: f32):
  spyre.yield %a : f32
}
// CHECK: {{^}}'spyre.pointwise': the body takes one f32 argument per input (2), got (f32){{$}}

// -----

%0 = "test.op"() : () -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
%1 = spyre.pointwise %0 : (tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>> {
^bb0(%a: f16):
  %n = arith.negf %a : f16
  spyre.yield %n : f16
}
// CHECK: {{^}}'spyre.pointwise': the body takes one f32 argument per input (1), got (f16){{$}}

// -----

%0 = "test.op"() : () -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
%1 = spyre.pointwise %0 : (tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>> {
^bb0(%a: f32):
  %s = math.atan %a : f32
  spyre.yield %s : f32
}
// CHECK: {{^}}'spyre.pointwise': 'math.atan' has no SFP instruction (supported: arith.addf, arith.cmpf, arith.constant, arith.divf, arith.maximumf, arith.minimumf, arith.mulf, arith.negf, arith.select, arith.subf, math.absf, math.cos, math.erf, math.exp, math.log, math.rsqrt, math.sin, math.sqrt, math.tanh){{$}}

// -----

%0 = "test.op"() : () -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
%1 = spyre.pointwise %0 : (tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>> {
^bb0(%a: f32):
  %c = arith.constant 1.000000e+00 : f16
  spyre.yield %a : f32
}
// CHECK: {{^}}'spyre.pointwise': body op 'arith.constant' must compute f32{{$}}

// -----

%0 = "test.op"() : () -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
%1 = spyre.pointwise %0 : (tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>> {
^bb0(%a: f32):
  spyre.yield %a, %a : f32, f32
}
// CHECK: {{^}}'spyre.pointwise': the body must yield exactly one f32{{$}}

// -----

%0 = "test.op"() : () -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
%1 = spyre.pointwise %0 : (tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>> {
^bb0(%a: f32):
}
// CHECK: {{^}}Operation spyre.pointwise contains empty block in single-block region that expects at least a terminator{{$}}

// -----

// Body ops read only the elements and each other's results.
%0 = "test.op"() : () -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
%two = arith.constant 2.000000e+00 : f32
%1 = spyre.pointwise %0 : (tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>> {
^bb0(%a: f32):
  %m = arith.mulf %a, %two : f32
  spyre.yield %m : f32
}
// CHECK: {{^}}'spyre.pointwise': body op 'arith.mulf' uses %two defined outside the body{{$}}

// -----

%0 = "test.op"() : () -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
%two = arith.constant 2.000000e+00 : f32
%1 = spyre.pointwise %0 : (tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>> {
^bb0(%a: f32):
  spyre.yield %two : f32
}
// CHECK: {{^}}'spyre.pointwise': body op 'spyre.yield' uses %two defined outside the body{{$}}

// -----

// spyre.permute

%0 = "test.op"() : () -> tensor<4x256xf16>
%1 = spyre.permute %0 permutation [1, 0] : tensor<4x256xf16> -> tensor<256x4xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [256, 1, 4]>>
// CHECK: {{^}}'spyre.permute': the input: expected a device tensor with a #spyre.layout encoding, got tensor<4x256xf16>{{$}}

// -----

%0 = "test.op"() : () -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
%1 = spyre.permute %0 permutation [1, 1] : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>> -> tensor<256x4xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [256, 1, 4]>>
// CHECK: {{^}}'spyre.permute': [1, 1] is not a permutation of rank 2{{$}}

// -----

// The generic layout of (256, 4) is other bytes: a permute is a view, not a copy.
%0 = "test.op"() : () -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
%1 = spyre.permute %0 permutation [1, 0] : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>> -> tensor<256x4xf16, #spyre.layout<device_size = [1, 256, 64], stride_map = [64, 4, 1]>>
// CHECK: {{^}}'spyre.permute' is a free view: its result must be (256, 4) with device_size = [4, 4, 64], stride_map = [256, 1, 4]{{$}}

// -----

// spyre.reshape

%0 = "test.op"() : () -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
%1 = spyre.reshape %0 : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>> -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
// CHECK: {{^}}'spyre.reshape': cannot reshape (4, 256) to (4, 512){{$}}

// -----

// Rows of 100 elements are padded to 128: flattening them would move the padding.
%0 = "test.op"() : () -> tensor<4x100xf16, #spyre.layout<device_size = [2, 4, 64], stride_map = [64, 100, 1]>>
%1 = spyre.reshape %0 : tensor<4x100xf16, #spyre.layout<device_size = [2, 4, 64], stride_map = [64, 100, 1]>> -> tensor<400xf16, #spyre.layout<device_size = [7, 64], stride_map = [64, 1]>>
// CHECK: {{^}}'spyre.reshape': (4, 100) -> (400,) is not a free view of this layout (it would move padding or split a stick){{$}}

// -----

%0 = "test.op"() : () -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
%1 = spyre.reshape %0 : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>> -> tensor<1024xf16, #spyre.layout<device_size = [16, 64], stride_map = [64, 1]>>
// CHECK: {{^}}'spyre.reshape' is a free view: its result layout must be device_size = [4, 4, 64], stride_map = [64, 256, 1]{{$}}

// -----

// spyre.restickify

%0 = "test.op"() : () -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
%1 = spyre.restickify %0 : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>> -> tensor<256x4xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [256, 1, 4]>>
// CHECK: {{^}}'spyre.restickify': shapes differ: (4, 256) -> (256, 4){{$}}

// -----

// spyre.kernel and spyre.yield

%0 = "test.op"() : () -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
%1 = spyre.kernel "k0"(%0) : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>> {
^bb0(%a: tensor<4x256xf16, #spyre.layout<device_size = [1, 256, 64], stride_map = [64, 1, 256]>>):
  spyre.yield %a : tensor<4x256xf16, #spyre.layout<device_size = [1, 256, 64], stride_map = [64, 1, 256]>>
}
// CHECK: {{^}}'spyre.kernel' @k0: block arguments must match the inputs' types{{$}}

// -----

%0 = "test.op"() : () -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
%1 = spyre.kernel "k0"(%0) : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) -> tensor<256x4xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [256, 1, 4]>> {
^bb0(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>):
  spyre.yield %a : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
}
// CHECK: {{^}}'spyre.kernel' @k0: must end with spyre.yield of the result types{{$}}

// -----

%0 = "test.op"() : () -> tensor<4x256xf32>
%1 = spyre.kernel "k0"(%0) : (tensor<4x256xf32>) -> tensor<4x256xf32> {
^bb0(%a: tensor<4x256xf32>):
  spyre.yield %a : tensor<4x256xf32>
}
// CHECK: {{^}}'spyre.kernel' @k0: input 0: expected a device tensor with a #spyre.layout encoding, got tensor<4x256xf32>{{$}}

// -----

%0 = "test.op"() : () -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
%1:2 = spyre.kernel "k0"(%0) : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) -> (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<4x256xf16>) {
^bb0(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>):
  %h = "test.op"() : () -> tensor<4x256xf16>
  spyre.yield %a, %h : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<4x256xf16>
}
// CHECK: {{^}}'spyre.kernel' @k0: result 1: expected a device tensor with a #spyre.layout encoding, got tensor<4x256xf16>{{$}}

// -----

%0 = "test.op"() : () -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
spyre.yield %0 : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
// CHECK: {{^}}'spyre.yield' expects parent op to be one of 'spyre.pointwise', 'spyre.kernel'{{$}}

// -----

"test.op"() {split = #spyre.split<m = 4, n = 0>} : () -> ()
// CHECK: {{^}}#spyre.split: every count must be >= 1, got {'m': 4, 'n': 0}{{$}}

// -----

"test.op"() {split = #spyre.split<m = 4, m = 2>} : () -> ()
// CHECK: {{^}}#spyre.split: repeated name in ['m', 'm']{{$}}

// -----

"test.op"() {lx = #spyre.lx<in0 = 0, in1 = 100, out = 256>} : () -> ()
// CHECK: {{^}}#spyre.lx: offsets must be >= 0 and 128-byte aligned, got {'in1': 100}{{$}}

// -----

"test.op"() {lx = #spyre.lx<in0 = -128>} : () -> ()
// CHECK: {{^}}#spyre.lx: offsets must be >= 0 and 128-byte aligned, got {'in0': -128}{{$}}

// -----

"test.op"() {lx = #spyre.lx<in0 = 0, in0 = 128>} : () -> ()
// CHECK: {{^}}#spyre.lx: repeated name in ['in0', 'in0']{{$}}

// -----

// A kernel holds one compute op, a matmul and its epilogue, or a row group, and spyre ops only.
%a = "test.op"() : () -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
%r = spyre.kernel "k"(%a) : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>> {
^bb0(%x: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>):
  %y = spyre.restickify %x : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>> -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
  %z = spyre.restickify %y : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>> -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
  spyre.yield %z : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
}
// CHECK: {{^}}'spyre.kernel' @k: a kernel of several compute ops holds reductions and pointwise ops only{{$}}

// -----

%a = "test.op"() : () -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
%r = spyre.kernel "k"(%a) : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>> {
^bb0(%x: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>):
  %y = spyre.restickify %x : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>> -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
  "test.op"() : () -> ()
  spyre.yield %y : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
}
// CHECK: {{^}}'spyre.kernel' @k: holds one compute op (spyre.matmul, spyre.pointwise, spyre.reduce, spyre.gather, spyre.scatter, spyre.slice, spyre.concat or spyre.restickify), a matmul and its pointwise epilogue, a concat and slices it reads, a pointwise op and the sliced concats it reads, a row group of reductions and pointwise ops, attention (a matmul, a row group, a matmul), or a gather and the matmul or restickify that reads its rows, and views; found 1 compute op(s) and test.op{{$}}

// -----

// split/chunks name the compute op's iteration dims (spyre_mlir/dialects/spyre/iteration.py).
%a = "test.op"() : () -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
%r = spyre.kernel "k"(%a) split <m = 2> : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>> {
^bb0(%x: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>):
  %y = spyre.restickify %x : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>> -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
  spyre.yield %y : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
}
// CHECK: {{^}}'spyre.kernel' @k: split names ['m'] are not the iteration dims ['d0', 'd1'] of its spyre.restickify{{$}}

// -----

%a = "test.op"() : () -> tensor<3x100xf16, #spyre.layout<device_size = [2, 3, 64], stride_map = [64, 100, 1]>>
%r = spyre.reduce "prod" %a dim 1 : tensor<3x100xf16, #spyre.layout<device_size = [2, 3, 64], stride_map = [64, 100, 1]>> -> tensor<3x1xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 1, 0]>>
// CHECK: {{^}}'spyre.reduce': kind must be one of sum, mean, max, min, got 'prod'{{$}}

// -----

%a = "test.op"() : () -> tensor<3x100xf16, #spyre.layout<device_size = [2, 3, 64], stride_map = [64, 100, 1]>>
%r = spyre.reduce "sum" %a dim 2 : tensor<3x100xf16, #spyre.layout<device_size = [2, 3, 64], stride_map = [64, 100, 1]>> -> tensor<3x1xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 1, 0]>>
// CHECK: {{^}}'spyre.reduce': dim 2 is out of range for shape (3, 100){{$}}

// -----

%a = "test.op"() : () -> tensor<3x100xf16, #spyre.layout<device_size = [2, 3, 64], stride_map = [64, 100, 1]>>
%r = spyre.reduce "sum" %a dim 0 : tensor<3x100xf16, #spyre.layout<device_size = [2, 3, 64], stride_map = [64, 100, 1]>> -> tensor<3x1xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 1, 0]>>
// CHECK: {{^}}'spyre.reduce': result shape (3, 1) != (1, 100) (the reduced dim is kept, extent 1){{$}}

// -----

%t = "test.op"() : () -> tensor<50x64xf16, #spyre.layout<device_size = [1, 50, 64], stride_map = [64, 64, 1]>>
%i = "test.op"() : () -> tensor<10xf32>
%g = spyre.gather %t[%i] : (tensor<50x64xf16, #spyre.layout<device_size = [1, 50, 64], stride_map = [64, 64, 1]>>, tensor<10xf32>) -> tensor<10x64xf16, #spyre.layout<device_size = [1, 10, 64], stride_map = [64, 64, 1]>>
// CHECK: {{^}}'spyre.gather': indices must be a host integer tensor, got tensor<10xf32>{{$}}

// -----

%t = "test.op"() : () -> tensor<50x64xf16, #spyre.layout<device_size = [1, 50, 64], stride_map = [64, 64, 1]>>
%i = "test.op"() : () -> tensor<10xsi64>
%g = spyre.gather %t[%i] : (tensor<50x64xf16, #spyre.layout<device_size = [1, 50, 64], stride_map = [64, 64, 1]>>, tensor<10xsi64>) -> tensor<9x64xf16, #spyre.layout<device_size = [1, 9, 64], stride_map = [64, 64, 1]>>
// CHECK: {{^}}'spyre.gather': table (50, 64) and 10 indices give (10, 64), not (9, 64){{$}}

// -----

%e = "test.op"() : () -> tensor<2x5x100xf16, #spyre.layout<device_size = [5, 2, 2, 64], stride_map = [100, 64, 500, 1]>>
%s = spyre.slice %e start [0, 3, 0] : tensor<2x5x100xf16, #spyre.layout<device_size = [5, 2, 2, 64], stride_map = [100, 64, 500, 1]>> -> tensor<2x3x100xf16, #spyre.layout<device_size = [3, 2, 2, 64], stride_map = [100, 64, 300, 1]>>
// CHECK: {{^}}'spyre.slice': the box at [0, 3, 0] of size (2, 3, 100) leaves (2, 5, 100){{$}}

// -----

%e = "test.op"() : () -> tensor<2x5x100xf16, #spyre.layout<device_size = [5, 2, 2, 64], stride_map = [100, 64, 500, 1]>>
%s = spyre.slice %e start [0, 0, 10] : tensor<2x5x100xf16, #spyre.layout<device_size = [5, 2, 2, 64], stride_map = [100, 64, 500, 1]>> -> tensor<2x5x36xf16, #spyre.layout<device_size = [5, 1, 2, 64], stride_map = [36, 64, 180, 1]>>
// CHECK: {{^}}'spyre.slice': start 10 along the stick dim 2 is not a multiple of 64{{$}}

// -----

// A step strides the copy along the other dims; the box (start + (n - 1) * step) must fit.
%e = "test.op"() : () -> tensor<2x5x100xf16, #spyre.layout<device_size = [5, 2, 2, 64], stride_map = [100, 64, 500, 1]>>
%s = spyre.slice %e start [0, 1, 0] step [1, 2, 1] : tensor<2x5x100xf16, #spyre.layout<device_size = [5, 2, 2, 64], stride_map = [100, 64, 500, 1]>> -> tensor<2x3x100xf16, #spyre.layout<device_size = [3, 2, 2, 64], stride_map = [100, 64, 300, 1]>>
// CHECK: {{^}}'spyre.slice': the box at [0, 1, 0] of size (2, 3, 100) with step [1, 2, 1] leaves (2, 5, 100){{$}}

// -----

%e = "test.op"() : () -> tensor<2x5x100xf16, #spyre.layout<device_size = [5, 2, 2, 64], stride_map = [100, 64, 500, 1]>>
%s = spyre.slice %e start [0, 0, 0] step [1, 0, 1] : tensor<2x5x100xf16, #spyre.layout<device_size = [5, 2, 2, 64], stride_map = [100, 64, 500, 1]>> -> tensor<2x3x100xf16, #spyre.layout<device_size = [3, 2, 2, 64], stride_map = [100, 64, 300, 1]>>
// CHECK: {{^}}'spyre.slice': step [1, 0, 1] must be >= 1 along every dim{{$}}

// -----

%e = "test.op"() : () -> tensor<2x5x100xf16, #spyre.layout<device_size = [5, 2, 2, 64], stride_map = [100, 64, 500, 1]>>
%s = spyre.slice %e start [0, 0, 0] step [1, 2] : tensor<2x5x100xf16, #spyre.layout<device_size = [5, 2, 2, 64], stride_map = [100, 64, 500, 1]>> -> tensor<2x3x100xf16, #spyre.layout<device_size = [3, 2, 2, 64], stride_map = [100, 64, 300, 1]>>
// CHECK: {{^}}'spyre.slice': step [1, 2] must have the rank of (2, 5, 100){{$}}

// -----

%e = "test.op"() : () -> tensor<2x5x100xf16, #spyre.layout<device_size = [5, 2, 2, 64], stride_map = [100, 64, 500, 1]>>
%s = spyre.slice %e start [0, 0, 0] step [1, 1, 2] : tensor<2x5x100xf16, #spyre.layout<device_size = [5, 2, 2, 64], stride_map = [100, 64, 500, 1]>> -> tensor<2x5x50xf16, #spyre.layout<device_size = [5, 1, 2, 64], stride_map = [50, 64, 250, 1]>>
// CHECK: {{^}}'spyre.slice': step 2 along the stick dim 2: the copy moves whole sticks, so the step along the stick dim must be 1{{$}}

// -----

%a = "test.op"() : () -> tensor<3x100xf16, #spyre.layout<device_size = [2, 3, 64], stride_map = [64, 100, 1]>>
%p = spyre.pointwise %a : (tensor<3x100xf16, #spyre.layout<device_size = [2, 3, 64], stride_map = [64, 100, 1]>>) -> tensor<3x100xf16, #spyre.layout<device_size = [2, 3, 64], stride_map = [64, 100, 1]>> {
^bb0(%x: f32):
  %one = arith.constant 1.0 : f32
  %c = arith.cmpf one, %x, %one : f32
  %s = arith.select %c, %x, %one : f32
  spyre.yield %s : f32
}
// CHECK: {{^}}'spyre.pointwise': the SFP selects on (mask != 0): arith.cmpf one/une %mask, 0.0{{$}}

// -----

// Where values live between launches and how cores share work: the kernel marks
// (spyre-resident-chains, spyre-divide-work, spyre-onchip-relayout).

// Each mark verifies itself (spyre/attrs.py), in the kernel or anywhere an attribute may be.
%a, %b = "test.op"() : () -> (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>)
%c = spyre.kernel "k0"(%a, %b) split <n = 2, m = 1, k = 1> resident_out <offset = 100> : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>> {
^bb0(%ka: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, %kb: tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>):
  %kc = spyre.matmul %ka, %kb : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
  spyre.yield %kc : tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
}
// CHECK: {{^}}#spyre.resident_out: offset = 100 is not an LX byte offset >= 0, a multiple of 128{{$}}

// -----

"test.op"() {m = #spyre.lx_budget<bytes = -128>} : () -> ()
// CHECK: {{^}}#spyre.lx_budget: bytes = -128 is not an LX byte offset >= 0, a multiple of 128{{$}}

// -----

"test.op"() {m = #spyre.resident_in<input = 0, offset = 64>} : () -> ()
// CHECK: {{^}}#spyre.resident_in: offset = 64 is not an LX byte offset >= 0, a multiple of 128{{$}}

// -----

"test.op"() {m = #spyre.resident_in<input = -1, offset = 0>} : () -> ()
// CHECK: {{^}}#spyre.resident_in: input = -1 is not an input index{{$}}

// -----

"test.op"() {m = #spyre.core_order[0, 0]} : () -> ()
// CHECK: {{^}}#spyre.core_order: [0, 0] is not a permutation of 0 .. n - 1 (n >= 1, the split's boxes){{$}}

// -----

"test.op"() {m = #spyre.multicast<chain = 1>} : () -> ()
// CHECK: {{^}}#spyre.multicast: a chain has >= 2 cores, got 1{{$}}

// -----

"test.op"() {m = #spyre.onchip<src = 1648512, dst = 1664960, staging = 1677696, src_rows = [[0, 64]], dst_boxes = [[0, 1, 0, 100]]>} : () -> ()
// CHECK: {{^}}#spyre.onchip: dst = 1664960 is not an LX byte offset >= 0, a multiple of 128{{$}}

// -----

// Bands for three cores, boxes for four.
%s = "test.op"() : () -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
%r = spyre.kernel "t_k1"(%s) split <d0 = 4, d1 = 1> onchip <src = 1648512, dst = 1664896, staging = 1677696, src_rows = [[0, 64], [64, 128], [128, 256]], dst_boxes = [[0, 1, 0, 100], [1, 2, 0, 100], [2, 3, 0, 100], [3, 4, 0, 100]]> : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
^bb0(%ks: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
  %kr = spyre.restickify %ks : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  spyre.yield %kr : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
}
// CHECK: {{^}}#spyre.onchip: src_rows and dst_boxes have one entry per core, got 3 and 4{{$}}

// -----

// A band that is not whole 64-row blocks.
%s = "test.op"() : () -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
%r = spyre.kernel "t_k1"(%s) split <d0 = 4, d1 = 1> onchip <src = 1648512, dst = 1664896, staging = 1677696, src_rows = [[0, 64], [64, 100], [100, 192], [192, 256]], dst_boxes = [[0, 1, 0, 100], [1, 2, 0, 100], [2, 3, 0, 100], [3, 4, 0, 100]]> : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
^bb0(%ks: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
  %kr = spyre.restickify %ks : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  spyre.yield %kr : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
}
// CHECK: {{^}}#spyre.onchip: src_rows of core 1, [64, 100], is not [r0, r1) of whole 64-row blocks, or [0, 0]{{$}}

// -----

%s = "test.op"() : () -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
%r = spyre.kernel "t_k1"(%s) split <d0 = 4, d1 = 1> onchip <src = 1648512, dst = 1664896, staging = 1677696, src_rows = [[0, 64], [64, 128], [128, 192], [192, 256]], dst_boxes = [[0, 1, 0, 100], [1, 2, 0, 100], [2, 3, 0, 100], [3, 4, 100, 100]]> : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
^bb0(%ks: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
  %kr = spyre.restickify %ks : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  spyre.yield %kr : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
}
// CHECK: {{^}}#spyre.onchip: dst_boxes of core 3, [3, 4, 100, 100], is not [s0, s1, c0, c1] (sticks [s0, s1) x rows [c0, c1)), or zeros{{$}}

// -----

// The result's boxes over the source bands: dst at src.
%s = "test.op"() : () -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
%r = spyre.kernel "t_k1"(%s) split <d0 = 4, d1 = 1> onchip <src = 1648512, dst = 1648512, staging = 1677696, src_rows = [[0, 64], [64, 128], [128, 192], [192, 256]], dst_boxes = [[0, 1, 0, 100], [1, 2, 0, 100], [2, 3, 0, 100], [3, 4, 0, 100]]> : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
^bb0(%ks: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
  %kr = spyre.restickify %ks : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  spyre.yield %kr : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
}
// CHECK: {{^}}#spyre.onchip: dst (LX bytes [1648512, 1661312)) and src (LX bytes [1648512, 1664896)) overlap{{$}}

// -----

// The marks against the kernel (spyre.KernelOp): an input it does not have.
%a, %b = "test.op"() : () -> (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>)
%c = spyre.kernel "k0"(%a, %b) split <n = 2, m = 1, k = 1> resident_in <input = 2, offset = 0> : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>> {
^bb0(%ka: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, %kb: tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>):
  %kc = spyre.matmul %ka, %kb : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
  spyre.yield %kc : tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
}
// CHECK: {{^}}'spyre.kernel' @k0: resident_in names input 2, the kernel has 2 inputs{{$}}

// -----

// A matmul reads only its A from LX (its program loads B from DDR, where nothing wrote it).
%a, %b = "test.op"() : () -> (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>)
%c = spyre.kernel "k0"(%a, %b) split <n = 2, m = 1, k = 1> resident_in <input = 1, offset = 0> : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>> {
^bb0(%ka: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, %kb: tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>):
  %kc = spyre.matmul %ka, %kb : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
  spyre.yield %kc : tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
}
// CHECK: {{^}}'spyre.kernel' @k0: resident_in: only a matmul's A operand or a pointwise kernel's input is read from LX{{$}}

// -----

// A restickify's program loads its input from DDR (spyre-onchip-relayout reads a relayout's
// result from LX in a pointwise kernel only).
%s = "test.op"() : () -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
%r = spyre.kernel "t_k1"(%s) split <d0 = 4, d1 = 1> resident_in <input = 0, offset = 0> : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
^bb0(%ks: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
  %kr = spyre.restickify %ks : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  spyre.yield %kr : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
}
// CHECK: {{^}}'spyre.kernel' @t_k1: resident_in: only a matmul's A operand or a pointwise kernel's input is read from LX{{$}}

// -----

// A restickify's program stores its result to DDR.
%s = "test.op"() : () -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
%r = spyre.kernel "t_k1"(%s) split <d0 = 4, d1 = 1> resident_out <offset = 0> : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
^bb0(%ks: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
  %kr = spyre.restickify %ks : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  spyre.yield %kr : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
}
// CHECK: {{^}}'spyre.kernel' @t_k1: resident_out: only a matmul's or a pointwise kernel's result stays in LX{{$}}

// -----

// The k parts of a matmul add their sums over the ring; only the first has the result.
%a, %b = "test.op"() : () -> (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>)
%c = spyre.kernel "k0"(%a, %b) split <n = 1, m = 1, k = 2> resident_out <offset = 0> : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>> {
^bb0(%ka: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, %kb: tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>):
  %kc = spyre.matmul %ka, %kb : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
  spyre.yield %kc : tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
}
// CHECK: {{^}}'spyre.kernel' @k0: resident_out: a matmul split along k cannot keep its result in LX{{$}}

// -----

%a, %b = "test.op"() : () -> (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>)
%c = spyre.kernel "k0"(%a, %b) split <n = 2, m = 2, k = 1> core_order [1, 0] : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>> {
^bb0(%ka: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, %kb: tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>):
  %kc = spyre.matmul %ka, %kb : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
  spyre.yield %kc : tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
}
// CHECK: {{^}}'spyre.kernel' @k0: core_order names 2 cores, its split has 4 boxes{{$}}

// -----

%a, %b = "test.op"() : () -> (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>)
%c = spyre.kernel "k0"(%a, %b) core_order [1, 0] : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>> {
^bb0(%ka: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, %kb: tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>):
  %kc = spyre.matmul %ka, %kb : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
  spyre.yield %kc : tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
}
// CHECK: {{^}}'spyre.kernel' @k0: core_order places the boxes of a split, and the kernel has none{{$}}

// -----

%a = "test.op"() : () -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
%c = spyre.kernel "k0"(%a) split <d0 = 4, d1 = 1> multicast <chain = 2> : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
^bb0(%ka: tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>):
  %kc = spyre.pointwise %ka : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
  ^bb0(%x: f32):
    spyre.yield %x : f32
  }
  spyre.yield %kc : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
}
// CHECK: {{^}}'spyre.kernel' @k0: multicast passes a matmul's B tiles down the ring, and the kernel has no matmul{{$}}

// -----

// A resident value under the budget: the planner may place a buffer over it.
%a = "test.op"() : () -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
%c = spyre.kernel "k0"(%a) split <d0 = 4, d1 = 1> resident_out <offset = 1024> lx_budget <bytes = 4096> : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
^bb0(%ka: tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>):
  %kc = spyre.pointwise %ka : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
  ^bb0(%x: f32):
    spyre.yield %x : f32
  }
  spyre.yield %kc : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
}
// CHECK: {{^}}'spyre.kernel' @k0: resident_out at LX byte 1024 lies below lx_budget 4096, where the planner places the kernel's buffers{{$}}

// -----

%s = "test.op"() : () -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
%r = spyre.kernel "t_k1"(%s) split <d0 = 4, d1 = 1> onchip <src = 1648512, dst = 1664896, staging = 1677696, src_rows = [[0, 64], [64, 128], [128, 192], [192, 256]], dst_boxes = [[0, 1, 0, 100], [1, 2, 0, 100], [2, 3, 0, 100], [3, 4, 0, 100]]> lx_budget <bytes = 1664896> : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
^bb0(%ks: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
  %kr = spyre.restickify %ks : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  spyre.yield %kr : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
}
// CHECK: {{^}}'spyre.kernel' @t_k1: src at LX byte 1648512 lies below lx_budget 1664896, where the planner places the kernel's buffers{{$}}

// -----

// A mark spelled as a discardable attribute would be ignored.
%a, %b = "test.op"() : () -> (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>)
%c = spyre.kernel "k0"(%a, %b) split <n = 2, m = 1, k = 1> {spyre.resident_out = 0 : i64} : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>> {
^bb0(%ka: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, %kb: tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>):
  %kc = spyre.matmul %ka, %kb : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
  spyre.yield %kc : tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
}
// CHECK: {{^}}'spyre.kernel' @k0: spyre.resident_out is not an attribute of spyre.kernel (its marks are the properties multicast, core_order, resident_in, resident_out, onchip and lx_budget){{$}}

// -----

// An onchip mark against its kernel: the mark on a kernel that is not a restickify.
%a = "test.op"() : () -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
%c = spyre.kernel "k0"(%a) split <d0 = 4, d1 = 1> onchip <src = 1648512, dst = 1664896, staging = 1677696, src_rows = [[0, 64], [64, 128], [128, 192], [192, 256]], dst_boxes = [[0, 1, 0, 100], [1, 2, 0, 100], [2, 3, 0, 100], [3, 4, 0, 100]]> : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
^bb0(%ka: tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>):
  %kc = spyre.pointwise %ka : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
  ^bb0(%x: f32):
    spyre.yield %x : f32
  }
  spyre.yield %kc : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
}
// CHECK: {{^}}'spyre.kernel' @k0: onchip: marks a kernel of one restickify, this one has ['spyre.pointwise']{{$}}

// -----

// A result that is not a rank-2 tensor.
%s = "test.op"() : () -> tensor<2x64x64xf16, #spyre.layout<device_size = [64, 1, 2, 64], stride_map = [64, 64, 4096, 1]>>
%r = spyre.kernel "t_k1"(%s) split <d0 = 1, d1 = 1, d2 = 2> onchip <src = 1648512, dst = 1664896, staging = 1677696, src_rows = [[0, 64], [64, 128], [128, 192], [192, 256]], dst_boxes = [[0, 1, 0, 100], [1, 2, 0, 100], [2, 3, 0, 100], [3, 4, 0, 100]]> : (tensor<2x64x64xf16, #spyre.layout<device_size = [64, 1, 2, 64], stride_map = [64, 64, 4096, 1]>>) -> tensor<2x64x64xf16, #spyre.layout<device_size = [64, 1, 2, 64], stride_map = [64, 64, 4096, 1]>> {
^bb0(%ks: tensor<2x64x64xf16, #spyre.layout<device_size = [64, 1, 2, 64], stride_map = [64, 64, 4096, 1]>>):
  %kr = spyre.restickify %ks : tensor<2x64x64xf16, #spyre.layout<device_size = [64, 1, 2, 64], stride_map = [64, 64, 4096, 1]>> -> tensor<2x64x64xf16, #spyre.layout<device_size = [64, 1, 2, 64], stride_map = [64, 64, 4096, 1]>>
  spyre.yield %kr : tensor<2x64x64xf16, #spyre.layout<device_size = [64, 1, 2, 64], stride_map = [64, 64, 4096, 1]>>
}
// CHECK: {{^}}'spyre.kernel' @t_k1: onchip: the result (2, 64, 64) in device_size [64, 1, 2, 64], stride_map [64, 64, 4096, 1] is not a rank-2 f16 tensor{{$}}

// -----

// Not a transpose of the generic layout (a stick permutation).
%s = "test.op"() : () -> tensor<100x256xf16, #spyre.layout<device_size = [100, 4, 64], stride_map = [256, 64, 1]>>
%r = spyre.kernel "t_k1"(%s) split <d0 = 4, d1 = 1> onchip <src = 1648512, dst = 1664896, staging = 1677696, src_rows = [[0, 64], [64, 128], [128, 192], [192, 256]], dst_boxes = [[0, 1, 0, 100], [1, 2, 0, 100], [2, 3, 0, 100], [3, 4, 0, 100]]> : (tensor<100x256xf16, #spyre.layout<device_size = [100, 4, 64], stride_map = [256, 64, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
^bb0(%ks: tensor<100x256xf16, #spyre.layout<device_size = [100, 4, 64], stride_map = [256, 64, 1]>>):
  %kr = spyre.restickify %ks : tensor<100x256xf16, #spyre.layout<device_size = [100, 4, 64], stride_map = [256, 64, 1]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  spyre.yield %kr : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
}
// CHECK: {{^}}'spyre.kernel' @t_k1: onchip: (100, 256) in device_size [100, 4, 64], stride_map [256, 64, 1] to (100, 256) in device_size [4, 100, 64], stride_map [64, 256, 1] is not the generic layout's transposed view to the generic layout{{$}}

// -----

// The transposed dim (100) not whole 64-row blocks.
%s = "test.op"() : () -> tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>>
%r = spyre.kernel "t_k1"(%s) split <d0 = 2, d1 = 4> onchip <src = 0, dst = 32768, staging = 65536, src_rows = [[0, 64]], dst_boxes = [[0, 2, 0, 200]]> : (tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>>) -> tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>> {
^bb0(%ks: tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>>):
  %kr = spyre.restickify %ks : tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>> -> tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>
  spyre.yield %kr : tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>
}
// CHECK: {{^}}'spyre.kernel' @t_k1: onchip: the transposed dim (100) is not a multiple of 64{{$}}

// -----

// Core 3's band missing: rows 192 .. 255 would never be transposed, and a quarter of the
// result would come back as whatever LX held.
%s = "test.op"() : () -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
%r = spyre.kernel "t_k1"(%s) split <d0 = 4, d1 = 1> onchip <src = 1648512, dst = 1664896, staging = 1677696, src_rows = [[0, 64], [64, 128], [128, 192], [0, 0]], dst_boxes = [[0, 1, 0, 100], [1, 2, 0, 100], [2, 3, 0, 100], [3, 4, 0, 100]]> : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
^bb0(%ks: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
  %kr = spyre.restickify %ks : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  spyre.yield %kr : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
}
// CHECK: {{^}}'spyre.kernel' @t_k1: onchip: src_rows [[0, 64], [64, 128], [128, 192], [0, 0]] do not hold each of the 256 source rows once{{$}}

// -----

%s = "test.op"() : () -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
%r = spyre.kernel "t_k1"(%s) split <d0 = 4, d1 = 1> onchip <src = 0, dst = 32768, staging = 65536, src_rows = [[0, 64], [64, 128], [128, 192], [192, 320]], dst_boxes = [[0, 1, 0, 100], [1, 2, 0, 100], [2, 3, 0, 100], [3, 4, 0, 100]]> : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
^bb0(%ks: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
  %kr = spyre.restickify %ks : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  spyre.yield %kr : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
}
// CHECK: {{^}}'spyre.kernel' @t_k1: onchip: src_rows of core 3, [192, 320), runs past the 256 source rows{{$}}

// -----

// A box of half the result rows: rows 50 .. 99 of the first stick would never be written.
%s = "test.op"() : () -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
%r = spyre.kernel "t_k1"(%s) split <d0 = 4, d1 = 1> onchip <src = 1648512, dst = 1664896, staging = 1677696, src_rows = [[0, 64], [64, 128], [128, 192], [192, 256]], dst_boxes = [[0, 1, 0, 50], [1, 2, 0, 100], [2, 3, 0, 100], [3, 4, 0, 100]]> : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
^bb0(%ks: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
  %kr = spyre.restickify %ks : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  spyre.yield %kr : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
}
// CHECK: {{^}}'spyre.kernel' @t_k1: onchip: dst_boxes [[0, 1, 0, 50], [1, 2, 0, 100], [2, 3, 0, 100], [3, 4, 0, 100]] do not hold each of the result's 4 x 100 sticks once{{$}}

// -----

%s = "test.op"() : () -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
%r = spyre.kernel "t_k1"(%s) split <d0 = 4, d1 = 1> onchip <src = 1648512, dst = 1664896, staging = 1677696, src_rows = [[0, 64], [64, 128], [128, 192], [192, 256]], dst_boxes = [[0, 1, 0, 100], [1, 2, 0, 100], [2, 3, 0, 100], [3, 5, 0, 100]]> : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
^bb0(%ks: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
  %kr = spyre.restickify %ks : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  spyre.yield %kr : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
}
// CHECK: {{^}}'spyre.kernel' @t_k1: onchip: dst_boxes of core 3, sticks [3, 5) x rows [0, 100), is not a box of the result's 4 x 100{{$}}

// -----

// Along the stick dim each input but the last holds whole sticks.
%a, %b = "test.op"() : () -> (tensor<3x36xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 36, 1]>>, tensor<3x64xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 64, 1]>>)
%c = spyre.concat %a, %b dim 1 : (tensor<3x36xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 36, 1]>>, tensor<3x64xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 64, 1]>>) -> tensor<3x100xf16, #spyre.layout<device_size = [2, 3, 64], stride_map = [64, 100, 1]>>
// CHECK: {{^}}'spyre.concat': input 0 holds 36 elements of the stick dim 1, not whole sticks of 64: the next input would start inside a stick{{$}}

// -----

%a, %b = "test.op"() : () -> (tensor<3x64xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 64, 1]>>, tensor<3x36xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 36, 1]>>)
%c = spyre.concat %a, %b dim 1 : (tensor<3x64xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 64, 1]>>, tensor<3x36xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 36, 1]>>) -> tensor<3x128xf16, #spyre.layout<device_size = [2, 3, 64], stride_map = [64, 128, 1]>>
// CHECK: {{^}}'spyre.concat': the inputs' extents [64, 36] along dim 1 do not sum to the result's 128{{$}}

// -----

%a, %b = "test.op"() : () -> (tensor<3x64xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 64, 1]>>, tensor<3x100xf16, #spyre.layout<device_size = [2, 3, 64], stride_map = [64, 100, 1]>>)
%c = spyre.concat %a, %b dim 0 : (tensor<3x64xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 64, 1]>>, tensor<3x100xf16, #spyre.layout<device_size = [2, 3, 64], stride_map = [64, 100, 1]>>) -> tensor<3x128xf16, #spyre.layout<device_size = [2, 3, 64], stride_map = [64, 128, 1]>>
// CHECK: {{^}}'spyre.concat': input 0 (3, 64) differs from the result (3, 128) along a dim other than 0{{$}}

// -----

%a, %b = "test.op"() : () -> (tensor<3x64xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 64, 1]>>, tensor<3x64xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 64, 1]>>)
%c = spyre.concat %a, %b dim 2 : (tensor<3x64xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 64, 1]>>, tensor<3x64xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 64, 1]>>) -> tensor<3x128xf16, #spyre.layout<device_size = [2, 3, 64], stride_map = [64, 128, 1]>>
// CHECK: {{^}}'spyre.concat': dim 2 is out of range for the result (3, 128){{$}}

// -----

func.func @scatter_result(%d: tensor<2x8x64xf16, #spyre.layout<device_size = [2, 8, 1, 1, 64], stride_map = [512, 64, 64, 1024, 1]>>, %i: tensor<1xsi64>, %v: tensor<2x1x64xf16, #spyre.layout<device_size = [2, 1, 1, 1, 64], stride_map = [64, 64, 64, 128, 1]>>) {
  %r = spyre.scatter %d[%i] = %v : (tensor<2x8x64xf16, #spyre.layout<device_size = [2, 8, 1, 1, 64], stride_map = [512, 64, 64, 1024, 1]>>, tensor<1xsi64>, tensor<2x1x64xf16, #spyre.layout<device_size = [2, 1, 1, 1, 64], stride_map = [64, 64, 64, 128, 1]>>) -> tensor<2x8x64xf16, #spyre.layout<device_size = [8, 1, 2, 64], stride_map = [64, 64, 512, 1]>>
  func.return
}
// CHECK: {{^}}'spyre.scatter': the result is dest's buffer, so its type must be dest's {{.*}}

// -----

func.func @scatter_values(%d: tensor<2x8x64xf16, #spyre.layout<device_size = [2, 8, 1, 1, 64], stride_map = [512, 64, 64, 1024, 1]>>, %i: tensor<2xsi64>, %v: tensor<2x1x64xf16, #spyre.layout<device_size = [2, 1, 1, 1, 64], stride_map = [64, 64, 64, 128, 1]>>) {
  %r = spyre.scatter %d[%i] = %v : (tensor<2x8x64xf16, #spyre.layout<device_size = [2, 8, 1, 1, 64], stride_map = [512, 64, 64, 1024, 1]>>, tensor<2xsi64>, tensor<2x1x64xf16, #spyre.layout<device_size = [2, 1, 1, 1, 64], stride_map = [64, 64, 64, 128, 1]>>) -> tensor<2x8x64xf16, #spyre.layout<device_size = [2, 8, 1, 1, 64], stride_map = [512, 64, 64, 1024, 1]>>
  func.return
}
// CHECK: {{^}}'spyre.scatter': dest (O, L, C) (2, 8, 64) and 2 indices take values (2, 2, 64), got (2, 1, 64){{$}}

// -----

// #spyre.origin: the torch ops an op computes -> per result, the one whose value it holds.

"test.op"() {o = #spyre.origin<[3, 1] -> [3]>} : () -> ()
// CHECK: {{^}}#spyre.origin: ops [3, 1] are not distinct torch op numbers >= 0, sorted{{$}}

// -----

"test.op"() {o = #spyre.origin<[1, 3] -> [2]>} : () -> ()
// CHECK: {{^}}#spyre.origin: values [2] are not among its ops [1, 3] (a value is one of them, or -1){{$}}
