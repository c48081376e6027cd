// RUN: SPYRE_ROUNDTRIP
// RUN: SPYRE_GENERIC_ROUNDTRIP

// Every spyre attribute and op, pretty and generic. The layouts are computed with
// spyre_mlir.layout (Layout.generic(shape, 2), .permuted(perm), .reshaped(shape)), so each
// one verifies against its tensor's shape.

// Attributes (the layouts are the generic one of (5, 100, 150), its stick dim padded to 192, and the sparse
// generic layout of (4, 1): its stick dim has extent 1, so only lane 0 is used, stride -1).
"test.op"() {ints = #spyre.ints[1, 0], no_ints = #spyre.ints[], dense = #spyre.layout<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>, sparse = #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, -1]>, split = #spyre.split<m = 4, n = 8, k = 1>, lx = #spyre.lx<in0 = 0, in1 = 12800, out0 = 25600>} : () -> ()
// CHECK:         "test.op"() {ints = #spyre.ints[1, 0], no_ints = #spyre.ints[], dense = #spyre.layout<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>, sparse = #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, -1]>, split = #spyre.split<m = 4, n = 8, k = 1>, lx = #spyre.lx<in0 = 0, in1 = 12800, out0 = 25600>} : () -> ()
// CHECK-GENERIC: "test.op"() {ints = #spyre.ints[1, 0], no_ints = #spyre.ints[], dense = #spyre.layout<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>, sparse = #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, -1]>, split = #spyre.split<m = 4, n = 8, k = 1>, lx = #spyre.lx<in0 = 0, in1 = 12800, out0 = 25600>} : () -> ()

// -----

// Transfers.
%x, %xp, %xr, %xs = "test.op"() : () -> (tensor<5x100x150xf32>, tensor<150x5x100xf32>, tensor<4x100xf32>, tensor<4x1xf32>)
// CHECK:         %x, %xp, %xr, %xs = "test.op"() : () -> (tensor<5x100x150xf32>, tensor<150x5x100xf32>, tensor<4x100xf32>, tensor<4x1xf32>)
// CHECK-GENERIC: %x, %xp, %xr, %xs = "test.op"() : () -> (tensor<5x100x150xf32>, tensor<150x5x100xf32>, tensor<4x100xf32>, tensor<4x1xf32>)

%d = spyre.to_device %x : tensor<5x100x150xf32> -> tensor<5x100x150xf16, #spyre.layout<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>>
// CHECK-NEXT:         %d = spyre.to_device %x : tensor<5x100x150xf32> -> tensor<5x100x150xf16, #spyre.layout<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>>
// CHECK-GENERIC-NEXT: %d = "spyre.to_device"(%x) : (tensor<5x100x150xf32>) -> tensor<5x100x150xf16, #spyre.layout<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>>

// y = x.permute(1, 2, 0): (150, 5, 100) -> (5, 100, 150)
%dp = spyre.to_device %xp permutation [1, 2, 0] : tensor<150x5x100xf32> -> tensor<5x100x150xf16, #spyre.layout<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>>
// CHECK-NEXT:         %dp = spyre.to_device %xp permutation [1, 2, 0] : tensor<150x5x100xf32> -> tensor<5x100x150xf16, #spyre.layout<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>>
// CHECK-GENERIC-NEXT: %dp = "spyre.to_device"(%xp) <{permutation = #spyre.ints[1, 2, 0]}> : (tensor<150x5x100xf32>) -> tensor<5x100x150xf16, #spyre.layout<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>>

// A reshape (same element count) on the way: (4, 100) -> (400,), and permuted first.
%dr = spyre.to_device %xr : tensor<4x100xf32> -> tensor<400xf16, #spyre.layout<device_size = [7, 64], stride_map = [64, 1]>>
// CHECK-NEXT:         %dr = spyre.to_device %xr : tensor<4x100xf32> -> tensor<400xf16, #spyre.layout<device_size = [7, 64], stride_map = [64, 1]>>
// CHECK-GENERIC-NEXT: %dr = "spyre.to_device"(%xr) : (tensor<4x100xf32>) -> tensor<400xf16, #spyre.layout<device_size = [7, 64], stride_map = [64, 1]>>
%drp = spyre.to_device %xr permutation [1, 0] : tensor<4x100xf32> -> tensor<400xf16, #spyre.layout<device_size = [7, 64], stride_map = [64, 1]>>
// CHECK-NEXT:         %drp = spyre.to_device %xr permutation [1, 0] : tensor<4x100xf32> -> tensor<400xf16, #spyre.layout<device_size = [7, 64], stride_map = [64, 1]>>
// CHECK-GENERIC-NEXT: %drp = "spyre.to_device"(%xr) <{permutation = #spyre.ints[1, 0]}> : (tensor<4x100xf32>) -> tensor<400xf16, #spyre.layout<device_size = [7, 64], stride_map = [64, 1]>>

// The sparse layout: one element per stick.
%ds = spyre.to_device %xs : tensor<4x1xf32> -> tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, -1]>>
// CHECK-NEXT:         %ds = spyre.to_device %xs : tensor<4x1xf32> -> tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, -1]>>
// CHECK-GENERIC-NEXT: %ds = "spyre.to_device"(%xs) : (tensor<4x1xf32>) -> tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, -1]>>

