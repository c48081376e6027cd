// RUN: spyre-opt %s -p spyre-fuse --split-input-file | filecheck %s
// RUN: spyre-opt %s -p 'spyre-fuse{epilogues=false}' --split-input-file | filecheck %s --check-prefix=NOEPI
// RUN: spyre-opt %s -p 'spyre-fuse{pointwise_chains=false}' --split-input-file | filecheck %s --check-prefix=UNFUSED
// RUN: spyre-opt %s -p 'spyre-fuse{sliced_concats=false}' --split-input-file | filecheck %s --check-prefix=UNSLICED
// spyre-fuse alone, on spyre-level functions with their layouts written in (as
// spyre-propagate-layouts leaves them), so that only this pass decides the output.

// A 128x256x512 matmul, a bias add, relu on (100, 200), a transpose, relu on (200, 100).
// The matmul and its bias add are one kernel (an epilogue: the add runs on each output tile in
// LX); every other compute op (pointwise, restickify) is a kernel of its own; views and
// transfers stay outside.

// CHECK-LABEL: func.func @kernels
// CHECK:         %[[MM:.*]] = spyre.kernel "k0"(%{{.*}}, %{{.*}}, %{{.*}}) : {{.*}} {
// CHECK-NEXT:    ^{{.*}}(%[[A:.*]]: {{.*}}, %[[B:.*]]: {{.*}}, %[[BIAS:.*]]: {{.*}}):
// CHECK-NEXT:      %[[C:.*]] = spyre.matmul %[[A]], %[[B]]
// CHECK-NEXT:      %[[E:.*]] = spyre.pointwise %[[C]], %[[BIAS]]
// CHECK-NEXT:      ^{{.*}}(%[[CE:.*]]: f32, %[[BE:.*]]: f32):
// CHECK-NEXT:        %[[S:.*]] = arith.addf %[[CE]], %[[BE]] : f32
// CHECK-NEXT:        spyre.yield %[[S]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      spyre.yield %[[E]]
// CHECK-NEXT:    }
// CHECK:         %[[RELU:.*]] = spyre.kernel "k1"
// CHECK:           spyre.pointwise
// The transpose view stays between launches; its relayout is a kernel of its own.
// CHECK:         %[[T:.*]] = spyre.permute %[[RELU]]
// CHECK-NEXT:    %[[R:.*]] = spyre.kernel "k2"(%[[T]])
// CHECK-NEXT:    ^{{.*}}
// CHECK-NEXT:      spyre.restickify
// CHECK:         spyre.kernel "k3"(%[[R]])
// CHECK:         spyre.from_device %[[MM]]
// CHECK-NOT:     spyre.kernel

