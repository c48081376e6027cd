// RUN: spyre-opt %s -p spyre-fuse --split-input-file | filecheck %s
// RUN: spyre-opt %s -p 'spyre-fuse{attention=false}' --split-input-file | filecheck %s --check-prefix=APART

// Grouped-query attention as torch-adapt and spyre-propagate-layouts leave it: 4 query heads
// sharing 2 KV heads, 128 positions, head dim 64, a mask added to the scaled scores. The
// scores product (2 matrices of 256 rows: the query heads of a group are rows of one
// product), the softmax's row group (the scaling and the mask's add folded into one
// pointwise op) and the context product become one kernel (spyre.Attention) reading q, K^T,
// the mask and V: the scores never reach DDR.
//
// Apart: with the option off (APART), and on a target where a matrix's K^T and V do not fit
// the LX budget (20 KiB of LX, a 16 KiB budget: K^T alone takes 16 KiB) or where fewer rows
// than 8 per core are there (2 x 256 rows on 65 cores), the products and the row group are
// three kernels.

// CHECK-LABEL: func.func @attention
// CHECK:         %[[C:.*]] = spyre.kernel "k0"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : {{.*}} {
// CHECK-NEXT:    ^{{.*}}(%[[Q:.*]]: {{.*}}, %[[KT:.*]]: {{.*}}, %[[MASK:.*]]: {{.*}}, %[[V:.*]]: {{.*}}):
// CHECK-NEXT:      %[[S:.*]] = spyre.matmul %[[Q]], %[[KT]]
// CHECK-NEXT:      %[[SV:.*]] = spyre.reshape %[[S]]
// CHECK-NEXT:      %[[X:.*]] = spyre.pointwise %[[SV]], %[[MASK]]
// CHECK:           arith.mulf
// CHECK-NEXT:      arith.addf
// CHECK:           %[[MAX:.*]] = spyre.reduce "max" %[[X]] dim 3
// CHECK-NEXT:      %[[E:.*]] = spyre.pointwise %[[X]], %[[MAX]]
// CHECK:           %[[SUM:.*]] = spyre.reduce "sum" %[[E]] dim 3
// CHECK-NEXT:      %[[P:.*]] = spyre.pointwise %[[E]], %[[SUM]]
// CHECK:           %[[PV:.*]] = spyre.reshape %[[P]]
// CHECK-NEXT:      %[[O:.*]] = spyre.matmul %[[PV]], %[[V]]
// CHECK-NEXT:      spyre.yield %[[O]]
// CHECK-NEXT:    }
// CHECK-NOT:     spyre.kernel
// CHECK:         spyre.reshape %[[C]]

// APART-LABEL: func.func @attention
// APART:         spyre.kernel "{{.*}}"
// APART-NEXT:    ^
// APART-NEXT:      spyre.matmul
// APART-NEXT:      spyre.yield
// APART:         spyre.kernel "{{.*}}"
// APART-NEXT:    ^
// APART-NEXT:      spyre.pointwise
// APART:           spyre.reduce "max"
// APART:         spyre.kernel "{{.*}}"
// APART-NEXT:    ^
// APART-NEXT:      spyre.matmul
// APART-NEXT:      spyre.yield

