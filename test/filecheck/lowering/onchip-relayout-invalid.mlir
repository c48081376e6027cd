// RUN: spyre-opt %s -p 'spyre-plan-scratchpad{cores=4},convert-spyre-to-isa{cores=4}' --verify-diagnostics --split-input-file | filecheck %s
// A transpose done in LX (spyre-onchip-relayout's `spyre.onchip` mark) whose mark does not
// match its tensors, its producer or its consumer is refused, naming the kernel and the
// reason: a lowering that trusted the mark would give a wrong answer or a traceback for a
// hand-written or inconsistent one. Input: spyre-onchip-relayout.mlir's @between_pointwise after
// 'spyre-divide-work{cores=4},spyre-onchip-relayout{cores=4}' (relu(relu(x).t()), x (256, 100)),
// its mark edited.

// Core 3's band missing: rows 192 .. 255 would never be transposed, and a quarter of the
// result would come back as whatever LX held.
func.func @between_pointwise(%arg0: tensor<256x100xf16>) -> tensor<100x256xf16> {
  %0 = spyre.to_device %arg0 : tensor<256x100xf16> -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
  %1 = spyre.kernel "t_k0"(%0) split <d0 = 1, d1 = 4> {spyre.resident_out = 1648512 : i64, spyre.lx_budget = 1648512 : i64} : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
  ^bb0(%2: tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>):
    %3 = spyre.pointwise %2 : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%4: f32):
      %5 = arith.constant 0.000000e+00 : f32
      %6 = arith.maximumf %4, %5 : f32
      spyre.yield %6 : f32
    }
    spyre.yield %3 : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
  }
  %2 = spyre.permute %1 permutation [1, 0] : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
  %3 = spyre.kernel "t_k1"(%2) split <d0 = 4, d1 = 1> {spyre.onchip = {src = 1648512 : i64, dst = 1664896 : i64, staging = 1677696 : i64, src_rows = array<i64: 0, 64, 64, 128, 128, 192, 0, 0>, dst_boxes = array<i64: 0, 1, 0, 100, 1, 2, 0, 100, 2, 3, 0, 100, 3, 4, 0, 100>}, spyre.lx_budget = 1648512 : i64} : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
  ^bb0(%4: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
    %5 = spyre.restickify %4 : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    spyre.yield %5 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  }
  %4 = spyre.kernel "t_k2"(%3) split <d0 = 4, d1 = 1> {spyre.resident_in = array<i64: 0, 1664896>, spyre.lx_budget = 1648512 : i64} : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
  ^bb0(%5: tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>):
    %6 = spyre.pointwise %5 : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%7: f32):
      %8 = arith.constant 0.000000e+00 : f32
      %9 = arith.maximumf %7, %8 : f32
      spyre.yield %9 : f32
    }
    spyre.yield %6 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  }
  %5 = spyre.from_device %4 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> -> tensor<100x256xf16>
  func.return %5 : tensor<100x256xf16>
}
// CHECK: kernel t_k1: 'spyre.restickify' spyre.onchip: src_rows [0, 64, 64, 128, 128, 192, 0, 0] do not hold each of the 256 source rows once

// -----