// Without epilogues the bias add is a launch of its own, reading the matmul's result from DDR.
// NOEPI-LABEL:   func.func @kernels
// NOEPI:         %[[MM:.*]] = spyre.kernel "k0"(%{{.*}}, %{{.*}}) : {{.*}} {
// NOEPI-NEXT:    ^{{.*}}(%[[A:.*]]: {{.*}}, %[[B:.*]]: {{.*}}):
// NOEPI-NEXT:      %[[C:.*]] = spyre.matmul %[[A]], %[[B]]
// NOEPI-NEXT:      spyre.yield %[[C]]
// NOEPI-NEXT:    }
// NOEPI:         spyre.kernel "k1"(%[[MM]], %{{.*}})
// NOEPI:           spyre.pointwise
// NOEPI:         spyre.kernel "k2"
// NOEPI:         spyre.kernel "k3"
// NOEPI:         spyre.kernel "k4"
// NOEPI-NOT:     spyre.kernel
// NOEPI:         func.return
func.func @kernels(%x: tensor<128x256xf32>, %w: tensor<256x512xf32>, %b: tensor<512xf32>, %y: tensor<100x200xf32>) -> (tensor<128x512xf32>, tensor<200x100xf32>) {
  %0 = spyre.to_device %x : tensor<128x256xf32> -> tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>
  %1 = spyre.to_device %w : tensor<256x512xf32> -> tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>
  %2 = spyre.to_device %b : tensor<512xf32> -> tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>
  %3 = spyre.to_device %y : tensor<100x200xf32> -> tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>
  %4 = spyre.matmul %0, %1 : (tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>
  %5 = spyre.pointwise %4, %2 : (tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> {
  ^bb0(%6: f32, %7: f32):
    %8 = arith.addf %6, %7 : f32
    spyre.yield %8 : f32
  }
  %9 = spyre.pointwise %3 : (tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>) -> tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>> {
  ^bb0(%10: f32):
    %11 = arith.constant 0.000000e+00 : f32
    %12 = arith.maximumf %10, %11 : f32
    spyre.yield %12 : f32
  }
  %13 = spyre.permute %9 permutation [1, 0] : tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>> -> tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>>
  %14 = spyre.restickify %13 : tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>> -> tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>
  %15 = spyre.pointwise %14 : (tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>) -> tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>> {
  ^bb0(%16: f32):
    %17 = arith.constant 0.000000e+00 : f32
    %18 = arith.maximumf %16, %17 : f32
    spyre.yield %18 : f32
  }
  %19 = spyre.from_device %5 : tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> -> tensor<128x512xf32>
  %20 = spyre.from_device %15 : tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>> -> tensor<200x100xf32>
  func.return %19, %20 : tensor<128x512xf32>, tensor<200x100xf32>
}

// -----

// Two layer norms joined by a residual add (convert-torch-to-spyre's two native_layer_norm, the
// first one's result also returned, as a transformer layer's first norm is also read by the
// next sublayer): a row group grown from the first norm reaches through the add into the
// second, and its first norm's result is read outside it (returned); the group ends there, and
// the add and the second norm are a group of their own. Two launches.
// CHECK-LABEL: func.func @chained_norms
// CHECK:         %[[N1:.*]] = spyre.kernel "k0"
// CHECK:           spyre.reduce "mean"
// CHECK:           spyre.reduce "mean"
// CHECK:           math.rsqrt
// CHECK:           spyre.yield %{{.*}} : tensor
// CHECK-NEXT:    }
// CHECK-NEXT:    spyre.kernel "k1"(%[[N1]], %{{.*}})
// CHECK-NEXT:    ^{{.*}}
// CHECK-NEXT:      spyre.pointwise
// CHECK-NEXT:      ^{{.*}}
// CHECK-NEXT:        arith.addf
// CHECK:           spyre.reduce "mean"
// CHECK:           spyre.reduce "mean"
// CHECK:           math.rsqrt
// CHECK-NOT:     spyre.kernel
// CHECK:         spyre.from_device %[[N1]]
func.func @chained_norms(%x: tensor<4x64xf32>, %w: tensor<64xf32>, %b: tensor<64xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>) {
  %0 = spyre.to_device %x : tensor<4x64xf32> -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
  %1 = spyre.to_device %w : tensor<64xf32> -> tensor<64xf16, #spyre.layout<device_size = [1, 64], stride_map = [64, 1]>>
  %2 = spyre.to_device %b : tensor<64xf32> -> tensor<64xf16, #spyre.layout<device_size = [1, 64], stride_map = [64, 1]>>
  %3 = spyre.reduce "mean" %0 dim 1 : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, 0]>>
  %4 = spyre.pointwise %0, %3 : (tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, 0]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  ^bb0(%5: f32, %6: f32):
    %7 = arith.subf %5, %6 : f32
    spyre.yield %7 : f32
  }
  %8 = spyre.pointwise %4 : (tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  ^bb0(%9: f32):
    %10 = arith.mulf %9, %9 : f32
    spyre.yield %10 : f32
  }
  %11 = spyre.reduce "mean" %8 dim 1 : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, 0]>>
  %12 = spyre.pointwise %11 : (tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, 0]>>) -> tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, 0]>> {
  ^bb0(%13: f32):
    %14 = arith.constant 1.000000e-05 : f32
    %15 = arith.addf %13, %14 : f32
    %16 = math.rsqrt %15 : f32
    spyre.yield %16 : f32
  }
  %17 = spyre.pointwise %4, %12, %1, %2 : (tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, 0]>>, tensor<64xf16, #spyre.layout<device_size = [1, 64], stride_map = [64, 1]>>, tensor<64xf16, #spyre.layout<device_size = [1, 64], stride_map = [64, 1]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  ^bb0(%18: f32, %19: f32, %20: f32, %21: f32):
    %22 = arith.mulf %18, %19 : f32
    %23 = arith.mulf %22, %20 : f32
    %24 = arith.addf %23, %21 : f32
    spyre.yield %24 : f32
  }
  %25 = spyre.pointwise %17, %0 : (tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  ^bb0(%26: f32, %27: f32):
    %28 = arith.addf %26, %27 : f32
    spyre.yield %28 : f32
  }
  %29 = spyre.reduce "mean" %25 dim 1 : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, 0]>>
  %30 = spyre.pointwise %25, %29 : (tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, 0]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  ^bb0(%31: f32, %32: f32):
    %33 = arith.subf %31, %32 : f32
    spyre.yield %33 : f32
  }
  %34 = spyre.pointwise %30 : (tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  ^bb0(%35: f32):
    %36 = arith.mulf %35, %35 : f32
    spyre.yield %36 : f32
  }
  %37 = spyre.reduce "mean" %34 dim 1 : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, 0]>>
  %38 = spyre.pointwise %37 : (tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, 0]>>) -> tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, 0]>> {
  ^bb0(%39: f32):
    %40 = arith.constant 1.000000e-05 : f32
    %41 = arith.addf %39, %40 : f32
    %42 = math.rsqrt %41 : f32
    spyre.yield %42 : f32
  }
  %43 = spyre.pointwise %30, %38, %1, %2 : (tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, 0]>>, tensor<64xf16, #spyre.layout<device_size = [1, 64], stride_map = [64, 1]>>, tensor<64xf16, #spyre.layout<device_size = [1, 64], stride_map = [64, 1]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  ^bb0(%44: f32, %45: f32, %46: f32, %47: f32):
    %48 = arith.mulf %44, %45 : f32
    %49 = arith.mulf %48, %46 : f32
    %50 = arith.addf %49, %47 : f32
    spyre.yield %50 : f32
  }
  %51 = spyre.from_device %17 : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf32>
  %52 = spyre.from_device %43 : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf32>
  func.return %51, %52 : tensor<4x64xf32>, tensor<4x64xf32>
}

