// RUN: spyre-opt %s -p convert-torch-to-spyre | filecheck %s
// Element-wise functions the SFP has no instruction for are bodies of the instructions it has
// (floor: |x| + 2^23 - 2^23 rounds to an integer, minus one where that passed x); a constant a
// select reads is an input of the op (a resident device value). A reduction along a dim other
// than the stick dim moves that dim to the stick dim (a permute and a restickify: a transpose on
// the card), reduces, and moves back.

// CHECK-LABEL: func.func @floor
// CHECK:         spyre.pointwise %{{.*}}
// CHECK:           math.absf
// CHECK-NEXT:      %[[R:.*]] = arith.constant 0x4B000000 : f32
// CHECK-NEXT:      arith.addf %{{.*}}, %[[R]]
// CHECK:           arith.select
// CHECK-NOT:       math.floor
// CHECK:           spyre.yield

// CHECK-LABEL: func.func @sign
// CHECK:         %[[ZERO:.*]] = spyre.to_device %{{.*}} : tensor<1x1xf32> -> tensor<1x1xf16
// CHECK:         spyre.pointwise %{{.*}}, %[[ZERO]], %{{.*}}, %{{.*}} :
// CHECK:           arith.select

// CHECK-LABEL: func.func @sum_over_rows
// CHECK:         %[[T:.*]] = spyre.permute %{{.*}} permutation [1, 0] : tensor<5x64xf16, {{.*}}> -> tensor<64x5xf16
// CHECK-NEXT:    %[[G:.*]] = spyre.restickify %[[T]]
// CHECK-NEXT:    %[[S:.*]] = spyre.reduce "sum" %[[G]] dim 1 : tensor<64x5xf16, {{.*}}> -> tensor<64x1xf16
// CHECK-NEXT:    %[[B:.*]] = spyre.permute %[[S]] permutation [1, 0]
// CHECK-NEXT:    spyre.reshape %[[B]] : {{.*}} -> tensor<64xf16

// A flip along the stick dim is the product with the reversal matrix (exact: one product x * 1
// per element); along another dim, between two transposes.
// CHECK-LABEL: func.func @flip_rows
// CHECK:         spyre.permute %{{.*}} permutation [1, 0]
// CHECK:         %[[J:.*]] = spyre.to_device %{{.*}} : tensor<5x5xf32>
// CHECK-NEXT:    spyre.matmul %{{.*}}, %[[J]] : {{.*}} -> tensor<64x5xf16
// CHECK:         spyre.permute %{{.*}} permutation [1, 0]

// CHECK-LABEL: func.func @log_softmax
// CHECK:         %[[M:.*]] = spyre.reduce "max"
// CHECK:         %[[S:.*]] = spyre.reduce "sum"
// CHECK-NEXT:    spyre.pointwise %{{.*}}, %[[M]], %[[S]]
// CHECK:           arith.subf
// CHECK-NEXT:      math.log
// CHECK-NEXT:      arith.subf

func.func @floor(%x: !torch.vtensor<[5,64],f32>) -> !torch.vtensor<[5,64],f32> {
  %0 = torch.aten.floor %x : !torch.vtensor<[5,64],f32> -> !torch.vtensor<[5,64],f32>
  return %0 : !torch.vtensor<[5,64],f32>
}
func.func @sign(%x: !torch.vtensor<[5,64],f32>) -> !torch.vtensor<[5,64],f32> {
  %0 = torch.aten.sign %x : !torch.vtensor<[5,64],f32> -> !torch.vtensor<[5,64],f32>
  return %0 : !torch.vtensor<[5,64],f32>
}
func.func @sum_over_rows(%x: !torch.vtensor<[5,64],f32>) -> !torch.vtensor<[64],f32> {
  %int0 = torch.constant.int 0
  %dims = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %false = torch.constant.bool false
  %none = torch.constant.none
  %0 = torch.aten.sum.dim_IntList %x, %dims, %false, %none : !torch.vtensor<[5,64],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[64],f32>
  return %0 : !torch.vtensor<[64],f32>
}
func.func @flip_rows(%x: !torch.vtensor<[5,64],f32>) -> !torch.vtensor<[5,64],f32> {
  %int0 = torch.constant.int 0
  %dims = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.flip %x, %dims : !torch.vtensor<[5,64],f32>, !torch.list<int> -> !torch.vtensor<[5,64],f32>
  return %0 : !torch.vtensor<[5,64],f32>
}
func.func @log_softmax(%x: !torch.vtensor<[3,100],f32>) -> !torch.vtensor<[3,100],f32> {
  %int-1 = torch.constant.int -1
  %false = torch.constant.bool false
  %0 = torch.aten._log_softmax %x, %int-1, %false : !torch.vtensor<[3,100],f32>, !torch.int, !torch.bool -> !torch.vtensor<[3,100],f32>
  return %0 : !torch.vtensor<[3,100],f32>
}
