// RUN: spyre-opt %s -p convert-torch-to-spyre | filecheck %s
// RUN: spyre-opt %s -p spyre-pipeline | filecheck %s --check-prefix=ISA
// torch.aten.convolution becomes matmuls over strided views of the input, channels last. A
// patch embedding (stride = kernel) is a relayout of the image folded into its transfer, one
// batched matmul over the rows of each patch and a matmul by ones adding the rows. A 1-d
// convolution with padding joins host-built zeros to the input, takes each tap as a strided
// slice, stacks the taps for one batched matmul and adds them. A depthwise convolution is one
// pointwise multiply-add over the taps and the weight's columns. A transposed convolution stays
// on the host, saying why.

// CHECK-LABEL: func.func @patch_embedding
// CHECK:         %[[X:.*]] = spyre.to_device %x : tensor<1x3x16x16xf32> -> tensor<1x3x2x8x2x8xf16
// CHECK:         spyre.permute %[[X]] permutation [1, 3, 0, 2, 4, 5]
// CHECK:         %[[P:.*]] = spyre.reshape %{{.*}} -> tensor<24x4x8xf16
// CHECK:         %[[W:.*]] = spyre.reshape %{{.*}} -> tensor<24x8x64xf16
// CHECK:         %[[ROWS:.*]] = spyre.matmul %[[P]], %[[W]] : ({{.*}}) -> tensor<24x4x64xf16
// CHECK:         %[[FLAT:.*]] = spyre.reshape %[[ROWS]] {{.*}} -> tensor<24x256xf16
// CHECK:         arith.constant dense<1.000000e+00> : tensor<1x24xf32>
// CHECK:         spyre.matmul %{{.*}}, %[[FLAT]] : ({{.*}}) -> tensor<1x256xf16
// CHECK:         spyre.pointwise
// CHECK:           arith.addf
// CHECK:         spyre.permute %{{.*}} permutation [1, 0, 4, 2, 3]
// CHECK-NOT:     torch.aten.convolution
// CHECK-LABEL: func.func @conv1d_padded
// CHECK:         %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<1x1x1x16xf32>
// CHECK:         %[[PAD:.*]] = spyre.concat %{{.*}}, %{{.*}}, %{{.*}} dim 2 : ({{.*}}) -> tensor<1x1x12x16xf16
// CHECK:         spyre.slice %[[PAD]] start [0, 0, 0, 0] : {{.*}} -> tensor<1x1x10x16xf16
// CHECK:         spyre.slice %[[PAD]] start [0, 0, 1, 0] : {{.*}} -> tensor<1x1x10x16xf16
// CHECK:         spyre.slice %[[PAD]] start [0, 0, 2, 0] : {{.*}} -> tensor<1x1x10x16xf16
// CHECK:         spyre.concat %{{.*}}, %{{.*}}, %{{.*}} dim 0 : ({{.*}}) -> tensor<3x1x10x16xf16
// CHECK:         %[[TAPS:.*]] = spyre.matmul %{{.*}}, %{{.*}} : (tensor<3x10x16xf16{{.*}}, tensor<3x16x32xf16{{.*}}) -> tensor<3x10x32xf16
// CHECK:         spyre.slice %[[TAPS]] start [0, 0, 0]
// CHECK:         spyre.slice %[[TAPS]] start [1, 0, 0]
// CHECK:         spyre.slice %[[TAPS]] start [2, 0, 0]
// CHECK:         spyre.pointwise
// CHECK-COUNT-2:   arith.addf
// CHECK-NOT:     torch.aten.convolution
// CHECK-LABEL: func.func @depthwise
// CHECK:         %[[PAD:.*]] = spyre.concat %{{.*}}, %{{.*}}, %{{.*}} dim 1 : ({{.*}}) -> tensor<1x16x64xf16
// CHECK:         spyre.slice %[[PAD]] start [0, 0, 0] : {{.*}} -> tensor<1x14x64xf16
// CHECK:         spyre.slice %[[PAD]] start [0, 1, 0] : {{.*}} -> tensor<1x14x64xf16
// CHECK:         spyre.slice %[[PAD]] start [0, 2, 0] : {{.*}} -> tensor<1x14x64xf16
// CHECK-COUNT-3: spyre.slice %{{.*}} : tensor<3x64xf16{{.*}} -> tensor<1x64xf16
// CHECK:         spyre.pointwise
// CHECK-COUNT-3:   arith.mulf
// CHECK-COUNT-2:   arith.addf
// CHECK:         spyre.permute %{{.*}} permutation [0, 2, 1] : tensor<1x14x64xf16{{.*}} -> tensor<1x64x14xf16
// CHECK-NOT:     spyre.matmul
// CHECK-LABEL: func.func @transposed
// CHECK:         torch.aten.convolution {{.*}} {spyre.host = "a transposed convolution: each input element scatters into several outputs{{.*}}"}
// ISA-LABEL:   func.func @patch_embedding
// ISA-NOT:       torch.aten
// ISA:           spyre_isa.launch
// ISA-LABEL:   func.func @conv1d_padded
// ISA-NOT:       torch.aten
// ISA:           spyre_isa.launch
// ISA-LABEL:   func.func @depthwise
// ISA-NOT:       torch.aten
// ISA:           spyre_isa.launch
// ISA-LABEL:   func.func @transposed
// ISA:           torch.aten.convolution