// -----

// A pointwise chain (x * 2 + b, then tanh) is one launch whose body computes the whole chain in
// f32; a producer with two readers (the mul and the exp) keeps its own launch.

// CHECK-LABEL: func.func @chain(
// CHECK:         spyre.kernel "k0"(%{{.*}}, %{{.*}})
// CHECK-NEXT:    ^{{.*}}(%[[X:.*]]: {{.*}}, %[[B:.*]]: {{.*}}):
// CHECK-NEXT:      spyre.pointwise %[[X]], %[[B]]
// CHECK-NEXT:      ^{{.*}}(%[[XE:.*]]: f32, %[[BE:.*]]: f32):
// CHECK-NEXT:        %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:        %[[M:.*]] = arith.mulf %[[XE]], %[[TWO]] : f32
// CHECK-NEXT:        %[[A:.*]] = arith.addf %[[M]], %[[BE]] : f32
// CHECK-NEXT:        %[[T:.*]] = math.tanh %[[A]] : f32
// CHECK-NEXT:        spyre.yield %[[T]] : f32
// CHECK:         spyre.kernel "k1"
// CHECK:         spyre.kernel "k2"
// CHECK:         spyre.kernel "k3"
// CHECK-NOT:     spyre.kernel
// CHECK:         {{^}}// {{-{5}$}}
// UNFUSED-LABEL:   func.func @chain(
// UNFUSED-COUNT-6: spyre.kernel "k
// UNFUSED-NOT:     spyre.kernel
// UNFUSED:         {{^}}// {{-{5}$}}
func.func @chain(%x: tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, %b: tensor<64xf16, #spyre.layout<device_size = [1, 64], stride_map = [64, 1]>>) -> (tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) {
  %0 = spyre.pointwise %x : (tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  ^bb0(%a: f32):
    %c = arith.constant 2.000000e+00 : f32
    %r = arith.mulf %a, %c : f32
    spyre.yield %r : f32
  }
  %1 = spyre.pointwise %0, %b : (tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, tensor<64xf16, #spyre.layout<device_size = [1, 64], stride_map = [64, 1]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  ^bb0(%a: f32, %e: f32):
    %r = arith.addf %a, %e : f32
    spyre.yield %r : f32
  }
  %2 = spyre.pointwise %1 : (tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  ^bb0(%a: f32):
    %r = math.tanh %a : f32
    spyre.yield %r : f32
  }
  %3 = spyre.pointwise %x : (tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  ^bb0(%a: f32):
    %r = arith.negf %a : f32
    spyre.yield %r : f32
  }
  %4 = spyre.pointwise %3, %3 : (tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  ^bb0(%a: f32, %e: f32):
    %r = arith.mulf %a, %e : f32
    spyre.yield %r : f32
  }
  %5 = spyre.pointwise %3 : (tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  ^bb0(%a: f32):
    %r = math.exp %a : f32
    spyre.yield %r : f32
  }
  func.return %2, %4 : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
}