// Bands that are not the producer's boxes (cores 0 and 1 swapped): each core would transpose
// the other's rows from its own LX, and half the result would be misplaced.
func.func @between_pointwise(%arg0: tensor<256x100xf16>) -> tensor<100x256xf16> {
  %0 = spyre.to_device %arg0 : tensor<256x100xf16> -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
  %1 = spyre.kernel "t_k0"(%0) split <d0 = 1, d1 = 4> {spyre.resident_out = 1648512 : i64, spyre.lx_budget = 1648512 : i64} : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
  ^bb0(%2: tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>):
    %3 = spyre.pointwise %2 : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%4: f32):
      %5 = arith.constant 0.000000e+00 : f32
      %6 = arith.maximumf %4, %5 : f32
      spyre.yield %6 : f32
    }
    spyre.yield %3 : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
  }
  %2 = spyre.permute %1 permutation [1, 0] : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
  %3 = spyre.kernel "t_k1"(%2) split <d0 = 4, d1 = 1> {spyre.onchip = {src = 1648512 : i64, dst = 1664896 : i64, staging = 1677696 : i64, src_rows = array<i64: 64, 128, 0, 64, 128, 192, 192, 256>, dst_boxes = array<i64: 0, 1, 0, 100, 1, 2, 0, 100, 2, 3, 0, 100, 3, 4, 0, 100>}, spyre.lx_budget = 1648512 : i64} : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
  ^bb0(%4: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
    %5 = spyre.restickify %4 : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    spyre.yield %5 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  }
  %4 = spyre.kernel "t_k2"(%3) split <d0 = 4, d1 = 1> {spyre.resident_in = array<i64: 0, 1664896>, spyre.lx_budget = 1648512 : i64} : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
  ^bb0(%5: tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>):
    %6 = spyre.pointwise %5 : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%7: f32):
      %8 = arith.constant 0.000000e+00 : f32
      %9 = arith.maximumf %7, %8 : f32
      spyre.yield %9 : f32
    }
    spyre.yield %6 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  }
  %5 = spyre.from_device %4 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> -> tensor<100x256xf16>
  func.return %5 : tensor<100x256xf16>
}
// CHECK: kernel t_k1: 'spyre.restickify' spyre.onchip: src_rows [64, 128, 0, 64, 128, 192, 192, 256] are not the boxes of the producer t_k0 (all column sticks, its rows)

// -----

// A box of half the result rows: rows 50 .. 99 of the first stick would never be written.
func.func @between_pointwise(%arg0: tensor<256x100xf16>) -> tensor<100x256xf16> {
  %0 = spyre.to_device %arg0 : tensor<256x100xf16> -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
  %1 = spyre.kernel "t_k0"(%0) split <d0 = 1, d1 = 4> {spyre.resident_out = 1648512 : i64, spyre.lx_budget = 1648512 : i64} : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
  ^bb0(%2: tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>):
    %3 = spyre.pointwise %2 : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%4: f32):
      %5 = arith.constant 0.000000e+00 : f32
      %6 = arith.maximumf %4, %5 : f32
      spyre.yield %6 : f32
    }
    spyre.yield %3 : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
  }
  %2 = spyre.permute %1 permutation [1, 0] : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
  %3 = spyre.kernel "t_k1"(%2) split <d0 = 4, d1 = 1> {spyre.onchip = {src = 1648512 : i64, dst = 1664896 : i64, staging = 1677696 : i64, src_rows = array<i64: 0, 64, 64, 128, 128, 192, 192, 256>, dst_boxes = array<i64: 0, 1, 0, 50, 1, 2, 0, 100, 2, 3, 0, 100, 3, 4, 0, 100>}, spyre.lx_budget = 1648512 : i64} : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
  ^bb0(%4: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
    %5 = spyre.restickify %4 : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    spyre.yield %5 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  }
  %4 = spyre.kernel "t_k2"(%3) split <d0 = 4, d1 = 1> {spyre.resident_in = array<i64: 0, 1664896>, spyre.lx_budget = 1648512 : i64} : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
  ^bb0(%5: tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>):
    %6 = spyre.pointwise %5 : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%7: f32):
      %8 = arith.constant 0.000000e+00 : f32
      %9 = arith.maximumf %7, %8 : f32
      spyre.yield %9 : f32
    }
    spyre.yield %6 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  }
  %5 = spyre.from_device %4 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> -> tensor<100x256xf16>
  func.return %5 : tensor<100x256xf16>
}
// CHECK: kernel t_k1: 'spyre.restickify' spyre.onchip: dst_boxes [0, 1, 0, 50, 1, 2, 0, 100, 2, 3, 0, 100, 3, 4, 0, 100] do not hold each of the result's 4 x 100 sticks once

