// RUN: spyre-opt %S/../inputs/kernels.mlir -p spyre-fuse | filecheck %s
// One kernel per compute op (matmul, pointwise, restickify); views and transfers stay outside.

// CHECK-LABEL: func.func @kernels
// CHECK:         %[[MM:.*]] = spyre.kernel "k0"(%{{.*}}, %{{.*}}) : {{.*}} {
// CHECK-NEXT:    ^{{.*}}(%[[A:.*]]: {{.*}}, %[[B:.*]]: {{.*}}):
// CHECK-NEXT:      %[[C:.*]] = spyre.matmul %[[A]], %[[B]]
// CHECK-NEXT:      spyre.yield %[[C]]
// CHECK-NEXT:    }
// CHECK:         spyre.kernel "k1"(%[[MM]], %{{.*}})
// CHECK:           spyre.pointwise
// CHECK:         %[[RELU:.*]] = spyre.kernel "k2"
// CHECK:           spyre.pointwise
// The transpose view stays between launches; its relayout is a kernel of its own.
// CHECK:         %[[T:.*]] = spyre.permute %[[RELU]]
// CHECK-NEXT:    %[[R:.*]] = spyre.kernel "k3"(%[[T]])
// CHECK-NEXT:    ^{{.*}}
// CHECK-NEXT:      spyre.restickify
// CHECK:         spyre.kernel "k4"(%[[R]])
// CHECK:         spyre.from_device
// CHECK-NOT:     spyre.kernel