%y = spyre.from_device %d : tensor<5x100x150xf16, #spyre.layout<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>> -> tensor<5x100x150xf32>
// CHECK-NEXT:         %y = spyre.from_device %d : tensor<5x100x150xf16, #spyre.layout<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>> -> tensor<5x100x150xf32>
// CHECK-GENERIC-NEXT: %y = "spyre.from_device"(%d) : (tensor<5x100x150xf16, #spyre.layout<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>>) -> tensor<5x100x150xf32>
%ys = spyre.from_device %ds : tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, -1]>> -> tensor<4x1xf16>
// CHECK-NEXT:         %ys = spyre.from_device %ds : tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, -1]>> -> tensor<4x1xf16>
// CHECK-GENERIC-NEXT: %ys = "spyre.from_device"(%ds) : (tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, -1]>>) -> tensor<4x1xf16>

// -----

// Compute.
%a, %b, %v, %s, %ba, %bb = "test.op"() : () -> (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>, tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, -1]>>, tensor<2x4x128xf16, #spyre.layout<device_size = [4, 2, 2, 64], stride_map = [128, 64, 512, 1]>>, tensor<2x128x64xf16, #spyre.layout<device_size = [128, 1, 2, 64], stride_map = [64, 64, 8192, 1]>>)
// CHECK:         %a, %b, %v, %s, %ba, %bb = "test.op"() : () -> (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>, tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, -1]>>, tensor<2x4x128xf16, #spyre.layout<device_size = [4, 2, 2, 64], stride_map = [128, 64, 512, 1]>>, tensor<2x128x64xf16, #spyre.layout<device_size = [128, 1, 2, 64], stride_map = [64, 64, 8192, 1]>>)
// CHECK-GENERIC: %a, %b, %v, %s, %ba, %bb = "test.op"() : () -> (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>, tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, -1]>>, tensor<2x4x128xf16, #spyre.layout<device_size = [4, 2, 2, 64], stride_map = [128, 64, 512, 1]>>, tensor<2x128x64xf16, #spyre.layout<device_size = [128, 1, 2, 64], stride_map = [64, 64, 8192, 1]>>)

%c = spyre.matmul %a, %b : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
// CHECK-NEXT:         %c = spyre.matmul %a, %b : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
// CHECK-GENERIC-NEXT: %c = "spyre.matmul"(%a, %b) : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>