// -----

// The result kept in LX, but its reader takes it from DDR, where nothing wrote it.
func.func @between_pointwise(%arg0: tensor<256x100xf16>) -> tensor<100x256xf16> {
  %0 = spyre.to_device %arg0 : tensor<256x100xf16> -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
  %1 = spyre.kernel "t_k0"(%0) split <d0 = 1, d1 = 4> {spyre.resident_out = 1648512 : i64, spyre.lx_budget = 1648512 : i64} : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
  ^bb0(%2: tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>):
    %3 = spyre.pointwise %2 : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%4: f32):
      %5 = arith.constant 0.000000e+00 : f32
      %6 = arith.maximumf %4, %5 : f32
      spyre.yield %6 : f32
    }
    spyre.yield %3 : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
  }
  %2 = spyre.permute %1 permutation [1, 0] : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
  %3 = spyre.kernel "t_k1"(%2) split <d0 = 4, d1 = 1> {spyre.onchip = {src = 1648512 : i64, dst = 1664896 : i64, staging = 1677696 : i64, src_rows = array<i64: 0, 64, 64, 128, 128, 192, 192, 256>, dst_boxes = array<i64: 0, 1, 0, 100, 1, 2, 0, 100, 2, 3, 0, 100, 3, 4, 0, 100>}, spyre.lx_budget = 1648512 : i64} : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
  ^bb0(%4: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
    %5 = spyre.restickify %4 : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    spyre.yield %5 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  }
  %4 = spyre.kernel "t_k2"(%3) split <d0 = 4, d1 = 1> {spyre.lx_budget = 1648512 : i64} : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
  ^bb0(%5: tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>):
    %6 = spyre.pointwise %5 : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%7: f32):
      %8 = arith.constant 0.000000e+00 : f32
      %9 = arith.maximumf %7, %8 : f32
      spyre.yield %9 : f32
    }
    spyre.yield %6 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  }
  %5 = spyre.from_device %4 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> -> tensor<100x256xf16>
  func.return %5 : tensor<100x256xf16>
}
// CHECK: kernel t_k1: 'spyre.restickify' spyre.onchip: its result (kept in LX only) is not read by exactly one pointwise kernel that takes it from LX (spyre.resident_in = [input, offset])

// -----

// The result's boxes over the source bands.
func.func @between_pointwise(%arg0: tensor<256x100xf16>) -> tensor<100x256xf16> {
  %0 = spyre.to_device %arg0 : tensor<256x100xf16> -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
  %1 = spyre.kernel "t_k0"(%0) split <d0 = 1, d1 = 4> {spyre.resident_out = 1648512 : i64, spyre.lx_budget = 1648512 : i64} : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
  ^bb0(%2: tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>):
    %3 = spyre.pointwise %2 : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%4: f32):
      %5 = arith.constant 0.000000e+00 : f32
      %6 = arith.maximumf %4, %5 : f32
      spyre.yield %6 : f32
    }
    spyre.yield %3 : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
  }
  %2 = spyre.permute %1 permutation [1, 0] : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
  %3 = spyre.kernel "t_k1"(%2) split <d0 = 4, d1 = 1> {spyre.onchip = {src = 1648512 : i64, dst = 1648512 : i64, staging = 1677696 : i64, src_rows = array<i64: 0, 64, 64, 128, 128, 192, 192, 256>, dst_boxes = array<i64: 0, 1, 0, 100, 1, 2, 0, 100, 2, 3, 0, 100, 3, 4, 0, 100>}, spyre.lx_budget = 1648512 : i64} : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
  ^bb0(%4: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
    %5 = spyre.restickify %4 : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    spyre.yield %5 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  }
  %4 = spyre.kernel "t_k2"(%3) split <d0 = 4, d1 = 1> {spyre.resident_in = array<i64: 0, 1648512>, spyre.lx_budget = 1648512 : i64} : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
  ^bb0(%5: tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>):
    %6 = spyre.pointwise %5 : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%7: f32):
      %8 = arith.constant 0.000000e+00 : f32
      %9 = arith.maximumf %7, %8 : f32
      spyre.yield %9 : f32
    }
    spyre.yield %6 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  }
  %5 = spyre.from_device %4 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> -> tensor<100x256xf16>
  func.return %5 : tensor<100x256xf16>
}
// CHECK: kernel t_k1: 'spyre.restickify' spyre.onchip: dst (LX bytes [1648512, 1661312)) and src (LX bytes [1648512, 1664896)) overlap

