// RUN: spyre-opt %s --verify-diagnostics --split-input-file | filecheck %s

// Signless integers other than i1 are not torch dtypes (torch-mlir rejects them too).
func.func @vtensor_dtype(%a: !torch.vtensor<[2],i32>) {
  func.return
}
// CHECK: !torch.vtensor: invalid dtype i32 (expected a float, complex, i1, or a signed or unsigned 8/16/32/64-bit integer)

// -----

func.func @vtensor_size(%a: !torch.vtensor<[-2],f32>) {
  func.return
}
// CHECK: !torch.vtensor: invalid size in shape [-2]

// -----

func.func @list_element(%i: !torch.int, %f: !torch.float) {
  %0 = torch.prim.ListConstruct %i, %f : (!torch.int, !torch.float) -> !torch.list<int>
  func.return
}
// CHECK: torch.prim.ListConstruct: element 1 has type !torch.float, which does not fit the list element type !torch.int

// -----

func.func @list_tensor_element(%a: !torch.vtensor<[3],f32>) {
  %0 = torch.prim.ListConstruct %a : (!torch.vtensor<[3],f32>) -> !torch.list<vtensor<[2],f32>>
  func.return
}
// CHECK: torch.prim.ListConstruct: element 0 has type !torch.vtensor<[3],f32>, which does not fit the list element type !torch.vtensor<[2],f32>

// -----

func.func @literal_type() {
  %0 = torch.vtensor.literal(dense<1.0> : tensor<2xf32>) : !torch.vtensor<[3],f32>
  func.return
}
// CHECK: torch.vtensor.literal: literal of type tensor<2xf32> does not match result type !torch.vtensor<[3],f32>

// -----

func.func @mm_builtin_tensor(%a: tensor<4x8xf32>, %b: !torch.vtensor<[8,2],f32>) {
  %0 = torch.aten.mm %a, %b : tensor<4x8xf32>, !torch.vtensor<[8,2],f32> -> !torch.vtensor<[4,2],f32>
  func.return
}
// CHECK: operand 'self_' at position 0 does not verify:
// CHECK-NEXT: tensor<4x8xf32> should be of base attribute torch.vtensor

// -----

func.func @mm_contracting(%a: !torch.vtensor<[4,8],f32>, %b: !torch.vtensor<[7,2],f32>) {
  %0 = torch.aten.mm %a, %b : !torch.vtensor<[4,8],f32>, !torch.vtensor<[7,2],f32> -> !torch.vtensor<[4,2],f32>
  func.return
}
// CHECK: torch.aten.mm: contracting sizes differ (8 vs 7): 'self' is !torch.vtensor<[4,8],f32>, 'mat2' is !torch.vtensor<[7,2],f32>

// -----

func.func @mm_rank(%a: !torch.vtensor<[2,4,8],f32>, %b: !torch.vtensor<[8,2],f32>) {
  %0 = torch.aten.mm %a, %b : !torch.vtensor<[2,4,8],f32>, !torch.vtensor<[8,2],f32> -> !torch.vtensor<[4,2],f32>
  func.return
}
// CHECK: torch.aten.mm: operand 'self' must have rank 2, got !torch.vtensor<[2,4,8],f32>

// -----

func.func @bmm_batch(%a: !torch.vtensor<[2,4,8],f32>, %b: !torch.vtensor<[3,8,2],f32>) {
  %0 = torch.aten.bmm %a, %b : !torch.vtensor<[2,4,8],f32>, !torch.vtensor<[3,8,2],f32> -> !torch.vtensor<[2,4,2],f32>
  func.return
}
// CHECK: torch.aten.bmm: batch sizes differ (2 vs 3): 'self' is !torch.vtensor<[2,4,8],f32>, 'mat2' is !torch.vtensor<[3,8,2],f32>

// -----

func.func @addmm_contracting(%b: !torch.vtensor<[2],f32>, %x: !torch.vtensor<[4,8],f32>, %w: !torch.vtensor<[9,2],f32>, %one: !torch.int) {
  %0 = torch.aten.addmm %b, %x, %w, %one, %one : !torch.vtensor<[2],f32>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[9,2],f32>, !torch.int, !torch.int -> !torch.vtensor<[4,2],f32>
  func.return
}
// CHECK: torch.aten.addmm: contracting sizes differ (8 vs 9): 'mat1' is !torch.vtensor<[4,8],f32>, 'mat2' is !torch.vtensor<[9,2],f32>

// -----