// Batched: (2, 4, 128) @ (2, 128, 64).
%bc = spyre.matmul %ba, %bb : (tensor<2x4x128xf16, #spyre.layout<device_size = [4, 2, 2, 64], stride_map = [128, 64, 512, 1]>>, tensor<2x128x64xf16, #spyre.layout<device_size = [128, 1, 2, 64], stride_map = [64, 64, 8192, 1]>>) -> tensor<2x4x64xf16, #spyre.layout<device_size = [4, 1, 2, 64], stride_map = [64, 64, 256, 1]>>
// CHECK-NEXT:         %bc = spyre.matmul %ba, %bb : (tensor<2x4x128xf16, #spyre.layout<device_size = [4, 2, 2, 64], stride_map = [128, 64, 512, 1]>>, tensor<2x128x64xf16, #spyre.layout<device_size = [128, 1, 2, 64], stride_map = [64, 64, 8192, 1]>>) -> tensor<2x4x64xf16, #spyre.layout<device_size = [4, 1, 2, 64], stride_map = [64, 64, 256, 1]>>
// CHECK-GENERIC-NEXT: %bc = "spyre.matmul"(%ba, %bb) : (tensor<2x4x128xf16, #spyre.layout<device_size = [4, 2, 2, 64], stride_map = [128, 64, 512, 1]>>, tensor<2x128x64xf16, #spyre.layout<device_size = [128, 1, 2, 64], stride_map = [64, 64, 8192, 1]>>) -> tensor<2x4x64xf16, #spyre.layout<device_size = [4, 1, 2, 64], stride_map = [64, 64, 256, 1]>>

// Every body op the SFP implements; %v (512,) and %s (4, 1) broadcast to (4, 512).
%p = spyre.pointwise %c, %v, %s : (tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>, tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, -1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>> {
^bb0(%e0: f32, %e1: f32, %e2: f32):
  %half = arith.constant 5.000000e-01 : f32
  %t0 = arith.addf %e0, %e1 : f32
  %t1 = arith.subf %t0, %half : f32
  %t2 = arith.mulf %t1, %e2 : f32
  %t3 = arith.divf %t2, %e1 : f32
  %t4 = arith.maximumf %t3, %half : f32
  %t5 = arith.minimumf %t4, %e0 : f32
  %t6 = arith.negf %t5 : f32
  %t7 = math.exp %t6 : f32
  %t8 = math.erf %t7 : f32
  %t9 = math.tanh %t8 : f32
  spyre.yield %t9 : f32
}
// CHECK-NEXT:         %p = spyre.pointwise %c, %v, %s : (tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>, tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, -1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>> {
// CHECK-NEXT:         ^bb0(%e0: f32, %e1: f32, %e2: f32):
// CHECK-NEXT:           %half = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:           %t0 = arith.addf %e0, %e1 : f32
// CHECK-NEXT:           %t1 = arith.subf %t0, %half : f32
// CHECK-NEXT:           %t2 = arith.mulf %t1, %e2 : f32
// CHECK-NEXT:           %t3 = arith.divf %t2, %e1 : f32
// CHECK-NEXT:           %t4 = arith.maximumf %t3, %half : f32
// CHECK-NEXT:           %t5 = arith.minimumf %t4, %e0 : f32
// CHECK-NEXT:           %t6 = arith.negf %t5 : f32
// CHECK-NEXT:           %t7 = math.exp %t6 : f32
// CHECK-NEXT:           %t8 = math.erf %t7 : f32
// CHECK-NEXT:           %t9 = math.tanh %t8 : f32
// CHECK-NEXT:           spyre.yield %t9 : f32
// CHECK-NEXT:         }
// CHECK-GENERIC-NEXT: %p = "spyre.pointwise"(%c, %v, %s) ({
// CHECK-GENERIC-NEXT: ^bb0(%e0: f32, %e1: f32, %e2: f32):
// CHECK-GENERIC-NEXT:   %half = "arith.constant"() <{value = 5.000000e-01 : f32}> : () -> f32
// CHECK-GENERIC-NEXT:   %t0 = "arith.addf"(%e0, %e1) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
// CHECK-GENERIC-NEXT:   %t1 = "arith.subf"(%t0, %half) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
// CHECK-GENERIC-NEXT:   %t2 = "arith.mulf"(%t1, %e2) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
// CHECK-GENERIC-NEXT:   %t3 = "arith.divf"(%t2, %e1) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
// CHECK-GENERIC-NEXT:   %t4 = "arith.maximumf"(%t3, %half) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
// CHECK-GENERIC-NEXT:   %t5 = "arith.minimumf"(%t4, %e0) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
// CHECK-GENERIC-NEXT:   %t6 = "arith.negf"(%t5) <{fastmath = #arith.fastmath<none>}> : (f32) -> f32
// CHECK-GENERIC-NEXT:   %t7 = "math.exp"(%t6) <{fastmath = #arith.fastmath<none>}> : (f32) -> f32
// CHECK-GENERIC-NEXT:   %t8 = "math.erf"(%t7) <{fastmath = #arith.fastmath<none>}> : (f32) -> f32
// CHECK-GENERIC-NEXT:   %t9 = "math.tanh"(%t8) <{fastmath = #arith.fastmath<none>}> : (f32) -> f32
// CHECK-GENERIC-NEXT:   "spyre.yield"(%t9) : (f32) -> ()
// CHECK-GENERIC-NEXT: }) : (tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>, tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, -1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>

// -----

// Views and relayout.
%a, %d = "test.op"() : () -> (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<5x100x150xf16, #spyre.layout<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>>)
// CHECK:         %a, %d = "test.op"() : () -> (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<5x100x150xf16, #spyre.layout<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>>)
// CHECK-GENERIC: %a, %d = "test.op"() : () -> (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<5x100x150xf16, #spyre.layout<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>>)

%at = spyre.permute %a permutation [1, 0] : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>> -> tensor<256x4xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [256, 1, 4]>>
// CHECK-NEXT:         %at = spyre.permute %a permutation [1, 0] : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>> -> tensor<256x4xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [256, 1, 4]>>
// CHECK-GENERIC-NEXT: %at = "spyre.permute"(%a) <{permutation = #spyre.ints[1, 0]}> : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) -> tensor<256x4xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [256, 1, 4]>>
%dp = spyre.permute %d permutation [2, 0, 1] : tensor<5x100x150xf16, #spyre.layout<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>> -> tensor<150x5x100xf16, #spyre.layout<device_size = [100, 3, 5, 64], stride_map = [1, 32000, 100, 500]>>
// CHECK-NEXT:         %dp = spyre.permute %d permutation [2, 0, 1] : tensor<5x100x150xf16, #spyre.layout<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>> -> tensor<150x5x100xf16, #spyre.layout<device_size = [100, 3, 5, 64], stride_map = [1, 32000, 100, 500]>>
// CHECK-GENERIC-NEXT: %dp = "spyre.permute"(%d) <{permutation = #spyre.ints[2, 0, 1]}> : (tensor<5x100x150xf16, #spyre.layout<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>>) -> tensor<150x5x100xf16, #spyre.layout<device_size = [100, 3, 5, 64], stride_map = [1, 32000, 100, 500]>>

// Splitting the unpadded dim 1 of (4, 256), flattening it, and merging (5, 100) in front of the padded stick dim.
%a3 = spyre.reshape %a : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>> -> tensor<4x4x64xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
// CHECK-NEXT:         %a3 = spyre.reshape %a : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>> -> tensor<4x4x64xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
// CHECK-GENERIC-NEXT: %a3 = "spyre.reshape"(%a) : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) -> tensor<4x4x64xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
%a1 = spyre.reshape %a : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>> -> tensor<1024xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
// CHECK-NEXT:         %a1 = spyre.reshape %a : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>> -> tensor<1024xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
// CHECK-GENERIC-NEXT: %a1 = "spyre.reshape"(%a) : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) -> tensor<1024xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
%dr = spyre.reshape %d : tensor<5x100x150xf16, #spyre.layout<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>> -> tensor<500x150xf16, #spyre.layout<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>>
// CHECK-NEXT:         %dr = spyre.reshape %d : tensor<5x100x150xf16, #spyre.layout<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>> -> tensor<500x150xf16, #spyre.layout<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>>
// CHECK-GENERIC-NEXT: %dr = "spyre.reshape"(%d) : (tensor<5x100x150xf16, #spyre.layout<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>>) -> tensor<500x150xf16, #spyre.layout<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>>

// Same logical tensors, sticks along another dim.
%as = spyre.restickify %a : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>> -> tensor<4x256xf16, #spyre.layout<device_size = [1, 256, 64], stride_map = [64, 1, 256]>>
// CHECK-NEXT:         %as = spyre.restickify %a : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>> -> tensor<4x256xf16, #spyre.layout<device_size = [1, 256, 64], stride_map = [64, 1, 256]>>
// CHECK-GENERIC-NEXT: %as = "spyre.restickify"(%a) : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) -> tensor<4x256xf16, #spyre.layout<device_size = [1, 256, 64], stride_map = [64, 1, 256]>>
%ds = spyre.restickify %d : tensor<5x100x150xf16, #spyre.layout<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>> -> tensor<5x100x150xf16, #spyre.layout<device_size = [150, 2, 5, 64], stride_map = [1, 9600, 15000, 150]>>
// CHECK-NEXT:         %ds = spyre.restickify %d : tensor<5x100x150xf16, #spyre.layout<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>> -> tensor<5x100x150xf16, #spyre.layout<device_size = [150, 2, 5, 64], stride_map = [1, 9600, 15000, 150]>>
// CHECK-GENERIC-NEXT: %ds = "spyre.restickify"(%d) : (tensor<5x100x150xf16, #spyre.layout<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>>) -> tensor<5x100x150xf16, #spyre.layout<device_size = [150, 2, 5, 64], stride_map = [1, 9600, 15000, 150]>>

// -----

// Kernels: with the plan of spyre-divide-work and spyre-plan-scratchpad, and without.
%a, %b, %v = "test.op"() : () -> (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>)
// CHECK:         %a, %b, %v = "test.op"() : () -> (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>)
// CHECK-GENERIC: %a, %b, %v = "test.op"() : () -> (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>)

%c = spyre.kernel "k0"(%a, %b) split <n = 8, m = 4, k = 1> chunks <n = 1, m = 1, k = 1> lx <lhs = 0, rhs = 512, acc = 33280, out = 33536> : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>> {
^bb0(%ka: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, %kb: tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>):
  %kc = spyre.matmul %ka, %kb : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
  spyre.yield %kc : tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
}
// CHECK-NEXT:         %c = spyre.kernel "k0"(%a, %b) split <n = 8, m = 4, k = 1> chunks <n = 1, m = 1, k = 1> lx <lhs = 0, rhs = 512, acc = 33280, out = 33536> : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>> {
// CHECK-NEXT:         ^bb0(%ka: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, %kb: tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>):
// CHECK-NEXT:           %kc = spyre.matmul %ka, %kb : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
// CHECK-NEXT:           spyre.yield %kc : tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
// CHECK-NEXT:         }
// CHECK-GENERIC-NEXT: %c = "spyre.kernel"(%a, %b) <{sym_name = "k0", split = #spyre.split<n = 8, m = 4, k = 1>, chunks = #spyre.split<n = 1, m = 1, k = 1>, lx = #spyre.lx<lhs = 0, rhs = 512, acc = 33280, out = 33536>}> ({
// CHECK-GENERIC-NEXT: ^bb0(%ka: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, %kb: tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>):
// CHECK-GENERIC-NEXT:   %kc = "spyre.matmul"(%ka, %kb) : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
// CHECK-GENERIC-NEXT:   "spyre.yield"(%kc) : (tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>) -> ()
// CHECK-GENERIC-NEXT: }) : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>

// Two results, one of them a view of the kernel's compute result.
%r0, %r1 = spyre.kernel "k1"(%a) : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) -> (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x4xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [256, 1, 4]>>) {
^bb0(%ka: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>):
  %ks = spyre.restickify %ka : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>> -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
  %kt = spyre.permute %ks permutation [1, 0] : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>> -> tensor<256x4xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [256, 1, 4]>>
  spyre.yield %ks, %kt : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x4xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [256, 1, 4]>>
}
// CHECK-NEXT:         %r0, %r1 = spyre.kernel "k1"(%a) : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) -> (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x4xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [256, 1, 4]>>) {
// CHECK-NEXT:         ^bb0(%ka: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>):
// CHECK-NEXT:           %ks = spyre.restickify %ka : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>> -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
// CHECK-NEXT:           %kt = spyre.permute %ks permutation [1, 0] : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>> -> tensor<256x4xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [256, 1, 4]>>
// CHECK-NEXT:           spyre.yield %ks, %kt : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x4xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [256, 1, 4]>>
// CHECK-NEXT:         }
// CHECK-GENERIC-NEXT: %r0, %r1 = "spyre.kernel"(%a) <{sym_name = "k1"}> ({
// CHECK-GENERIC-NEXT: ^bb0(%ka: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>):
// CHECK-GENERIC-NEXT:   %ks = "spyre.restickify"(%ka) : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) -> tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
// CHECK-GENERIC-NEXT:   %kt = "spyre.permute"(%ks) <{permutation = #spyre.ints[1, 0]}> : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) -> tensor<256x4xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [256, 1, 4]>>
// CHECK-GENERIC-NEXT:   "spyre.yield"(%ks, %kt) : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x4xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [256, 1, 4]>>) -> ()
// CHECK-GENERIC-NEXT: }) : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) -> (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x4xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [256, 1, 4]>>)

// -----

// Reductions (a splat result along the stick dim), gathers at host indices, slices.
%a, %tab, %e = "test.op"() : () -> (tensor<3x100xf16, #spyre.layout<device_size = [2, 3, 64], stride_map = [64, 100, 1]>>, tensor<50x64xf16, #spyre.layout<device_size = [1, 50, 64], stride_map = [64, 64, 1]>>, tensor<2x5x64xf16, #spyre.layout<device_size = [5, 1, 2, 64], stride_map = [64, 64, 320, 1]>>)
// CHECK:         %a, %tab, %e = "test.op"() : () -> (tensor<3x100xf16, #spyre.layout<device_size = [2, 3, 64], stride_map = [64, 100, 1]>>, tensor<50x64xf16, #spyre.layout<device_size = [1, 50, 64], stride_map = [64, 64, 1]>>, tensor<2x5x64xf16, #spyre.layout<device_size = [5, 1, 2, 64], stride_map = [64, 64, 320, 1]>>)
// CHECK-GENERIC: %a, %tab, %e = "test.op"() : () -> (tensor<3x100xf16, #spyre.layout<device_size = [2, 3, 64], stride_map = [64, 100, 1]>>, tensor<50x64xf16, #spyre.layout<device_size = [1, 50, 64], stride_map = [64, 64, 1]>>, tensor<2x5x64xf16, #spyre.layout<device_size = [5, 1, 2, 64], stride_map = [64, 64, 320, 1]>>)
%ids = "test.op"() : () -> tensor<2x5xsi64>
// CHECK:         %ids = "test.op"() : () -> tensor<2x5xsi64>
// CHECK-GENERIC: %ids = "test.op"() : () -> tensor<2x5xsi64>
%r = spyre.reduce "max" %a dim 1 : tensor<3x100xf16, #spyre.layout<device_size = [2, 3, 64], stride_map = [64, 100, 1]>> -> tensor<3x1xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 1, 0]>>
// CHECK:         %r = spyre.reduce "max" %a dim 1 : tensor<3x100xf16, #spyre.layout<device_size = [2, 3, 64], stride_map = [64, 100, 1]>> -> tensor<3x1xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 1, 0]>>
// CHECK-GENERIC: %r = "spyre.reduce"(%a) <{kind = "max", dim = 1 : i64}> : (tensor<3x100xf16, #spyre.layout<device_size = [2, 3, 64], stride_map = [64, 100, 1]>>) -> tensor<3x1xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 1, 0]>>
%m = spyre.reduce "mean" %a dim 1 : tensor<3x100xf16, #spyre.layout<device_size = [2, 3, 64], stride_map = [64, 100, 1]>> -> tensor<3x1xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 1, 0]>>
// CHECK:         %m = spyre.reduce "mean" %a dim 1 : tensor<3x100xf16, #spyre.layout<device_size = [2, 3, 64], stride_map = [64, 100, 1]>> -> tensor<3x1xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 1, 0]>>
// CHECK-GENERIC: %m = "spyre.reduce"(%a) <{kind = "mean", dim = 1 : i64}> : (tensor<3x100xf16, #spyre.layout<device_size = [2, 3, 64], stride_map = [64, 100, 1]>>) -> tensor<3x1xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 1, 0]>>
%g = spyre.gather %tab[%ids] : (tensor<50x64xf16, #spyre.layout<device_size = [1, 50, 64], stride_map = [64, 64, 1]>>, tensor<2x5xsi64>) -> tensor<10x64xf16, #spyre.layout<device_size = [1, 10, 64], stride_map = [64, 64, 1]>>
// CHECK:         %g = spyre.gather %tab[%ids] : (tensor<50x64xf16, #spyre.layout<device_size = [1, 50, 64], stride_map = [64, 64, 1]>>, tensor<2x5xsi64>) -> tensor<10x64xf16, #spyre.layout<device_size = [1, 10, 64], stride_map = [64, 64, 1]>>
// CHECK-GENERIC: %g = "spyre.gather"(%tab, %ids) : (tensor<50x64xf16, #spyre.layout<device_size = [1, 50, 64], stride_map = [64, 64, 1]>>, tensor<2x5xsi64>) -> tensor<10x64xf16, #spyre.layout<device_size = [1, 10, 64], stride_map = [64, 64, 1]>>
%s = spyre.slice %e start [0, 1, 0] : tensor<2x5x64xf16, #spyre.layout<device_size = [5, 1, 2, 64], stride_map = [64, 64, 320, 1]>> -> tensor<2x3x64xf16, #spyre.layout<device_size = [3, 1, 2, 64], stride_map = [64, 64, 192, 1]>>
// CHECK:         %s = spyre.slice %e start [0, 1, 0] : tensor<2x5x64xf16, #spyre.layout<device_size = [5, 1, 2, 64], stride_map = [64, 64, 320, 1]>> -> tensor<2x3x64xf16, #spyre.layout<device_size = [3, 1, 2, 64], stride_map = [64, 64, 192, 1]>>
// CHECK-GENERIC: %s = "spyre.slice"(%e) <{start = #spyre.ints[0, 1, 0]}> : (tensor<2x5x64xf16, #spyre.layout<device_size = [5, 1, 2, 64], stride_map = [64, 64, 320, 1]>>) -> tensor<2x3x64xf16, #spyre.layout<device_size = [3, 1, 2, 64], stride_map = [64, 64, 192, 1]>>
%s2 = spyre.slice %e start [0, 1, 0] step [1, 2, 1] : tensor<2x5x64xf16, #spyre.layout<device_size = [5, 1, 2, 64], stride_map = [64, 64, 320, 1]>> -> tensor<2x2x64xf16, #spyre.layout<device_size = [2, 1, 2, 64], stride_map = [64, 64, 128, 1]>>
// CHECK:         %s2 = spyre.slice %e start [0, 1, 0] step [1, 2, 1] : tensor<2x5x64xf16, #spyre.layout<device_size = [5, 1, 2, 64], stride_map = [64, 64, 320, 1]>> -> tensor<2x2x64xf16, #spyre.layout<device_size = [2, 1, 2, 64], stride_map = [64, 64, 128, 1]>>
// CHECK-GENERIC: %s2 = "spyre.slice"(%e) <{start = #spyre.ints[0, 1, 0], step = #spyre.ints[1, 2, 1]}> : (tensor<2x5x64xf16, #spyre.layout<device_size = [5, 1, 2, 64], stride_map = [64, 64, 320, 1]>>) -> tensor<2x2x64xf16, #spyre.layout<device_size = [2, 1, 2, 64], stride_map = [64, 64, 128, 1]>>
%s3 = "test.op"() : () -> tensor<2x3x64xf16, #spyre.layout<device_size = [3, 1, 2, 64], stride_map = [64, 64, 192, 1]>>
%c = spyre.concat %e, %s3 dim 1 : (tensor<2x5x64xf16, #spyre.layout<device_size = [5, 1, 2, 64], stride_map = [64, 64, 320, 1]>>, tensor<2x3x64xf16, #spyre.layout<device_size = [3, 1, 2, 64], stride_map = [64, 64, 192, 1]>>) -> tensor<2x8x64xf16, #spyre.layout<device_size = [8, 1, 2, 64], stride_map = [64, 64, 512, 1]>>
// CHECK:         %c = spyre.concat %e, %s3 dim 1 : (tensor<2x5x64xf16, #spyre.layout<device_size = [5, 1, 2, 64], stride_map = [64, 64, 320, 1]>>, tensor<2x3x64xf16, #spyre.layout<device_size = [3, 1, 2, 64], stride_map = [64, 64, 192, 1]>>) -> tensor<2x8x64xf16, #spyre.layout<device_size = [8, 1, 2, 64], stride_map = [64, 64, 512, 1]>>
// CHECK-GENERIC: %c = "spyre.concat"(%e, %s3) <{dim = 1 : i64}> : (tensor<2x5x64xf16, #spyre.layout<device_size = [5, 1, 2, 64], stride_map = [64, 64, 320, 1]>>, tensor<2x3x64xf16, #spyre.layout<device_size = [3, 1, 2, 64], stride_map = [64, 64, 192, 1]>>) -> tensor<2x8x64xf16, #spyre.layout<device_size = [8, 1, 2, 64], stride_map = [64, 64, 512, 1]>>

// -----

// Kernel marks (spyre/attrs.py): a matmul that reads its A from LX and keeps its result there,
// its boxes on other cores, its B tiles passed along the ring; an on-chip relayout.
%a, %b, %s = "test.op"() : () -> (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>, tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>)
// CHECK:         %a, %b, %s = "test.op"() : () -> (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>, tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>)
// CHECK-GENERIC: %a, %b, %s = "test.op"() : () -> (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>, tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>)
%c = spyre.kernel "k0"(%a, %b) split <n = 2, m = 2, k = 1> multicast <chain = 2> core_order [0, 2, 1, 3] resident_in <input = 0, offset = 1646592> resident_out <offset = 1630208> lx_budget <bytes = 1630208> : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>> {
^bb0(%ka: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, %kb: tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>):
  %kc = spyre.matmul %ka, %kb : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
  spyre.yield %kc : tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
}
// CHECK-NEXT:         %c = spyre.kernel "k0"(%a, %b) split <n = 2, m = 2, k = 1> multicast <chain = 2> core_order [0, 2, 1, 3] resident_in <input = 0, offset = 1646592> resident_out <offset = 1630208> lx_budget <bytes = 1630208> : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>> {
// CHECK-NEXT:         ^bb0(%ka: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, %kb: tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>):
// CHECK-NEXT:         %kc = spyre.matmul %ka, %kb : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
// CHECK-NEXT:         spyre.yield %kc : tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
// CHECK-NEXT:         }
// CHECK-GENERIC-NEXT: %c = "spyre.kernel"(%a, %b) <{sym_name = "k0", split = #spyre.split<n = 2, m = 2, k = 1>, multicast = #spyre.multicast<chain = 2>, core_order = #spyre.core_order[0, 2, 1, 3], resident_in = #spyre.resident_in<input = 0, offset = 1646592>, resident_out = #spyre.resident_out<offset = 1630208>, lx_budget = #spyre.lx_budget<bytes = 1630208>}> ({
// CHECK-GENERIC-NEXT: ^bb0(%ka: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, %kb: tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>):
// CHECK-GENERIC-NEXT: %kc = "spyre.matmul"(%ka, %kb) : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
// CHECK-GENERIC-NEXT: "spyre.yield"(%kc) : (tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>) -> ()
// CHECK-GENERIC-NEXT: }) : (tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<4x512xf16, #spyre.layout<device_size = [8, 4, 64], stride_map = [64, 512, 1]>>
%r = spyre.kernel "k1"(%s) split <d0 = 4, d1 = 1> onchip <src = 1648512, dst = 1664896, staging = 1690496, src_rows = [[0, 64], [64, 128], [128, 192], [192, 256]], dst_boxes = [[0, 2, 0, 100], [2, 3, 0, 100], [3, 4, 0, 100], [0, 0, 0, 0]]> lx_budget <bytes = 1648512> : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
^bb0(%ks: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
  %kr = spyre.restickify %ks : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  spyre.yield %kr : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
}
// CHECK-NEXT:         %r = spyre.kernel "k1"(%s) split <d0 = 4, d1 = 1> onchip <src = 1648512, dst = 1664896, staging = 1690496, src_rows = [[0, 64], [64, 128], [128, 192], [192, 256]], dst_boxes = [[0, 2, 0, 100], [2, 3, 0, 100], [3, 4, 0, 100], [0, 0, 0, 0]]> lx_budget <bytes = 1648512> : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
// CHECK-NEXT:         ^bb0(%ks: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
// CHECK-NEXT:         %kr = spyre.restickify %ks : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
// CHECK-NEXT:         spyre.yield %kr : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
// CHECK-NEXT:         }
// CHECK-GENERIC-NEXT: %r = "spyre.kernel"(%s) <{sym_name = "k1", split = #spyre.split<d0 = 4, d1 = 1>, onchip = #spyre.onchip<src = 1648512, dst = 1664896, staging = 1690496, src_rows = [[0, 64], [64, 128], [128, 192], [192, 256]], dst_boxes = [[0, 2, 0, 100], [2, 3, 0, 100], [3, 4, 0, 100], [0, 0, 0, 0]]>, lx_budget = #spyre.lx_budget<bytes = 1648512>}> ({
// CHECK-GENERIC-NEXT: ^bb0(%ks: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
// CHECK-GENERIC-NEXT: %kr = "spyre.restickify"(%ks) : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
// CHECK-GENERIC-NEXT: "spyre.yield"(%kr) : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> ()
// CHECK-GENERIC-NEXT: }) : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>

// -----

// The target: the default device prints bare; a field at its default is left out; the others
// (an int, a float, a string, a bool) print in DeviceConfig's order.
"test.op"() {default = #spyre.target<>, explicit = #spyre.target<cores = 32>, changed = #spyre.target<sanitize = false, numerics = "ieee-fp16", cores = 8, host_op_s = 1.0e-06, ddr_bytes_per_s = 128000000000.0>} : () -> ()
// CHECK:         "test.op"() {default = #spyre.target, explicit = #spyre.target, changed = #spyre.target<cores = 8, ddr_bytes_per_s = 128000000000.0, host_op_s = 1.0e-06, numerics = "ieee-fp16", sanitize = false>} : () -> ()
// CHECK-GENERIC: "test.op"() {default = #spyre.target, explicit = #spyre.target, changed = #spyre.target<cores = 8, ddr_bytes_per_s = 128000000000.0, host_op_s = 1.0e-06, numerics = "ieee-fp16", sanitize = false>} : () -> ()
