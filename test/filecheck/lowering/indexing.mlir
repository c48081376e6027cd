// RUN: spyre-opt %s -p convert-torch-to-spyre | filecheck %s
// RUN: spyre-opt %s -p spyre-pipeline | filecheck %s --check-prefix=ISA
// Data movement on float data: index.Tensor and index_select as spyre.gather of rows at host
// indices (the row numbers computed on the host, by design), repeat and constant_pad_nd as
// spyre.concat into offsets of one buffer.

// Rows of a host table at host positions (GPT-J's sin/cos table): a spyre.gather; the host
// counts negative positions from the end (lt, add, where) before handing them over.
// CHECK-LABEL: func.func @rows_at_positions
// CHECK:         %[[T:.*]] = spyre.to_device %table
// CHECK:         torch.aten.lt.Scalar %{{.*}} {spyre.host = "integer/boolean tensors stay on the host"}
// CHECK:         %[[W:.*]] = torch.aten.where.self
// CHECK:         %[[I:.*]] = builtin.unrealized_conversion_cast %[[W]] : !torch.vtensor<[1,23],si64> to tensor<1x23xsi64>
// CHECK:         %[[G:.*]] = spyre.gather %[[T]][%[[I]]] : {{.*}} -> tensor<23x8xf16
// CHECK:         spyre.reshape %[[G]] : {{.*}} -> tensor<1x23x8xf16
// CHECK-NOT:     torch.aten.index.Tensor
// ISA-LABEL:   spyre_isa.program
// ISA:           spyre_isa.dma_gather
func.func @rows_at_positions(%table: !torch.vtensor<[128,8],f32>, %pos: !torch.vtensor<[1,23],si64>) -> !torch.vtensor<[1,23,8],f32> {
  %idx = torch.prim.ListConstruct %pos : (!torch.vtensor<[1,23],si64>) -> !torch.list<optional<vtensor>>
  %r = torch.aten.index.Tensor %table, %idx : !torch.vtensor<[128,8],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[1,23,8],f32>
  return %r : !torch.vtensor<[1,23,8],f32>
}

// Positions the graph bounds (an arange from 2 to 24) need no host arithmetic: index_select is
// a gather at them as they are.
// CHECK-LABEL: func.func @index_select_known_range
// CHECK:         %[[P:.*]] = torch.aten.arange.start_step
// CHECK-NOT:     torch.aten.where.self
// CHECK:         %[[I:.*]] = builtin.unrealized_conversion_cast %[[P]]
// CHECK:         spyre.gather %{{.*}}[%[[I]]] : (tensor<130x64xf16{{.*}}, tensor<23xsi64>) -> tensor<23x64xf16
func.func @index_select_known_range(%table: !torch.vtensor<[130,64],f32>) -> !torch.vtensor<[23,64],f32> {
  %int0 = torch.constant.int 0
  %int2 = torch.constant.int 2
  %int25 = torch.constant.int 25
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %false = torch.constant.bool false
  %cpu = torch.constant.device "cpu"
  %pos = torch.aten.arange.start_step %int2, %int25, %int1, %none, %none, %cpu, %false : !torch.int, !torch.int, !torch.int, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[23],si64>
  %r = torch.aten.index_select %table, %int0, %pos : !torch.vtensor<[130,64],f32>, !torch.int, !torch.vtensor<[23],si64> -> !torch.vtensor<[23,64],f32>
  return %r : !torch.vtensor<[23,64],f32>
}

// A dim before the indexed one: the table is x viewed as (3 * 63, 100), and the host adds each
// leading element's row offset (a literal) to the positions; a position out of range becomes -1,
// which the gather refuses, as PyTorch does, instead of reading the next block's row.
// CHECK-LABEL: func.func @middle_dim
// CHECK:         %[[OFF:.*]] = torch.vtensor.literal(dense<{{\[\[}}0], [63], [126]]> : tensor<3x1xsi64>)
// CHECK:         %[[ROWS:.*]] = torch.aten.add.Tensor %[[OFF]], {{.*}} -> !torch.vtensor<[3,5],si64>
// CHECK:         torch.aten.where.ScalarSelf %{{.*}}, %int-1, %[[ROWS]]
// CHECK:         %[[T:.*]] = spyre.reshape %{{.*}} -> tensor<189x100xf16
// CHECK:         %[[G:.*]] = spyre.gather %[[T]][%{{.*}}] : {{.*}} -> tensor<15x100xf16
// CHECK:         spyre.reshape %[[G]] : {{.*}} -> tensor<3x5x100xf16
func.func @middle_dim(%x: !torch.vtensor<[3,63,100],f32>, %i: !torch.vtensor<[5],si64>) -> !torch.vtensor<[3,5,100],f32> {
  %none = torch.constant.none
  %idx = torch.prim.ListConstruct %none, %i : (!torch.none, !torch.vtensor<[5],si64>) -> !torch.list<optional<vtensor>>
  %r = torch.aten.index.Tensor %x, %idx : !torch.vtensor<[3,63,100],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[3,5,100],f32>
  return %r : !torch.vtensor<[3,5,100],f32>
}