func.func @patch_embedding(%x: !torch.vtensor<[1,3,16,16],f32>, %w: !torch.vtensor<[64,3,8,8],f32>, %b: !torch.vtensor<[64],f32>) -> !torch.vtensor<[1,64,2,2],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int8 = torch.constant.int 8
  %false = torch.constant.bool false
  %stride = torch.prim.ListConstruct %int8, %int8 : (!torch.int, !torch.int) -> !torch.list<int>
  %padding = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %dilation = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %out_pad = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %y = torch.aten.convolution %x, %w, %b, %stride, %padding, %dilation, %false, %out_pad, %int1 : !torch.vtensor<[1,3,16,16],f32>, !torch.vtensor<[64,3,8,8],f32>, !torch.vtensor<[64],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[1,64,2,2],f32>
  func.return %y : !torch.vtensor<[1,64,2,2],f32>
}

func.func @conv1d_padded(%x: !torch.vtensor<[1,16,10],f32>, %w: !torch.vtensor<[32,16,3],f32>) -> !torch.vtensor<[1,32,10],f32> {
  %none = torch.constant.none
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %false = torch.constant.bool false
  %ones = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %zeros = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %y = torch.aten.convolution %x, %w, %none, %ones, %ones, %ones, %false, %zeros, %int1 : !torch.vtensor<[1,16,10],f32>, !torch.vtensor<[32,16,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[1,32,10],f32>
  func.return %y : !torch.vtensor<[1,32,10],f32>
}

func.func @depthwise(%x: !torch.vtensor<[1,64,12],f32>, %w: !torch.vtensor<[64,1,3],f32>) -> !torch.vtensor<[1,64,14],f32> {
  %none = torch.constant.none
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int64 = torch.constant.int 64
  %false = torch.constant.bool false
  %ones = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %pad = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
  %zeros = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %y = torch.aten.convolution %x, %w, %none, %ones, %pad, %ones, %false, %zeros, %int64 : !torch.vtensor<[1,64,12],f32>, !torch.vtensor<[64,1,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[1,64,14],f32>
  func.return %y : !torch.vtensor<[1,64,14],f32>
}

func.func @transposed(%x: !torch.vtensor<[1,16,10],f32>, %w: !torch.vtensor<[16,32,3],f32>) -> !torch.vtensor<[1,32,12],f32> {
  %none = torch.constant.none
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %true = torch.constant.bool true
  %ones = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %zeros = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %y = torch.aten.convolution %x, %w, %none, %ones, %zeros, %ones, %true, %zeros, %int1 : !torch.vtensor<[1,16,10],f32>, !torch.vtensor<[16,32,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[1,32,12],f32>
  func.return %y : !torch.vtensor<[1,32,12],f32>
}