// -----

// A field missing (unchecked: a KeyError from inside the lowering).
func.func @between_pointwise(%arg0: tensor<256x100xf16>) -> tensor<100x256xf16> {
  %0 = spyre.to_device %arg0 : tensor<256x100xf16> -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
  %1 = spyre.kernel "t_k0"(%0) split <d0 = 1, d1 = 4> {spyre.resident_out = 1648512 : i64, spyre.lx_budget = 1648512 : i64} : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
  ^bb0(%2: tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>):
    %3 = spyre.pointwise %2 : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%4: f32):
      %5 = arith.constant 0.000000e+00 : f32
      %6 = arith.maximumf %4, %5 : f32
      spyre.yield %6 : f32
    }
    spyre.yield %3 : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
  }
  %2 = spyre.permute %1 permutation [1, 0] : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
  %3 = spyre.kernel "t_k1"(%2) split <d0 = 4, d1 = 1> {spyre.onchip = {src = 1648512 : i64, dst = 1664896 : i64, src_rows = array<i64: 0, 64, 64, 128, 128, 192, 192, 256>, dst_boxes = array<i64: 0, 1, 0, 100, 1, 2, 0, 100, 2, 3, 0, 100, 3, 4, 0, 100>}, spyre.lx_budget = 1648512 : i64} : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
  ^bb0(%4: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
    %5 = spyre.restickify %4 : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    spyre.yield %5 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  }
  %4 = spyre.kernel "t_k2"(%3) split <d0 = 4, d1 = 1> {spyre.resident_in = array<i64: 0, 1664896>, spyre.lx_budget = 1648512 : i64} : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
  ^bb0(%5: tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>):
    %6 = spyre.pointwise %5 : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%7: f32):
      %8 = arith.constant 0.000000e+00 : f32
      %9 = arith.maximumf %7, %8 : f32
      spyre.yield %9 : f32
    }
    spyre.yield %6 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  }
  %5 = spyre.from_device %4 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> -> tensor<100x256xf16>
  func.return %5 : tensor<100x256xf16>
}
// CHECK: kernel t_k1: 'spyre.restickify' spyre.onchip: must be {src, dst, staging: i64, src_rows, dst_boxes: array<i64>}, got {src = 1648512 : i64, dst = 1664896 : i64, src_rows = array<i64: 0, 64, 64, 128, 128, 192, 192, 256>, dst_boxes = array<i64: 0, 1, 0, 100, 1, 2, 0, 100, 2, 3, 0, 100, 3, 4, 0, 100>}

// -----

