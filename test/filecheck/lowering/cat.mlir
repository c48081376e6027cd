// RUN: spyre-opt %s -p convert-torch-to-spyre | filecheck %s
// RUN: spyre-opt %s -p spyre-pipeline | filecheck %s --check-prefix=ISA
// torch.aten.cat becomes spyre.concat: each piece copied to its offset of the result. Rotary
// embeddings' rotate_half joins halves of a head along the stick dim, which end inside a
// stick: the pieces are transposed to the rows (a device block transpose each), joined there
// and transposed back. A single row (a decode step's, all other dims 1) has no row dim to
// transpose with: it is broadcast to two rows and joined as columns, as it is sliced.

// CHECK-LABEL: func.func @rotate_half
// CHECK:         %[[X1:.*]] = spyre.slice %{{.*}} start [0, 0] : {{.*}} -> tensor<4x32xf16
// CHECK:         spyre.permute %{{.*}} permutation [1, 0]
// CHECK:         %[[X2:.*]] = spyre.slice %{{.*}} start [32, 0] : {{.*}} -> tensor<32x4xf16
// CHECK:         %[[C:.*]] = spyre.concat %{{.*}}, %{{.*}} dim 0 : ({{.*}}) -> tensor<64x4xf16
// CHECK:         spyre.permute %[[C]] permutation [1, 0] : tensor<64x4xf16{{.*}} -> tensor<4x64xf16
// CHECK-NOT:     torch.aten.cat
// ISA-LABEL:   func.func @rotate_half
// ISA-NOT:       torch.aten
// ISA:           spyre_isa.launch
func.func @rotate_half(%q: !torch.vtensor<[4,64],f32>) -> !torch.vtensor<[4,64],f32> {
  %int1 = torch.constant.int 1
  %int0 = torch.constant.int 0
  %int32 = torch.constant.int 32
  %int64 = torch.constant.int 64
  %x1 = torch.aten.slice.Tensor %q, %int1, %int0, %int32, %int1 : !torch.vtensor<[4,64],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4,32],f32>
  %x2 = torch.aten.slice.Tensor %q, %int1, %int32, %int64, %int1 : !torch.vtensor<[4,64],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4,32],f32>
  %n = torch.aten.neg %x2 : !torch.vtensor<[4,32],f32> -> !torch.vtensor<[4,32],f32>
  %l = torch.prim.ListConstruct %n, %x1 : (!torch.vtensor<[4,32],f32>, !torch.vtensor<[4,32],f32>) -> !torch.list<vtensor>
  %int-1 = torch.constant.int -1
  %r = torch.aten.cat %l, %int-1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[4,64],f32>
  func.return %r : !torch.vtensor<[4,64],f32>
}

// Pieces at stick boundaries (and along a leading dim) are joined where they are.
// CHECK-LABEL: func.func @whole_sticks
// CHECK:         spyre.concat %{{.*}}, %{{.*}} dim 1 : ({{.*}}) -> tensor<3x192xf16
// CHECK:         spyre.concat %{{.*}}, %{{.*}} dim 0 : ({{.*}}) -> tensor<6x64xf16
func.func @whole_sticks(%a: !torch.vtensor<[3,64],f32>, %b: !torch.vtensor<[3,128],f32>) -> (!torch.vtensor<[3,192],f32>, !torch.vtensor<[6,64],f32>) {
  %int1 = torch.constant.int 1
  %int0 = torch.constant.int 0
  %l = torch.prim.ListConstruct %a, %b : (!torch.vtensor<[3,64],f32>, !torch.vtensor<[3,128],f32>) -> !torch.list<vtensor>
  %r = torch.aten.cat %l, %int1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[3,192],f32>
  %l2 = torch.prim.ListConstruct %a, %a : (!torch.vtensor<[3,64],f32>, !torch.vtensor<[3,64],f32>) -> !torch.list<vtensor>
  %r2 = torch.aten.cat %l2, %int0 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[6,64],f32>
  func.return %r, %r2 : !torch.vtensor<[3,192],f32>, !torch.vtensor<[6,64],f32>
}

// One row: each piece broadcast to two rows and viewed as columns; the first column kept.
// CHECK-LABEL: func.func @one_row
// CHECK:         spyre.pointwise {{.*}} -> tensor<2x1x32xf16
// CHECK:         spyre.concat %{{.*}}, %{{.*}} dim 0 : ({{.*}}) -> tensor<64x1x2xf16
// CHECK:         spyre.slice %{{.*}} start [0, 0, 0] : {{.*}} -> tensor<64x1x1xf16
func.func @one_row(%f: !torch.vtensor<[1,32],f32>) -> !torch.vtensor<[1,64],f32> {
  %int-1 = torch.constant.int -1
  %l = torch.prim.ListConstruct %f, %f : (!torch.vtensor<[1,32],f32>, !torch.vtensor<[1,32],f32>) -> !torch.list<vtensor>
  %r = torch.aten.cat %l, %int-1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[1,64],f32>
  func.return %r : !torch.vtensor<[1,64],f32>
}