func.func @addmm_scalar(%b: !torch.vtensor<[2],f32>, %x: !torch.vtensor<[4,8],f32>, %w: !torch.vtensor<[8,2],f32>, %s: !torch.str) {
  %0 = torch.aten.addmm %b, %x, %w, %s, %s : !torch.vtensor<[2],f32>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[8,2],f32>, !torch.str, !torch.str -> !torch.vtensor<[4,2],f32>
  func.return
}
// CHECK: operand 'beta' at position 3 does not verify:
// CHECK-NEXT: Unexpected attribute !torch.str

// -----

func.func @linear_features(%x: !torch.vtensor<[4,8],f32>, %w: !torch.vtensor<[2,9],f32>, %none: !torch.none) {
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[4,8],f32>, !torch.vtensor<[2,9],f32>, !torch.none -> !torch.vtensor<[4,2],f32>
  func.return
}
// CHECK: torch.aten.linear: in-features differ (8 vs 9): 'input' is !torch.vtensor<[4,8],f32>, 'weight' is !torch.vtensor<[2,9],f32>

// -----

func.func @t_rank(%a: !torch.vtensor<[2,3,4],f32>) {
  %0 = torch.aten.t %a : !torch.vtensor<[2,3,4],f32> -> !torch.vtensor<[4,3,2],f32>
  func.return
}
// CHECK: torch.aten.t: operand 'self' must have rank 0, 1 or 2, got !torch.vtensor<[2,3,4],f32>

// -----

func.func @permute_dims(%a: !torch.vtensor<[2,3],f32>) {
  %int0 = torch.constant.int 0
  %dims = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.permute %a, %dims : !torch.vtensor<[2,3],f32>, !torch.list<int> -> !torch.vtensor<[2,2],f32>
  func.return
}
// CHECK: torch.aten.permute: dims [0, 0] are not a permutation of the 2 dims of !torch.vtensor<[2,3],f32>

// -----

func.func @transpose_dim(%a: !torch.vtensor<[2,3],f32>) {
  %int0 = torch.constant.int 0
  %int2 = torch.constant.int 2
  %0 = torch.aten.transpose.int %a, %int0, %int2 : !torch.vtensor<[2,3],f32>, !torch.int, !torch.int -> !torch.vtensor<[3,2],f32>
  func.return
}
// CHECK: torch.aten.transpose.int: dim 2 is out of range for !torch.vtensor<[2,3],f32>

// -----

func.func @gelu_approximate(%a: !torch.vtensor<[2],f32>) {
  %str = torch.constant.str "erf"
  %0 = torch.aten.gelu %a, %str : !torch.vtensor<[2],f32>, !torch.str -> !torch.vtensor<[2],f32>
  func.return
}
// CHECK: torch.aten.gelu: approximate must be "none" or "tanh", got "erf"

// -----

func.func @view_numel(%a: !torch.vtensor<[4,6],f32>) {
  %int5 = torch.constant.int 5
  %size = torch.prim.ListConstruct %int5, %int5 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.view %a, %size : !torch.vtensor<[4,6],f32>, !torch.list<int> -> !torch.vtensor<[5,5],f32>
  func.return
}
// CHECK: torch.aten.view: cannot view !torch.vtensor<[4,6],f32> with 24 elements as [5, 5]

// -----

func.func @reshape_two_inferred(%a: !torch.vtensor<[4,6],f32>) {
  %int-1 = torch.constant.int -1
  %shape = torch.prim.ListConstruct %int-1, %int-1 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.reshape %a, %shape : !torch.vtensor<[4,6],f32>, !torch.list<int> -> !torch.vtensor<[4,6],f32>
  func.return
}
// CHECK: torch.aten.reshape: invalid size list [-1, -1]

// -----

func.func @unsafe_view_list_type(%a: !torch.vtensor<[4,6],f32>, %l: !torch.list<float>) {
  %0 = torch.aten._unsafe_view %a, %l : !torch.vtensor<[4,6],f32>, !torch.list<float> -> !torch.vtensor<[24],f32>
  func.return
}
// CHECK: operand 'size' at position 1 does not verify:
// CHECK-NEXT: Expected attribute !torch.list<int> but got !torch.list<float>

// -----

func.func @clone_memory_format(%a: !torch.vtensor<[2],f32>, %s: !torch.str) {
  %0 = torch.aten.clone %a, %s : !torch.vtensor<[2],f32>, !torch.str -> !torch.vtensor<[2],f32>
  func.return
}
// CHECK: operand 'memory_format' at position 1 does not verify:
// CHECK-NEXT: Unexpected attribute !torch.str

// -----

func.func @operand_count(%a: !torch.vtensor<[2],f32>) {
  %0 = torch.aten.relu %a, %a : !torch.vtensor<[2],f32>, !torch.vtensor<[2],f32> -> !torch.vtensor<[2],f32>
  func.return
}
// CHECK: Expected 1 operand, but got 2