// Bands for three cores of four (unchecked: a ValueError from inside the lowering).
func.func @between_pointwise(%arg0: tensor<256x100xf16>) -> tensor<100x256xf16> {
  %0 = spyre.to_device %arg0 : tensor<256x100xf16> -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
  %1 = spyre.kernel "t_k0"(%0) split <d0 = 1, d1 = 4> {spyre.resident_out = 1648512 : i64, spyre.lx_budget = 1648512 : i64} : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
  ^bb0(%2: tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>):
    %3 = spyre.pointwise %2 : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%4: f32):
      %5 = arith.constant 0.000000e+00 : f32
      %6 = arith.maximumf %4, %5 : f32
      spyre.yield %6 : f32
    }
    spyre.yield %3 : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
  }
  %2 = spyre.permute %1 permutation [1, 0] : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
  %3 = spyre.kernel "t_k1"(%2) split <d0 = 4, d1 = 1> {spyre.onchip = {src = 1648512 : i64, dst = 1664896 : i64, staging = 1677696 : i64, src_rows = array<i64: 0, 64, 64, 128, 128, 256>, dst_boxes = array<i64: 0, 1, 0, 100, 1, 2, 0, 100, 2, 3, 0, 100, 3, 4, 0, 100>}, spyre.lx_budget = 1648512 : i64} : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
  ^bb0(%4: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
    %5 = spyre.restickify %4 : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    spyre.yield %5 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  }
  %4 = spyre.kernel "t_k2"(%3) split <d0 = 4, d1 = 1> {spyre.resident_in = array<i64: 0, 1664896>, spyre.lx_budget = 1648512 : i64} : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
  ^bb0(%5: tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>):
    %6 = spyre.pointwise %5 : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%7: f32):
      %8 = arith.constant 0.000000e+00 : f32
      %9 = arith.maximumf %7, %8 : f32
      spyre.yield %9 : f32
    }
    spyre.yield %6 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  }
  %5 = spyre.from_device %4 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> -> tensor<100x256xf16>
  func.return %5 : tensor<100x256xf16>
}
// CHECK: kernel t_k1: 'spyre.restickify' spyre.onchip: src_rows needs 2 and dst_boxes 4 values per core (4 cores), got 6 and 16

// -----

// The mark on a kernel that is not a restickify (unchecked: an AssertionError from inside the lowering).
func.func @between_pointwise(%arg0: tensor<256x100xf16>) -> tensor<100x256xf16> {
  %0 = spyre.to_device %arg0 : tensor<256x100xf16> -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
  %1 = spyre.kernel "t_k0"(%0) split <d0 = 1, d1 = 4> {spyre.resident_out = 1648512 : i64, spyre.lx_budget = 1648512 : i64} : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
  ^bb0(%2: tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>):
    %3 = spyre.pointwise %2 : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%4: f32):
      %5 = arith.constant 0.000000e+00 : f32
      %6 = arith.maximumf %4, %5 : f32
      spyre.yield %6 : f32
    }
    spyre.yield %3 : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
  }
  %2 = spyre.permute %1 permutation [1, 0] : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
  %3 = spyre.kernel "t_k1"(%2) split <d0 = 4, d1 = 1> {spyre.onchip = {src = 1648512 : i64, dst = 1664896 : i64, staging = 1677696 : i64, src_rows = array<i64: 0, 64, 64, 128, 128, 192, 192, 256>, dst_boxes = array<i64: 0, 1, 0, 100, 1, 2, 0, 100, 2, 3, 0, 100, 3, 4, 0, 100>}, spyre.lx_budget = 1648512 : i64} : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
  ^bb0(%4: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
    %5 = spyre.restickify %4 : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    spyre.yield %5 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  }
  %4 = spyre.kernel "t_k2"(%3) split <d0 = 4, d1 = 1> {spyre.resident_in = array<i64: 0, 1664896>, spyre.lx_budget = 1648512 : i64, spyre.onchip = {src = 1648512 : i64, dst = 1664896 : i64, staging = 1677696 : i64, src_rows = array<i64: 0, 64, 64, 128, 128, 192, 192, 256>, dst_boxes = array<i64: 0, 1, 0, 100, 1, 2, 0, 100, 2, 3, 0, 100, 3, 4, 0, 100>}} : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
  ^bb0(%5: tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>):
    %6 = spyre.pointwise %5 : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%7: f32):
      %8 = arith.constant 0.000000e+00 : f32
      %9 = arith.maximumf %7, %8 : f32
      spyre.yield %9 : f32
    }
    spyre.yield %6 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  }
  %5 = spyre.from_device %4 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> -> tensor<100x256xf16>
  func.return %5 : tensor<100x256xf16>
}
// CHECK: kernel t_k2: 'spyre.restickify' spyre.onchip: marks a kernel of one restickify, this one has ['spyre.pointwise']