func.func @attention(%k: tensor<1x2x128x64xf32>, %v: tensor<1x2x128x64xf32>, %q: tensor<1x4x128x64xf32>, %mask: tensor<128x128xf32>) -> tensor<1x4x128x64xf32> {
  %0 = spyre.to_device %q : tensor<1x4x128x64xf32> -> tensor<1x4x128x64xf16, #spyre.layout<device_size = [4, 128, 1, 1, 64], stride_map = [8192, 64, 64, 32768, 1]>>
  %1 = spyre.reshape %0 : tensor<1x4x128x64xf16, #spyre.layout<device_size = [4, 128, 1, 1, 64], stride_map = [8192, 64, 64, 32768, 1]>> -> tensor<2x256x64xf16, #spyre.layout<device_size = [2, 256, 1, 1, 64], stride_map = [16384, 64, 64, 32768, 1]>>
  %2 = spyre.to_device %k permutation [0, 1, 3, 2] : tensor<1x2x128x64xf32> -> tensor<2x64x128xf16, #spyre.layout<device_size = [64, 2, 2, 64], stride_map = [128, 64, 8192, 1]>>
  %3 = spyre.matmul %1, %2 : (tensor<2x256x64xf16, #spyre.layout<device_size = [2, 256, 1, 1, 64], stride_map = [16384, 64, 64, 32768, 1]>>, tensor<2x64x128xf16, #spyre.layout<device_size = [64, 2, 2, 64], stride_map = [128, 64, 8192, 1]>>) -> tensor<2x256x128xf16, #spyre.layout<device_size = [2, 256, 2, 64], stride_map = [32768, 128, 64, 1]>>
  %4 = spyre.reshape %3 : tensor<2x256x128xf16, #spyre.layout<device_size = [2, 256, 2, 64], stride_map = [32768, 128, 64, 1]>> -> tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 64], stride_map = [16384, 128, 64, 1]>>
  %5 = spyre.pointwise %4 : (tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 64], stride_map = [16384, 128, 64, 1]>>) -> tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 1, 64], stride_map = [16384, 128, 64, 65536, 1]>> {
  ^bb0(%6: f32):
    %7 = arith.constant 1.250000e-01 : f32
    %8 = arith.mulf %6, %7 : f32
    spyre.yield %8 : f32
  }
  %9 = spyre.to_device %mask : tensor<128x128xf32> -> tensor<128x128xf16, #spyre.layout<device_size = [2, 128, 64], stride_map = [64, 128, 1]>>
  %10 = spyre.pointwise %5, %9 : (tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 1, 64], stride_map = [16384, 128, 64, 65536, 1]>>, tensor<128x128xf16, #spyre.layout<device_size = [2, 128, 64], stride_map = [64, 128, 1]>>) -> tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 1, 64], stride_map = [16384, 128, 64, 65536, 1]>> {
  ^bb0(%11: f32, %12: f32):
    %13 = arith.addf %11, %12 : f32
    spyre.yield %13 : f32
  }
  %14 = spyre.reduce "max" %10 dim 3 : tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 1, 64], stride_map = [16384, 128, 64, 65536, 1]>> -> tensor<1x4x128x1xf16, #spyre.layout<device_size = [4, 128, 1, 1, 64], stride_map = [128, 1, 64, 512, 0]>>
  %15 = spyre.pointwise %10, %14 : (tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 1, 64], stride_map = [16384, 128, 64, 65536, 1]>>, tensor<1x4x128x1xf16, #spyre.layout<device_size = [4, 128, 1, 1, 64], stride_map = [128, 1, 64, 512, 0]>>) -> tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 1, 64], stride_map = [16384, 128, 64, 65536, 1]>> {
  ^bb0(%16: f32, %17: f32):
    %18 = arith.subf %16, %17 : f32
    %19 = math.exp %18 : f32
    spyre.yield %19 : f32
  }
  %20 = spyre.reduce "sum" %15 dim 3 : tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 1, 64], stride_map = [16384, 128, 64, 65536, 1]>> -> tensor<1x4x128x1xf16, #spyre.layout<device_size = [4, 128, 1, 1, 64], stride_map = [128, 1, 64, 512, 0]>>
  %21 = spyre.pointwise %15, %20 : (tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 1, 64], stride_map = [16384, 128, 64, 65536, 1]>>, tensor<1x4x128x1xf16, #spyre.layout<device_size = [4, 128, 1, 1, 64], stride_map = [128, 1, 64, 512, 0]>>) -> tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 1, 64], stride_map = [16384, 128, 64, 65536, 1]>> {
  ^bb0(%22: f32, %23: f32):
    %24 = arith.divf %22, %23 : f32
    spyre.yield %24 : f32
  }
  %25 = spyre.to_device %v : tensor<1x2x128x64xf32> -> tensor<1x2x128x64xf16, #spyre.layout<device_size = [2, 128, 1, 1, 64], stride_map = [8192, 64, 64, 16384, 1]>>
  %26 = spyre.reshape %25 : tensor<1x2x128x64xf16, #spyre.layout<device_size = [2, 128, 1, 1, 64], stride_map = [8192, 64, 64, 16384, 1]>> -> tensor<2x128x64xf16, #spyre.layout<device_size = [2, 128, 1, 1, 64], stride_map = [8192, 64, 64, 16384, 1]>>
  %27 = spyre.reshape %21 : tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 1, 64], stride_map = [16384, 128, 64, 65536, 1]>> -> tensor<2x256x128xf16, #spyre.layout<device_size = [2, 256, 2, 1, 64], stride_map = [32768, 128, 64, 65536, 1]>>
  %28 = spyre.matmul %27, %26 : (tensor<2x256x128xf16, #spyre.layout<device_size = [2, 256, 2, 1, 64], stride_map = [32768, 128, 64, 65536, 1]>>, tensor<2x128x64xf16, #spyre.layout<device_size = [2, 128, 1, 1, 64], stride_map = [8192, 64, 64, 16384, 1]>>) -> tensor<2x256x64xf16, #spyre.layout<device_size = [2, 256, 1, 64], stride_map = [16384, 64, 64, 1]>>
  %29 = spyre.reshape %28 : tensor<2x256x64xf16, #spyre.layout<device_size = [2, 256, 1, 64], stride_map = [16384, 64, 64, 1]>> -> tensor<1x4x128x64xf16, #spyre.layout<device_size = [4, 128, 1, 64], stride_map = [8192, 64, 64, 1]>>
  %30 = spyre.from_device %29 : tensor<1x4x128x64xf16, #spyre.layout<device_size = [4, 128, 1, 64], stride_map = [8192, 64, 64, 1]>> -> tensor<1x4x128x64xf32>
  func.return %30 : tensor<1x4x128x64xf32>
}

