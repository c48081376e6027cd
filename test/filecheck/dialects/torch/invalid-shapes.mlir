// RUN: spyre-opt %s --verify-diagnostics --split-input-file | filecheck %s

// Result types the torch verifiers check (found by the fuzz harness, docs/fuzzing.md): a
// static result of a view must hold the input's elements with the size list's sizes, and an
// element-wise op's static operands must broadcast to its static result.

func.func @view_result_elements(%x: !torch.vtensor<[2,64],f32>) {
  %int2 = torch.constant.int 2
  %int4 = torch.constant.int 4
  %int16 = torch.constant.int 16
  %l = torch.prim.ListConstruct %int2, %int4, %int16 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.view %x, %l : !torch.vtensor<[2,64],f32>, !torch.list<int> -> !torch.vtensor<[2,2,16],f32>
  func.return
}
// CHECK: torch.aten.view: cannot view !torch.vtensor<[2,64],f32> (128 elements) as !torch.vtensor<[2,2,16],f32>

// -----

func.func @reshape_result_sizes(%x: !torch.vtensor<[2,64],f32>) {
  %int8 = torch.constant.int 8
  %int-1 = torch.constant.int -1
  %l = torch.prim.ListConstruct %int8, %int-1 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.reshape %x, %l : !torch.vtensor<[2,64],f32>, !torch.list<int> -> !torch.vtensor<[16,8],f32>
  func.return
}
// CHECK: torch.aten.reshape: result !torch.vtensor<[16,8],f32> does not have the sizes [8, -1]

// -----

func.func @add_does_not_broadcast(%a: !torch.vtensor<[4,64],f32>, %b: !torch.vtensor<[3,64],f32>) {
  %int1 = torch.constant.int 1
  %0 = torch.aten.add.Tensor %a, %b, %int1 : !torch.vtensor<[4,64],f32>, !torch.vtensor<[3,64],f32>, !torch.int -> !torch.vtensor<[4,64],f32>
  func.return
}
// CHECK: torch.aten.add.Tensor: operands !torch.vtensor<[4,64],f32>, !torch.vtensor<[3,64],f32> do not broadcast

// -----

func.func @mul_broadcast_result(%a: !torch.vtensor<[4,1],f32>, %b: !torch.vtensor<[64],f32>) {
  %0 = torch.aten.mul.Tensor %a, %b : !torch.vtensor<[4,1],f32>, !torch.vtensor<[64],f32> -> !torch.vtensor<[4,1],f32>
  func.return
}
// CHECK: torch.aten.mul.Tensor: result !torch.vtensor<[4,1],f32> does not have the broadcast sizes [4, 64]

// -----

func.func @unary_result(%a: !torch.vtensor<[4,64],f32>) {
  %0 = torch.aten.relu %a : !torch.vtensor<[4,64],f32> -> !torch.vtensor<[4,65],f32>
  func.return
}
// CHECK: torch.aten.relu: result !torch.vtensor<[4,65],f32> does not have the broadcast sizes [4, 64]

// -----

func.func @scalar_result(%a: !torch.vtensor<[4,64],f32>, %s: !torch.float) {
  %int1 = torch.constant.int 1
  %0 = torch.aten.sub.Scalar %a, %s, %int1 : !torch.vtensor<[4,64],f32>, !torch.float, !torch.int -> !torch.vtensor<[64],f32>
  func.return
}
// CHECK: torch.aten.sub.Scalar: result !torch.vtensor<[64],f32> does not have the broadcast sizes [4, 64]

// -----

// Unknown sizes are not checked.
func.func @unknown_sizes(%a: !torch.vtensor<[?,64],f32>, %b: !torch.vtensor<[3,64],f32>) {
  %int1 = torch.constant.int 1
  %0 = torch.aten.add.Tensor %a, %b, %int1 : !torch.vtensor<[?,64],f32>, !torch.vtensor<[3,64],f32>, !torch.int -> !torch.vtensor<[?,64],f32>
  func.return
}
// CHECK: func.func @unknown_sizes

// -----

// torch.aten.convolution: output channels that do not split into the groups, input channels
// the weight does not read, and a result that is not the convolution's shape.
func.func @conv_groups(%x: !torch.vtensor<[1,4,10],f32>, %w: !torch.vtensor<[6,1,3],f32>) {
  %none = torch.constant.none
  %false = torch.constant.bool false
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int4 = torch.constant.int 4
  %one = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %zero = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.convolution %x, %w, %none, %one, %zero, %one, %false, %zero, %int4 : !torch.vtensor<[1,4,10],f32>, !torch.vtensor<[6,1,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[1,6,8],f32>
  func.return
}
// CHECK: torch.aten.convolution: 6 output channels do not split into 4 groups

// -----

func.func @conv_channels(%x: !torch.vtensor<[1,4,10],f32>, %w: !torch.vtensor<[8,3,3],f32>) {
  %none = torch.constant.none
  %false = torch.constant.bool false
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %one = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %zero = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.convolution %x, %w, %none, %one, %zero, %one, %false, %zero, %int1 : !torch.vtensor<[1,4,10],f32>, !torch.vtensor<[8,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[1,8,8],f32>
  func.return
}
// CHECK: torch.aten.convolution: input channels

// -----

func.func @conv_result(%x: !torch.vtensor<[1,4,10],f32>, %w: !torch.vtensor<[8,4,3],f32>) {
  %none = torch.constant.none
  %false = torch.constant.bool false
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %one = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %zero = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.convolution %x, %w, %none, %one, %zero, %one, %false, %zero, %int1 : !torch.vtensor<[1,4,10],f32>, !torch.vtensor<[8,4,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[1,8,10],f32>
  func.return
}
// CHECK: torch.aten.convolution: result !torch.vtensor<[1,8,10],f32> is not the convolution's shape [1, 8, 8]