// -----

// Not the mark: a split (the consumer's, edited) with more boxes than the device has cores.
// spyre-plan-scratchpad refuses it with a diagnostic naming the kernel (unchecked: a
// ValueError, reported as an internal error; bench/fuzz.py draws such cases from this file).
func.func @between_pointwise(%arg0: tensor<256x100xf16>) -> tensor<100x256xf16> {
  %0 = spyre.to_device %arg0 : tensor<256x100xf16> -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
  %1 = spyre.kernel "t_k0"(%0) split <d0 = 1, d1 = 4> {spyre.resident_out = 1648512 : i64, spyre.lx_budget = 1648512 : i64} : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
  ^bb0(%2: tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>):
    %3 = spyre.pointwise %2 : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%4: f32):
      %5 = arith.constant 0.000000e+00 : f32
      %6 = arith.maximumf %4, %5 : f32
      spyre.yield %6 : f32
    }
    spyre.yield %3 : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
  }
  %2 = spyre.permute %1 permutation [1, 0] : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
  %3 = spyre.kernel "t_k1"(%2) split <d0 = 4, d1 = 1> {spyre.onchip = {src = 1648512 : i64, dst = 1664896 : i64, staging = 1677696 : i64, src_rows = array<i64: 0, 64, 64, 128, 128, 192, 192, 256>, dst_boxes = array<i64: 0, 1, 0, 100, 1, 2, 0, 100, 2, 3, 0, 100, 3, 4, 0, 100>}, spyre.lx_budget = 1648512 : i64} : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
  ^bb0(%4: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
    %5 = spyre.restickify %4 : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    spyre.yield %5 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  }
  %4 = spyre.kernel "t_k2"(%3) split <d0 = 4, d1 = 64> {spyre.resident_in = array<i64: 0, 1664896>, spyre.lx_budget = 1648512 : i64} : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
  ^bb0(%5: tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>):
    %6 = spyre.pointwise %5 : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%7: f32):
      %8 = arith.constant 0.000000e+00 : f32
      %9 = arith.maximumf %7, %8 : f32
      spyre.yield %9 : f32
    }
    spyre.yield %6 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  }
  %5 = spyre.from_device %4 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> -> tensor<100x256xf16>
  func.return %5 : tensor<100x256xf16>
}
// CHECK: kernel t_k2: split {{.*}} needs 200 cores, the device has 4

// -----

// The producer's result read by another op too: the producer leaves it in LX only, so the
// other reader would take zeros from DDR that nothing wrote (a wrong answer, no error).
func.func @between_pointwise(%arg0: tensor<256x100xf16>) -> (tensor<100x256xf16>, tensor<256x100xf16>) {
  %0 = spyre.to_device %arg0 : tensor<256x100xf16> -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
  %1 = spyre.kernel "t_k0"(%0) split <d0 = 1, d1 = 4> {spyre.resident_out = 1648512 : i64, spyre.lx_budget = 1648512 : i64} : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
  ^bb0(%2: tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>):
    %3 = spyre.pointwise %2 : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%4: f32):
      %5 = arith.constant 0.000000e+00 : f32
      %6 = arith.maximumf %4, %5 : f32
      spyre.yield %6 : f32
    }
    spyre.yield %3 : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
  }
  %2 = spyre.permute %1 permutation [1, 0] : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
  %3 = spyre.kernel "t_k1"(%2) split <d0 = 4, d1 = 1> {spyre.onchip = {src = 1648512 : i64, dst = 1664896 : i64, staging = 1677696 : i64, src_rows = array<i64: 0, 64, 64, 128, 128, 192, 192, 256>, dst_boxes = array<i64: 0, 1, 0, 100, 1, 2, 0, 100, 2, 3, 0, 100, 3, 4, 0, 100>}, spyre.lx_budget = 1648512 : i64} : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
  ^bb0(%4: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
    %5 = spyre.restickify %4 : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    spyre.yield %5 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  }
  %4 = spyre.kernel "t_k2"(%3) split <d0 = 4, d1 = 1> {spyre.resident_in = array<i64: 0, 1664896>, spyre.lx_budget = 1648512 : i64} : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
  ^bb0(%5: tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>):
    %6 = spyre.pointwise %5 : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%7: f32):
      %8 = arith.constant 0.000000e+00 : f32
      %9 = arith.maximumf %7, %8 : f32
      spyre.yield %9 : f32
    }
    spyre.yield %6 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  }
  %5 = spyre.from_device %4 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> -> tensor<100x256xf16>
  %extra = spyre.from_device %1 : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> -> tensor<256x100xf16>
  func.return %5, %extra : tensor<100x256xf16>, tensor<256x100xf16>
}
// CHECK: kernel t_k1: 'spyre.restickify' spyre.onchip: its source, or a view of it, has another reader, which would read DDR that nothing wrote (the producer leaves its result in LX only)

