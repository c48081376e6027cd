// RUN: spyre-opt %S/../inputs/kernels.mlir -p spyre-fuse | filecheck %s
// RUN: spyre-opt %S/../inputs/kernels.mlir -p 'spyre-fuse{epilogues=false}' | filecheck %s --check-prefix=NOEPI
// RUN: spyre-opt %S/../inputs/chained-norms.mlir -p convert-torch-to-spyre,spyre-propagate-layouts,spyre-fuse | filecheck %s --check-prefix=NORMS
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

// RUN: spyre-opt %s -p spyre-fuse | filecheck %s --check-prefix=CHAIN
// RUN: spyre-opt %s -p 'spyre-fuse{pointwise_chains=false}' | filecheck %s --check-prefix=UNFUSED
// A pointwise chain (x * 2 + b, then tanh) is one launch whose body computes the whole chain in
// f32; a producer with two readers (the mul and the exp) keeps its own launch.

// CHAIN-LABEL: func.func @chain
// CHAIN:         spyre.kernel "k0"(%{{.*}}, %{{.*}})
// CHAIN-NEXT:    ^{{.*}}(%[[X:.*]]: {{.*}}, %[[B:.*]]: {{.*}}):
// CHAIN-NEXT:      spyre.pointwise %[[X]], %[[B]]
// CHAIN-NEXT:      ^{{.*}}(%[[XE:.*]]: f32, %[[BE:.*]]: f32):
// CHAIN-NEXT:        %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHAIN-NEXT:        %[[M:.*]] = arith.mulf %[[XE]], %[[TWO]] : f32
// CHAIN-NEXT:        %[[A:.*]] = arith.addf %[[M]], %[[BE]] : f32
// CHAIN-NEXT:        %[[T:.*]] = math.tanh %[[A]] : f32
// CHAIN-NEXT:        spyre.yield %[[T]] : f32
// CHAIN:         spyre.kernel "k1"
// CHAIN:         spyre.kernel "k2"
// CHAIN:         spyre.kernel "k3"
// CHAIN-NOT:     spyre.kernel
// UNFUSED-COUNT-6: spyre.kernel "k
// UNFUSED-NOT:     spyre.kernel
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

// Two layer norms joined by a residual add (inputs/chained-norms.mlir): a row group grown
// from the first norm reaches through the add into the second, and its first norm's result is
// read outside it (returned); the group ends there, and the add and the second norm are a
// group of their own. Two launches (before: the first norm took six).
// NORMS-LABEL: func.func @chained_norms
// NORMS:         %[[N1:.*]] = spyre.kernel "k0"
// NORMS:           spyre.reduce "mean"
// NORMS:           spyre.reduce "mean"
// NORMS:           math.rsqrt
// NORMS:           spyre.yield %{{.*}} : tensor
// NORMS-NEXT:    }
// NORMS-NEXT:    spyre.kernel "k1"(%[[N1]], %{{.*}})
// NORMS-NEXT:    ^{{.*}}
// NORMS-NEXT:      spyre.pointwise
// NORMS-NEXT:      ^{{.*}}
// NORMS-NEXT:        arith.addf
// NORMS:           spyre.reduce "mean"
// NORMS:           spyre.reduce "mean"
// NORMS:           math.rsqrt
// NORMS-NOT:     spyre.kernel
// NORMS:         spyre.from_device %[[N1]]