// -----

// A target whose planner's 16 KiB of LX do not hold a matrix's K^T and V: three kernels.
// CHECK-LABEL: func.func @small_lx
// CHECK:         spyre.kernel "{{.*}}"
// CHECK-NEXT:    ^
// CHECK-NEXT:      spyre.matmul
// CHECK-NEXT:      spyre.yield
// CHECK:         spyre.kernel "{{.*}}"
// CHECK-NEXT:    ^
// CHECK-NEXT:      spyre.pointwise
// CHECK:           spyre.reduce "max"
// CHECK:         spyre.kernel "{{.*}}"
// CHECK-NEXT:    ^
// CHECK-NEXT:      spyre.matmul
// CHECK-NEXT:      spyre.yield

builtin.module attributes {spyre.target = #spyre.target<lx_bytes = 20480>} {
  func.func @small_lx(%k: tensor<1x2x128x64xf32>, %v: tensor<1x2x128x64xf32>, %q: tensor<1x4x128x64xf32>, %mask: tensor<128x128xf32>) -> tensor<1x4x128x64xf32> {
    %0 = spyre.to_device %q : tensor<1x4x128x64xf32> -> tensor<1x4x128x64xf16, #spyre.layout<device_size = [4, 128, 1, 1, 64], stride_map = [8192, 64, 64, 32768, 1]>>
    %1 = spyre.reshape %0 : tensor<1x4x128x64xf16, #spyre.layout<device_size = [4, 128, 1, 1, 64], stride_map = [8192, 64, 64, 32768, 1]>> -> tensor<2x256x64xf16, #spyre.layout<device_size = [2, 256, 1, 1, 64], stride_map = [16384, 64, 64, 32768, 1]>>
    %2 = spyre.to_device %k permutation [0, 1, 3, 2] : tensor<1x2x128x64xf32> -> tensor<2x64x128xf16, #spyre.layout<device_size = [64, 2, 2, 64], stride_map = [128, 64, 8192, 1]>>
    %3 = spyre.matmul %1, %2 : (tensor<2x256x64xf16, #spyre.layout<device_size = [2, 256, 1, 1, 64], stride_map = [16384, 64, 64, 32768, 1]>>, tensor<2x64x128xf16, #spyre.layout<device_size = [64, 2, 2, 64], stride_map = [128, 64, 8192, 1]>>) -> tensor<2x256x128xf16, #spyre.layout<device_size = [2, 256, 2, 64], stride_map = [32768, 128, 64, 1]>>
    %4 = spyre.reshape %3 : tensor<2x256x128xf16, #spyre.layout<device_size = [2, 256, 2, 64], stride_map = [32768, 128, 64, 1]>> -> tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 64], stride_map = [16384, 128, 64, 1]>>
    %5 = spyre.pointwise %4 : (tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 64], stride_map = [16384, 128, 64, 1]>>) -> tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 1, 64], stride_map = [16384, 128, 64, 65536, 1]>> {
    ^bb0(%6: f32):
      %7 = arith.constant 1.250000e-01 : f32
      %8 = arith.mulf %6, %7 : f32
      spyre.yield %8 : f32
    }
    %9 = spyre.to_device %mask : tensor<128x128xf32> -> tensor<128x128xf16, #spyre.layout<device_size = [2, 128, 64], stride_map = [64, 128, 1]>>
    %10 = spyre.pointwise %5, %9 : (tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 1, 64], stride_map = [16384, 128, 64, 65536, 1]>>, tensor<128x128xf16, #spyre.layout<device_size = [2, 128, 64], stride_map = [64, 128, 1]>>) -> tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 1, 64], stride_map = [16384, 128, 64, 65536, 1]>> {
    ^bb0(%11: f32, %12: f32):
      %13 = arith.addf %11, %12 : f32
      spyre.yield %13 : f32
    }
    %14 = spyre.reduce "max" %10 dim 3 : tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 1, 64], stride_map = [16384, 128, 64, 65536, 1]>> -> tensor<1x4x128x1xf16, #spyre.layout<device_size = [4, 128, 1, 1, 64], stride_map = [128, 1, 64, 512, 0]>>
    %15 = spyre.pointwise %10, %14 : (tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 1, 64], stride_map = [16384, 128, 64, 65536, 1]>>, tensor<1x4x128x1xf16, #spyre.layout<device_size = [4, 128, 1, 1, 64], stride_map = [128, 1, 64, 512, 0]>>) -> tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 1, 64], stride_map = [16384, 128, 64, 65536, 1]>> {
    ^bb0(%16: f32, %17: f32):
      %18 = arith.subf %16, %17 : f32
      %19 = math.exp %18 : f32
      spyre.yield %19 : f32
    }
    %20 = spyre.reduce "sum" %15 dim 3 : tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 1, 64], stride_map = [16384, 128, 64, 65536, 1]>> -> tensor<1x4x128x1xf16, #spyre.layout<device_size = [4, 128, 1, 1, 64], stride_map = [128, 1, 64, 512, 0]>>
    %21 = spyre.pointwise %15, %20 : (tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 1, 64], stride_map = [16384, 128, 64, 65536, 1]>>, tensor<1x4x128x1xf16, #spyre.layout<device_size = [4, 128, 1, 1, 64], stride_map = [128, 1, 64, 512, 0]>>) -> tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 1, 64], stride_map = [16384, 128, 64, 65536, 1]>> {
    ^bb0(%22: f32, %23: f32):
      %24 = arith.divf %22, %23 : f32
      spyre.yield %24 : f32
    }
    %25 = spyre.to_device %v : tensor<1x2x128x64xf32> -> tensor<1x2x128x64xf16, #spyre.layout<device_size = [2, 128, 1, 1, 64], stride_map = [8192, 64, 64, 16384, 1]>>
    %26 = spyre.reshape %25 : tensor<1x2x128x64xf16, #spyre.layout<device_size = [2, 128, 1, 1, 64], stride_map = [8192, 64, 64, 16384, 1]>> -> tensor<2x128x64xf16, #spyre.layout<device_size = [2, 128, 1, 1, 64], stride_map = [8192, 64, 64, 16384, 1]>>
    %27 = spyre.reshape %21 : tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 1, 64], stride_map = [16384, 128, 64, 65536, 1]>> -> tensor<2x256x128xf16, #spyre.layout<device_size = [2, 256, 2, 1, 64], stride_map = [32768, 128, 64, 65536, 1]>>
    %28 = spyre.matmul %27, %26 : (tensor<2x256x128xf16, #spyre.layout<device_size = [2, 256, 2, 1, 64], stride_map = [32768, 128, 64, 65536, 1]>>, tensor<2x128x64xf16, #spyre.layout<device_size = [2, 128, 1, 1, 64], stride_map = [8192, 64, 64, 16384, 1]>>) -> tensor<2x256x64xf16, #spyre.layout<device_size = [2, 256, 1, 64], stride_map = [16384, 64, 64, 1]>>
    %29 = spyre.reshape %28 : tensor<2x256x64xf16, #spyre.layout<device_size = [2, 256, 1, 64], stride_map = [16384, 64, 64, 1]>> -> tensor<1x4x128x64xf16, #spyre.layout<device_size = [4, 128, 1, 64], stride_map = [8192, 64, 64, 1]>>
    %30 = spyre.from_device %29 : tensor<1x4x128x64xf16, #spyre.layout<device_size = [4, 128, 1, 64], stride_map = [8192, 64, 64, 1]>> -> tensor<1x4x128x64xf32>
    func.return %30 : tensor<1x4x128x64xf32>
  }
}