// -----

// The halves of t swapped along dim 0 (whole sticks): the concat and the two slices only it
// reads are one kernel of t, whose parts are DMAed from t at each slice's start. A slice
// read elsewhere too stays a kernel of its own.

// CHECK-LABEL: func.func @swapped_halves
// CHECK:         %[[C:.*]] = spyre.kernel "k0"(%[[T:.*]]) : ({{.*}}) -> {{.*}} {
// CHECK-NEXT:    ^{{.*}}(%[[TA:.*]]: {{.*}}):
// CHECK-NEXT:      %[[HI:.*]] = spyre.slice %[[TA]] start [32, 0]
// CHECK-NEXT:      %[[LO:.*]] = spyre.slice %[[TA]] start [0, 0]
// CHECK-NEXT:      %[[CAT:.*]] = spyre.concat %[[HI]], %[[LO]] dim 0
// CHECK-NEXT:      spyre.yield %[[CAT]]
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[S:.*]] = spyre.kernel "k2"(%[[T]])
// CHECK-NEXT:    ^{{.*}}
// CHECK-NEXT:      spyre.slice
// CHECK-NEXT:      spyre.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[D:.*]] = spyre.kernel "k1"(%[[T]], %[[S]])
// CHECK-NEXT:    ^{{.*}}(%[[TD:.*]]: {{.*}}, %[[SD:.*]]: {{.*}}):
// CHECK-NEXT:      %[[HI2:.*]] = spyre.slice %[[TD]] start [32, 0]
// CHECK-NEXT:      spyre.concat %[[SD]], %[[HI2]] dim 0
// CHECK:         func.return %[[C]], %[[S]], %[[D]]
// UNSLICED-LABEL: func.func @swapped_halves
// UNSLICED-COUNT-6: spyre.kernel
// UNSLICED-NOT:     spyre.kernel
func.func @swapped_halves(%t: tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>) -> (tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>, tensor<32x128xf16, #spyre.layout<device_size = [2, 32, 64], stride_map = [64, 128, 1]>>, tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>) {
  %hi = spyre.slice %t start [32, 0] : tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> -> tensor<32x128xf16, #spyre.layout<device_size = [2, 32, 64], stride_map = [64, 128, 1]>>
  %lo = spyre.slice %t start [0, 0] : tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> -> tensor<32x128xf16, #spyre.layout<device_size = [2, 32, 64], stride_map = [64, 128, 1]>>
  %c = spyre.concat %hi, %lo dim 0 : (tensor<32x128xf16, #spyre.layout<device_size = [2, 32, 64], stride_map = [64, 128, 1]>>, tensor<32x128xf16, #spyre.layout<device_size = [2, 32, 64], stride_map = [64, 128, 1]>>) -> tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>
  %shared = spyre.slice %t start [0, 0] : tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> -> tensor<32x128xf16, #spyre.layout<device_size = [2, 32, 64], stride_map = [64, 128, 1]>>
  %hi2 = spyre.slice %t start [32, 0] : tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> -> tensor<32x128xf16, #spyre.layout<device_size = [2, 32, 64], stride_map = [64, 128, 1]>>
  %d = spyre.concat %shared, %hi2 dim 0 : (tensor<32x128xf16, #spyre.layout<device_size = [2, 32, 64], stride_map = [64, 128, 1]>>, tensor<32x128xf16, #spyre.layout<device_size = [2, 32, 64], stride_map = [64, 128, 1]>>) -> tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>
  func.return %c, %shared, %d : tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>, tensor<32x128xf16, #spyre.layout<device_size = [2, 32, 64], stride_map = [64, 128, 1]>>, tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>
}

// -----

// A rotary combination t * c + cat(t[:, 64:], t[:, :64]) * s on rows of two sticks (a head of
// 128): the cat of slices is read by the pointwise op alone and placed as its result, so the
// slices and the cat join the pointwise op's kernel, which DMAs each half of a tile from t;
// the swapped copy is never stored. With sliced_concats off: the cat, then the combination.

// CHECK-LABEL: func.func @rotary_combination
// CHECK:         %[[Y:.*]] = spyre.kernel "k0"(%[[T:.*]], %[[C:.*]], %[[S:.*]]) : ({{.*}}) -> {{.*}} {
// CHECK-NEXT:    ^{{.*}}(%[[TA:.*]]: {{.*}}, %[[CA:.*]]: {{.*}}, %[[SA:.*]]: {{.*}}):
// CHECK-NEXT:      %[[HI:.*]] = spyre.slice %[[TA]] start [0, 64]
// CHECK-NEXT:      %[[LO:.*]] = spyre.slice %[[TA]] start [0, 0]
// CHECK-NEXT:      %[[CAT:.*]] = spyre.concat %[[HI]], %[[LO]] dim 1
// CHECK-NEXT:      %[[P:.*]] = spyre.pointwise %[[TA]], %[[CA]], %[[CAT]], %[[SA]]
// CHECK:           spyre.yield %[[P]]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[Y]]
// UNSLICED-LABEL: func.func @rotary_combination
// UNSLICED-COUNT-4: spyre.kernel
// UNSLICED-NOT:     spyre.kernel
func.func @rotary_combination(%t: tensor<16x128xf16, #spyre.layout<device_size = [2, 16, 64], stride_map = [64, 128, 1]>>, %c: tensor<16x128xf16, #spyre.layout<device_size = [2, 16, 64], stride_map = [64, 128, 1]>>, %s: tensor<16x128xf16, #spyre.layout<device_size = [2, 16, 64], stride_map = [64, 128, 1]>>) -> tensor<16x128xf16, #spyre.layout<device_size = [2, 16, 64], stride_map = [64, 128, 1]>> {
  %hi = spyre.slice %t start [0, 64] : tensor<16x128xf16, #spyre.layout<device_size = [2, 16, 64], stride_map = [64, 128, 1]>> -> tensor<16x64xf16, #spyre.layout<device_size = [1, 16, 64], stride_map = [64, 64, 1]>>
  %lo = spyre.slice %t start [0, 0] : tensor<16x128xf16, #spyre.layout<device_size = [2, 16, 64], stride_map = [64, 128, 1]>> -> tensor<16x64xf16, #spyre.layout<device_size = [1, 16, 64], stride_map = [64, 64, 1]>>
  %r = spyre.concat %hi, %lo dim 1 : (tensor<16x64xf16, #spyre.layout<device_size = [1, 16, 64], stride_map = [64, 64, 1]>>, tensor<16x64xf16, #spyre.layout<device_size = [1, 16, 64], stride_map = [64, 64, 1]>>) -> tensor<16x128xf16, #spyre.layout<device_size = [2, 16, 64], stride_map = [64, 128, 1]>>
  %y = spyre.pointwise %t, %c, %r, %s : (tensor<16x128xf16, #spyre.layout<device_size = [2, 16, 64], stride_map = [64, 128, 1]>>, tensor<16x128xf16, #spyre.layout<device_size = [2, 16, 64], stride_map = [64, 128, 1]>>, tensor<16x128xf16, #spyre.layout<device_size = [2, 16, 64], stride_map = [64, 128, 1]>>, tensor<16x128xf16, #spyre.layout<device_size = [2, 16, 64], stride_map = [64, 128, 1]>>) -> tensor<16x128xf16, #spyre.layout<device_size = [2, 16, 64], stride_map = [64, 128, 1]>> {
  ^bb0(%a: f32, %b: f32, %d: f32, %e: f32):
    %m = arith.mulf %a, %b : f32
    %n = arith.mulf %d, %e : f32
    %o = arith.addf %m, %n : f32
    spyre.yield %o : f32
  }
  func.return %y : tensor<16x128xf16, #spyre.layout<device_size = [2, 16, 64], stride_map = [64, 128, 1]>>
}