// The stick dim indexed: x is transposed (a free view; the table is restickified later), its
// rows gathered, and the result transposed back.
// CHECK-LABEL: func.func @stick_dim
// CHECK:         %[[P:.*]] = spyre.permute %{{.*}} permutation [1, 0] : {{.*}} -> tensor<100x65xf16
// CHECK:         %[[G:.*]] = spyre.gather %[[P]][%{{.*}}] : {{.*}} -> tensor<7x65xf16
// CHECK:         spyre.permute %[[G]] permutation [1, 0] : {{.*}} -> tensor<65x7xf16
func.func @stick_dim(%x: !torch.vtensor<[65,100],f32>, %i: !torch.vtensor<[7],si64>) -> !torch.vtensor<[65,7],f32> {
  %none = torch.constant.none
  %idx = torch.prim.ListConstruct %none, %i : (!torch.none, !torch.vtensor<[7],si64>) -> !torch.list<optional<vtensor>>
  %r = torch.aten.index.Tensor %x, %idx : !torch.vtensor<[65,100],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[65,7],f32>
  return %r : !torch.vtensor<[65,7],f32>
}

// A boolean index is a mask (a data-dependent number of rows): the op stays on the host, saying so.
// CHECK-LABEL: func.func @mask_index
// CHECK:         torch.aten.index.Tensor {{.*}} {spyre.host = "index 0 is !torch.vtensor<[4],i1>, not an int64/int32 tensor of static shape (a boolean or uint8 index is a mask: a data-dependent number of rows)"}
func.func @mask_index(%x: !torch.vtensor<[4,64],f32>, %m: !torch.vtensor<[4],i1>) -> !torch.vtensor<[4,64],f32> {
  %idx = torch.prim.ListConstruct %m : (!torch.vtensor<[4],i1>) -> !torch.list<optional<vtensor>>
  %r = torch.aten.index.Tensor %x, %idx : !torch.vtensor<[4,64],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[4,64],f32>
  return %r : !torch.vtensor<[4,64],f32>
}

// repeat: a concat of the copies along each repeated dim.
// CHECK-LABEL: func.func @repeat
// CHECK:         %[[X:.*]] = spyre.to_device %x
// CHECK-NEXT:    spyre.concat %[[X]], %[[X]] dim 0 : {{.*}} -> tensor<8x1x64xf16
func.func @repeat(%x: !torch.vtensor<[4,1,64],f32>) -> !torch.vtensor<[8,1,64],f32> {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %reps = torch.prim.ListConstruct %int2, %int1, %int1 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %r = torch.aten.repeat %x, %reps : !torch.vtensor<[4,1,64],f32>, !torch.list<int> -> !torch.vtensor<[8,1,64],f32>
  return %r : !torch.vtensor<[8,1,64],f32>
}

// constant_pad_nd (MobileBERT's shifted embeddings): a concat of a host-built block of the value
// (a constant, sent once) and the tensor along the padded dim.
// CHECK-LABEL: func.func @pad
// CHECK:         %[[X:.*]] = spyre.to_device %x
// CHECK-NEXT:    %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<1x1x32xf32>
// CHECK-NEXT:    %[[ZD:.*]] = spyre.to_device %[[Z]]
// CHECK-NEXT:    spyre.concat %[[ZD]], %[[X]] dim 1 : {{.*}} -> tensor<1x23x32xf16
func.func @pad(%x: !torch.vtensor<[1,22,32],f32>) -> !torch.vtensor<[1,23,32],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %float0 = torch.constant.float 0.000000e+00
  %pads = torch.prim.ListConstruct %int0, %int0, %int1, %int0 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %r = torch.aten.constant_pad_nd %x, %pads, %float0 : !torch.vtensor<[1,22,32],f32>, !torch.list<int>, !torch.float -> !torch.vtensor<[1,23,32],f32>
  return %r : !torch.vtensor<[1,23,32],f32>
}

// Negative padding (a crop) stays on the host, saying so.
// CHECK-LABEL: func.func @crop
// CHECK:         torch.aten.constant_pad_nd {{.*}} {spyre.host = "negative padding [0, 0, -1, 0] (a crop) has no device lowering yet"}
func.func @crop(%x: !torch.vtensor<[1,22,32],f32>) -> !torch.vtensor<[1,21,32],f32> {
  %int0 = torch.constant.int 0
  %int-1 = torch.constant.int -1
  %float0 = torch.constant.float 0.000000e+00
  %pads = torch.prim.ListConstruct %int0, %int0, %int-1, %int0 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %r = torch.aten.constant_pad_nd %x, %pads, %float0 : !torch.vtensor<[1,22,32],f32>, !torch.list<int>, !torch.float -> !torch.vtensor<[1,21,32],f32>
  return %r : !torch.vtensor<[1,21,32],f32>
}