// -----

// A target of 65 cores, more than the 2 x 256 rows / 8 give rows to: three kernels.
// CHECK-LABEL: func.func @many_cores
// CHECK:         spyre.kernel "{{.*}}"
// CHECK-NEXT:    ^
// CHECK-NEXT:      spyre.matmul
// CHECK-NEXT:      spyre.yield
// CHECK:         spyre.kernel "{{.*}}"
// CHECK-NEXT:    ^
// CHECK-NEXT:      spyre.pointwise
// CHECK:           spyre.reduce "max"
// CHECK:         spyre.kernel "{{.*}}"
// CHECK-NEXT:    ^
// CHECK-NEXT:      spyre.matmul
// CHECK-NEXT:      spyre.yield

builtin.module attributes {spyre.target = #spyre.target<cores = 65>} {
  func.func @many_cores(%k: tensor<1x2x128x64xf32>, %v: tensor<1x2x128x64xf32>, %q: tensor<1x4x128x64xf32>, %mask: tensor<128x128xf32>) -> tensor<1x4x128x64xf32> {
    %0 = spyre.to_device %q : tensor<1x4x128x64xf32> -> tensor<1x4x128x64xf16, #spyre.layout<device_size = [4, 128, 1, 1, 64], stride_map = [8192, 64, 64, 32768, 1]>>
    %1 = spyre.reshape %0 : tensor<1x4x128x64xf16, #spyre.layout<device_size = [4, 128, 1, 1, 64], stride_map = [8192, 64, 64, 32768, 1]>> -> tensor<2x256x64xf16, #spyre.layout<device_size = [2, 256, 1, 1, 64], stride_map = [16384, 64, 64, 32768, 1]>>
    %2 = spyre.to_device %k permutation [0, 1, 3, 2] : tensor<1x2x128x64xf32> -> tensor<2x64x128xf16, #spyre.layout<device_size = [64, 2, 2, 64], stride_map = [128, 64, 8192, 1]>>
    %3 = spyre.matmul %1, %2 : (tensor<2x256x64xf16, #spyre.layout<device_size = [2, 256, 1, 1, 64], stride_map = [16384, 64, 64, 32768, 1]>>, tensor<2x64x128xf16, #spyre.layout<device_size = [64, 2, 2, 64], stride_map = [128, 64, 8192, 1]>>) -> tensor<2x256x128xf16, #spyre.layout<device_size = [2, 256, 2, 64], stride_map = [32768, 128, 64, 1]>>
    %4 = spyre.reshape %3 : tensor<2x256x128xf16, #spyre.layout<device_size = [2, 256, 2, 64], stride_map = [32768, 128, 64, 1]>> -> tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 64], stride_map = [16384, 128, 64, 1]>>
    %5 = spyre.pointwise %4 : (tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 64], stride_map = [16384, 128, 64, 1]>>) -> tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 1, 64], stride_map = [16384, 128, 64, 65536, 1]>> {
    ^bb0(%6: f32):
      %7 = arith.constant 1.250000e-01 : f32
      %8 = arith.mulf %6, %7 : f32
      spyre.yield %8 : f32
    }
    %9 = spyre.to_device %mask : tensor<128x128xf32> -> tensor<128x128xf16, #spyre.layout<device_size = [2, 128, 64], stride_map = [64, 128, 1]>>
    %10 = spyre.pointwise %5, %9 : (tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 1, 64], stride_map = [16384, 128, 64, 65536, 1]>>, tensor<128x128xf16, #spyre.layout<device_size = [2, 128, 64], stride_map = [64, 128, 1]>>) -> tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 1, 64], stride_map = [16384, 128, 64, 65536, 1]>> {
    ^bb0(%11: f32, %12: f32):
      %13 = arith.addf %11, %12 : f32
      spyre.yield %13 : f32
    }
    %14 = spyre.reduce "max" %10 dim 3 : tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 1, 64], stride_map = [16384, 128, 64, 65536, 1]>> -> tensor<1x4x128x1xf16, #spyre.layout<device_size = [4, 128, 1, 1, 64], stride_map = [128, 1, 64, 512, 0]>>
    %15 = spyre.pointwise %10, %14 : (tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 1, 64], stride_map = [16384, 128, 64, 65536, 1]>>, tensor<1x4x128x1xf16, #spyre.layout<device_size = [4, 128, 1, 1, 64], stride_map = [128, 1, 64, 512, 0]>>) -> tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 1, 64], stride_map = [16384, 128, 64, 65536, 1]>> {
    ^bb0(%16: f32, %17: f32):
      %18 = arith.subf %16, %17 : f32
      %19 = math.exp %18 : f32
      spyre.yield %19 : f32
    }
    %20 = spyre.reduce "sum" %15 dim 3 : tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 1, 64], stride_map = [16384, 128, 64, 65536, 1]>> -> tensor<1x4x128x1xf16, #spyre.layout<device_size = [4, 128, 1, 1, 64], stride_map = [128, 1, 64, 512, 0]>>
    %21 = spyre.pointwise %15, %20 : (tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 1, 64], stride_map = [16384, 128, 64, 65536, 1]>>, tensor<1x4x128x1xf16, #spyre.layout<device_size = [4, 128, 1, 1, 64], stride_map = [128, 1, 64, 512, 0]>>) -> tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 1, 64], stride_map = [16384, 128, 64, 65536, 1]>> {
    ^bb0(%22: f32, %23: f32):
      %24 = arith.divf %22, %23 : f32
      spyre.yield %24 : f32
    }
    %25 = spyre.to_device %v : tensor<1x2x128x64xf32> -> tensor<1x2x128x64xf16, #spyre.layout<device_size = [2, 128, 1, 1, 64], stride_map = [8192, 64, 64, 16384, 1]>>
    %26 = spyre.reshape %25 : tensor<1x2x128x64xf16, #spyre.layout<device_size = [2, 128, 1, 1, 64], stride_map = [8192, 64, 64, 16384, 1]>> -> tensor<2x128x64xf16, #spyre.layout<device_size = [2, 128, 1, 1, 64], stride_map = [8192, 64, 64, 16384, 1]>>
    %27 = spyre.reshape %21 : tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 1, 64], stride_map = [16384, 128, 64, 65536, 1]>> -> tensor<2x256x128xf16, #spyre.layout<device_size = [2, 256, 2, 1, 64], stride_map = [32768, 128, 64, 65536, 1]>>
    %28 = spyre.matmul %27, %26 : (tensor<2x256x128xf16, #spyre.layout<device_size = [2, 256, 2, 1, 64], stride_map = [32768, 128, 64, 65536, 1]>>, tensor<2x128x64xf16, #spyre.layout<device_size = [2, 128, 1, 1, 64], stride_map = [8192, 64, 64, 16384, 1]>>) -> tensor<2x256x64xf16, #spyre.layout<device_size = [2, 256, 1, 64], stride_map = [16384, 64, 64, 1]>>
    %29 = spyre.reshape %28 : tensor<2x256x64xf16, #spyre.layout<device_size = [2, 256, 1, 64], stride_map = [16384, 64, 64, 1]>> -> tensor<1x4x128x64xf16, #spyre.layout<device_size = [4, 128, 1, 64], stride_map = [8192, 64, 64, 1]>>
    %30 = spyre.from_device %29 : tensor<1x4x128x64xf16, #spyre.layout<device_size = [4, 128, 1, 64], stride_map = [8192, 64, 64, 1]>> -> tensor<1x4x128x64xf32>
    func.return %30 : tensor<1x4x128x64xf32>
  }
}