// -----

// A consumer that is no pointwise kernel (a restickify): only a single pointwise op's lowering
// reads its operand from LX in the boxes' form, and the pass never marks such a pair.
func.func @between_pointwise(%arg0: tensor<256x100xf16>) -> tensor<100x256xf16> {
  %0 = spyre.to_device %arg0 : tensor<256x100xf16> -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
  %1 = spyre.kernel "t_k0"(%0) split <d0 = 1, d1 = 4> {spyre.resident_out = 1648512 : i64, spyre.lx_budget = 1648512 : i64} : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
  ^bb0(%2: tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>):
    %3 = spyre.pointwise %2 : (tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>) -> tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%4: f32):
      %5 = arith.constant 0.000000e+00 : f32
      %6 = arith.maximumf %4, %5 : f32
      spyre.yield %6 : f32
    }
    spyre.yield %3 : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>>
  }
  %2 = spyre.permute %1 permutation [1, 0] : tensor<256x100xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 100, 1]>> -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
  %3 = spyre.kernel "t_k1"(%2) split <d0 = 4, d1 = 1> {spyre.onchip = {src = 1648512 : i64, dst = 1664896 : i64, staging = 1677696 : i64, src_rows = array<i64: 0, 64, 64, 128, 128, 192, 192, 256>, dst_boxes = array<i64: 0, 1, 0, 100, 1, 2, 0, 100, 2, 3, 0, 100, 3, 4, 0, 100>}, spyre.lx_budget = 1648512 : i64} : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
  ^bb0(%4: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
    %5 = spyre.restickify %4 : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
    spyre.yield %5 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  }
  %4 = spyre.kernel "t_k2"(%3) split <d0 = 1, d1 = 4> {spyre.resident_in = array<i64: 0, 1664896>, spyre.lx_budget = 1648512 : i64} : (tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [100, 4, 64], stride_map = [256, 64, 1]>> {
  ^bb0(%5: tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>):
    %6 = spyre.restickify %5 : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> -> tensor<100x256xf16, #spyre.layout<device_size = [100, 4, 64], stride_map = [256, 64, 1]>>
    spyre.yield %6 : tensor<100x256xf16, #spyre.layout<device_size = [100, 4, 64], stride_map = [256, 64, 1]>>
  }
  %5 = spyre.from_device %4 : tensor<100x256xf16, #spyre.layout<device_size = [100, 4, 64], stride_map = [256, 64, 1]>> -> tensor<100x256xf16>
  func.return %5 : tensor<100x256xf16>
}
// CHECK: kernel t_k1: 'spyre.restickify' spyre.onchip: its result (kept in LX only) is not read by exactly one pointwise kernel that takes it from LX (spyre.resident_in = [input, offset])
