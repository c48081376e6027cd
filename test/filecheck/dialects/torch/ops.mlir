// RUN: SPYRE_ROUNDTRIP
// RUN: SPYRE_GENERIC_ROUNDTRIP

// Every torch type and op class, in the exact spelling torch-mlir prints (inside containers
// the `!torch.` prefix is dropped), including a dense_resource literal with its blob, a -inf
// float constant in MLIR's hex form, and ops that only have the catch-all class.

func.func @types(%t0: !torch.vtensor<[4,?,64],f32>, %t1: !torch.vtensor<*,f16>, %t2: !torch.vtensor<[2],unk>, %t3: !torch.vtensor, %t4: !torch.vtensor<[],si64>, %t5: !torch.vtensor<[3],bf16>, %t6: !torch.vtensor<[3],i1>, %t7: !torch.vtensor<[3],ui8>, %t8: !torch.vtensor<[3],si8>, %t9: !torch.vtensor<[3],si32>, %t10: !torch.vtensor<[3],f64>, %s0: !torch.int, %s1: !torch.float, %s2: !torch.bool, %s3: !torch.str, %s4: !torch.none, %s5: !torch.number, %s6: !torch.Device, %c0: !torch.list<int>, %c1: !torch.list<vtensor<[2],f32>>, %c2: !torch.list<vtensor>, %c3: !torch.optional<int>, %c4: !torch.list<optional<vtensor>>, %c5: !torch.optional<list<int>>) {
// CHECK-LABEL: func.func @types(%t0: !torch.vtensor<[4,?,64],f32>, %t1: !torch.vtensor<*,f16>, %t2: !torch.vtensor<[2],unk>, %t3: !torch.vtensor, %t4: !torch.vtensor<[],si64>, %t5: !torch.vtensor<[3],bf16>, %t6: !torch.vtensor<[3],i1>, %t7: !torch.vtensor<[3],ui8>, %t8: !torch.vtensor<[3],si8>, %t9: !torch.vtensor<[3],si32>, %t10: !torch.vtensor<[3],f64>, %s0: !torch.int, %s1: !torch.float, %s2: !torch.bool, %s3: !torch.str, %s4: !torch.none, %s5: !torch.number, %s6: !torch.Device, %c0: !torch.list<int>, %c1: !torch.list<vtensor<[2],f32>>, %c2: !torch.list<vtensor>, %c3: !torch.optional<int>, %c4: !torch.list<optional<vtensor>>, %c5: !torch.optional<list<int>>) {
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "types"
// CHECK-GENERIC-NEXT:  ^bb0(%t0: !torch.vtensor<[4,?,64],f32>, %t1: !torch.vtensor<*,f16>, %t2: !torch.vtensor<[2],unk>, %t3: !torch.vtensor, %t4: !torch.vtensor<[],si64>, %t5: !torch.vtensor<[3],bf16>, %t6: !torch.vtensor<[3],i1>, %t7: !torch.vtensor<[3],ui8>, %t8: !torch.vtensor<[3],si8>, %t9: !torch.vtensor<[3],si32>, %t10: !torch.vtensor<[3],f64>, %s0: !torch.int, %s1: !torch.float, %s2: !torch.bool, %s3: !torch.str, %s4: !torch.none, %s5: !torch.number, %s6: !torch.Device, %c0: !torch.list<int>, %c1: !torch.list<vtensor<[2],f32>>, %c2: !torch.list<vtensor>, %c3: !torch.optional<int>, %c4: !torch.list<optional<vtensor>>, %c5: !torch.optional<list<int>>):
  func.return
  // CHECK-NEXT:          func.return
  // CHECK-GENERIC-NEXT:  "func.return"() : () -> ()
}

// -----

func.func @constants() {
// CHECK-LABEL: func.func @constants() {
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "constants"
  %int1 = torch.constant.int 1
  // CHECK-NEXT:          %int1 = torch.constant.int 1
  // CHECK-GENERIC-NEXT:  %int1 = "torch.constant.int"() <{value = 1 : i64}> : () -> !torch.int
  %int-1 = torch.constant.int -1
  // CHECK-NEXT:          %int-1 = torch.constant.int -1
  // CHECK-GENERIC-NEXT:  %int-1 = "torch.constant.int"() <{value = -1 : i64}> : () -> !torch.int
  %float1.000000e00 = torch.constant.float 1.000000e+00
  // CHECK-NEXT:          %float1.000000e00 = torch.constant.float 1.000000e+00
  // CHECK-GENERIC-NEXT:  %float1.000000e00 = "torch.constant.float"() <{value = 1.000000e+00 : f64}> : () -> !torch.float
  %float-Inf = torch.constant.float 0xFFF0000000000000
  // CHECK-NEXT:          %float-Inf = torch.constant.float 0xFFF0000000000000
  // CHECK-GENERIC-NEXT:  %float-Inf = "torch.constant.float"() <{value = 0xfff0000000000000 : f64}> : () -> !torch.float
  %floatNaN = torch.constant.float 0x7FF8000000000000
  // CHECK-NEXT:          %floatNaN = torch.constant.float 0x7FF8000000000000
  // CHECK-GENERIC-NEXT:  %floatNaN = "torch.constant.float"() <{value = 0x7ff8000000000000 : f64}> : () -> !torch.float
  %float1.000000e-05 = torch.constant.float 1.000000e-05
  // CHECK-NEXT:          %float1.000000e-05 = torch.constant.float 1.000000e-05
  // CHECK-GENERIC-NEXT:  %float1.000000e-05 = "torch.constant.float"() <{value = 1.000000e-05 : f64}> : () -> !torch.float
  %true = torch.constant.bool true
  // CHECK-NEXT:          %true = torch.constant.bool true
  // CHECK-GENERIC-NEXT:  %true = "torch.constant.bool"() <{value = true}> : () -> !torch.bool
  %false = torch.constant.bool false
  // CHECK-NEXT:          %false = torch.constant.bool false
  // CHECK-GENERIC-NEXT:  %false = "torch.constant.bool"() <{value = false}> : () -> !torch.bool
  %str = torch.constant.str "none"
  // CHECK-NEXT:          %str = torch.constant.str "none"
  // CHECK-GENERIC-NEXT:  %str = "torch.constant.str"() <{value = "none"}> : () -> !torch.str
  %none = torch.constant.none
  // CHECK-NEXT:          %none = torch.constant.none
  // CHECK-GENERIC-NEXT:  %none = "torch.constant.none"() : () -> !torch.none
  %cpu = torch.constant.device "cpu"
  // CHECK-NEXT:          %cpu = torch.constant.device "cpu"
  // CHECK-GENERIC-NEXT:  %cpu = "torch.constant.device"() <{value = "cpu"}> : () -> !torch.Device
  %0 = torch.prim.ListConstruct %int1, %int-1 : (!torch.int, !torch.int) -> !torch.list<int>
  // CHECK-NEXT:          %0 = torch.prim.ListConstruct %int1, %int-1 : (!torch.int, !torch.int) -> !torch.list<int>
  // CHECK-GENERIC-NEXT:  %0 = "torch.prim.ListConstruct"(%int1, %int-1) : (!torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.prim.ListConstruct : () -> !torch.list<int>
  // CHECK-NEXT:          %1 = torch.prim.ListConstruct : () -> !torch.list<int>
  // CHECK-GENERIC-NEXT:  %1 = "torch.prim.ListConstruct"() : () -> !torch.list<int>
  %2 = torch.prim.ListConstruct %int1, %none : (!torch.int, !torch.none) -> !torch.list<optional<int>>
  // CHECK-NEXT:          %2 = torch.prim.ListConstruct %int1, %none : (!torch.int, !torch.none) -> !torch.list<optional<int>>
  // CHECK-GENERIC-NEXT:  %2 = "torch.prim.ListConstruct"(%int1, %none) : (!torch.int, !torch.none) -> !torch.list<optional<int>>
  func.return
  // CHECK-NEXT:          func.return
  // CHECK-GENERIC-NEXT:  "func.return"() : () -> ()
}

// -----

func.func @lists(%a: !torch.vtensor<[2],f32>, %b: !torch.vtensor<[3],f32>) -> !torch.list<vtensor> {
// CHECK-LABEL: func.func @lists(%a: !torch.vtensor<[2],f32>, %b: !torch.vtensor<[3],f32>) -> !torch.list<vtensor> {
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "lists"
// CHECK-GENERIC-NEXT:  ^bb0(%a: !torch.vtensor<[2],f32>, %b: !torch.vtensor<[3],f32>):
  %0 = torch.prim.ListConstruct %a, %b : (!torch.vtensor<[2],f32>, !torch.vtensor<[3],f32>) -> !torch.list<vtensor>
  // CHECK-NEXT:          %0 = torch.prim.ListConstruct %a, %b : (!torch.vtensor<[2],f32>, !torch.vtensor<[3],f32>) -> !torch.list<vtensor>
  // CHECK-GENERIC-NEXT:  %0 = "torch.prim.ListConstruct"(%a, %b) : (!torch.vtensor<[2],f32>, !torch.vtensor<[3],f32>) -> !torch.list<vtensor>
  %1 = torch.prim.ListConstruct %a, %a : (!torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>) -> !torch.list<vtensor<[2],f32>>
  // CHECK-NEXT:          %1 = torch.prim.ListConstruct %a, %a : (!torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>) -> !torch.list<vtensor<[2],f32>>
  // CHECK-GENERIC-NEXT:  %1 = "torch.prim.ListConstruct"(%a, %a) : (!torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>) -> !torch.list<vtensor<[2],f32>>
  func.return %0 : !torch.list<vtensor>
  // CHECK-NEXT:          func.return %0 : !torch.list<vtensor>
  // CHECK-GENERIC-NEXT:  "func.return"(%0) : (!torch.list<vtensor>) -> ()
}

// -----

func.func @literals() -> (!torch.vtensor<[2],f32>, !torch.vtensor<[],si64>) {
// CHECK-LABEL: func.func @literals() -> (!torch.vtensor<[2],f32>, !torch.vtensor<[],si64>) {
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "literals"
  %0 = torch.vtensor.literal(dense_resource<torch_tensor_2_torch.float32> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  // CHECK-NEXT:          %0 = torch.vtensor.literal(dense_resource<torch_tensor_2_torch.float32> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  // CHECK-GENERIC-NEXT:  %0 = "torch.vtensor.literal"() <{value = dense_resource<torch_tensor_2_torch.float32> : tensor<2xf32>}> : () -> !torch.vtensor<[2],f32>
  %1 = torch.vtensor.literal(dense<7> : tensor<si64>) : !torch.vtensor<[],si64>
  // CHECK-NEXT:          %1 = torch.vtensor.literal(dense<7> : tensor<si64>) : !torch.vtensor<[],si64>
  // CHECK-GENERIC-NEXT:  %1 = "torch.vtensor.literal"() <{value = dense<7> : tensor<si64>}> : () -> !torch.vtensor<[],si64>
  func.return %0, %1 : !torch.vtensor<[2],f32>, !torch.vtensor<[],si64>
  // CHECK-NEXT:          func.return %0, %1 : !torch.vtensor<[2],f32>, !torch.vtensor<[],si64>
  // CHECK-GENERIC-NEXT:  "func.return"(%0, %1) : (!torch.vtensor<[2],f32>, !torch.vtensor<[],si64>) -> ()
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_2_torch.float32: "0x040000000000803F00000040"
    }
  }
#-}
// CHECK:               {-#
// CHECK-NEXT:            dialect_resources: {
// CHECK-NEXT:              builtin: {
// CHECK-NEXT:                torch_tensor_2_torch.float32: "0x040000000000803F00000040"
// CHECK-GENERIC:       {-#
// CHECK-GENERIC-NEXT:    dialect_resources: {
// CHECK-GENERIC-NEXT:      builtin: {
// CHECK-GENERIC-NEXT:        torch_tensor_2_torch.float32: "0x040000000000803F00000040"

// -----

func.func @aten(%x: !torch.vtensor<[4,256],f32>, %w: !torch.vtensor<[512,256],f32>, %b: !torch.vtensor<[512],f32>, %y: !torch.vtensor<[4,512],f32>, %p: !torch.vtensor<[2,4,8],f32>, %q: !torch.vtensor<[2,8,3],f32>, %int1: !torch.int, %float: !torch.float) {
// CHECK-LABEL: func.func @aten(%x: !torch.vtensor<[4,256],f32>, %w: !torch.vtensor<[512,256],f32>, %b: !torch.vtensor<[512],f32>, %y: !torch.vtensor<[4,512],f32>, %p: !torch.vtensor<[2,4,8],f32>, %q: !torch.vtensor<[2,8,3],f32>, %int1: !torch.int, %float: !torch.float) {
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "aten"
// CHECK-GENERIC-NEXT:  ^bb0(%x: !torch.vtensor<[4,256],f32>, %w: !torch.vtensor<[512,256],f32>, %b: !torch.vtensor<[512],f32>, %y: !torch.vtensor<[4,512],f32>, %p: !torch.vtensor<[2,4,8],f32>, %q: !torch.vtensor<[2,8,3],f32>, %int1: !torch.int, %float: !torch.float):
  %none = torch.constant.none
  // CHECK-NEXT:          %none = torch.constant.none
  // CHECK-GENERIC-NEXT:  %none = "torch.constant.none"() : () -> !torch.none
  %int0 = torch.constant.int 0
  // CHECK-NEXT:          %int0 = torch.constant.int 0
  // CHECK-GENERIC-NEXT:  %int0 = "torch.constant.int"() <{value = 0 : i64}> : () -> !torch.int
  %int-1 = torch.constant.int -1
  // CHECK-NEXT:          %int-1 = torch.constant.int -1
  // CHECK-GENERIC-NEXT:  %int-1 = "torch.constant.int"() <{value = -1 : i64}> : () -> !torch.int
  %str = torch.constant.str "none"
  // CHECK-NEXT:          %str = torch.constant.str "none"
  // CHECK-GENERIC-NEXT:  %str = "torch.constant.str"() <{value = "none"}> : () -> !torch.str
  %dims = torch.prim.ListConstruct %int1, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  // CHECK-NEXT:          %dims = torch.prim.ListConstruct %int1, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  // CHECK-GENERIC-NEXT:  %dims = "torch.prim.ListConstruct"(%int1, %int0) : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.t %w : !torch.vtensor<[512,256],f32> -> !torch.vtensor<[256,512],f32>
  // CHECK-NEXT:          %0 = torch.aten.t %w : !torch.vtensor<[512,256],f32> -> !torch.vtensor<[256,512],f32>
  // CHECK-GENERIC-NEXT:  %0 = "torch.aten.t"(%w) : (!torch.vtensor<[512,256],f32>) -> !torch.vtensor<[256,512],f32>
  %1 = torch.aten.permute %w, %dims : !torch.vtensor<[512,256],f32>, !torch.list<int> -> !torch.vtensor<[256,512],f32>
  // CHECK-NEXT:          %1 = torch.aten.permute %w, %dims : !torch.vtensor<[512,256],f32>, !torch.list<int> -> !torch.vtensor<[256,512],f32>
  // CHECK-GENERIC-NEXT:  %1 = "torch.aten.permute"(%w, %dims) : (!torch.vtensor<[512,256],f32>, !torch.list<int>) -> !torch.vtensor<[256,512],f32>
  %2 = torch.aten.transpose.int %w, %int0, %int1 : !torch.vtensor<[512,256],f32>, !torch.int, !torch.int -> !torch.vtensor<[256,512],f32>
  // CHECK-NEXT:          %2 = torch.aten.transpose.int %w, %int0, %int1 : !torch.vtensor<[512,256],f32>, !torch.int, !torch.int -> !torch.vtensor<[256,512],f32>
  // CHECK-GENERIC-NEXT:  %2 = "torch.aten.transpose.int"(%w, %int0, %int1) : (!torch.vtensor<[512,256],f32>, !torch.int, !torch.int) -> !torch.vtensor<[256,512],f32>
  %3 = torch.aten.mm %x, %0 : !torch.vtensor<[4,256],f32>, !torch.vtensor<[256,512],f32> -> !torch.vtensor<[4,512],f32>
  // CHECK-NEXT:          %3 = torch.aten.mm %x, %0 : !torch.vtensor<[4,256],f32>, !torch.vtensor<[256,512],f32> -> !torch.vtensor<[4,512],f32>
  // CHECK-GENERIC-NEXT:  %3 = "torch.aten.mm"(%x, %0) : (!torch.vtensor<[4,256],f32>, !torch.vtensor<[256,512],f32>) -> !torch.vtensor<[4,512],f32>
  %4 = torch.aten.bmm %p, %q : !torch.vtensor<[2,4,8],f32>, !torch.vtensor<[2,8,3],f32> -> !torch.vtensor<[2,4,3],f32>
  // CHECK-NEXT:          %4 = torch.aten.bmm %p, %q : !torch.vtensor<[2,4,8],f32>, !torch.vtensor<[2,8,3],f32> -> !torch.vtensor<[2,4,3],f32>
  // CHECK-GENERIC-NEXT:  %4 = "torch.aten.bmm"(%p, %q) : (!torch.vtensor<[2,4,8],f32>, !torch.vtensor<[2,8,3],f32>) -> !torch.vtensor<[2,4,3],f32>
  %5 = torch.aten.addmm %b, %x, %1, %int1, %int1 : !torch.vtensor<[512],f32>, !torch.vtensor<[4,256],f32>, !torch.vtensor<[256,512],f32>, !torch.int, !torch.int -> !torch.vtensor<[4,512],f32>
  // CHECK-NEXT:          %5 = torch.aten.addmm %b, %x, %1, %int1, %int1 : !torch.vtensor<[512],f32>, !torch.vtensor<[4,256],f32>, !torch.vtensor<[256,512],f32>, !torch.int, !torch.int -> !torch.vtensor<[4,512],f32>
  // CHECK-GENERIC-NEXT:  %5 = "torch.aten.addmm"(%b, %x, %1, %int1, %int1) : (!torch.vtensor<[512],f32>, !torch.vtensor<[4,256],f32>, !torch.vtensor<[256,512],f32>, !torch.int, !torch.int) -> !torch.vtensor<[4,512],f32>
  %6 = torch.aten.linear %x, %w, %b : !torch.vtensor<[4,256],f32>, !torch.vtensor<[512,256],f32>, !torch.vtensor<[512],f32> -> !torch.vtensor<[4,512],f32>
  // CHECK-NEXT:          %6 = torch.aten.linear %x, %w, %b : !torch.vtensor<[4,256],f32>, !torch.vtensor<[512,256],f32>, !torch.vtensor<[512],f32> -> !torch.vtensor<[4,512],f32>
  // CHECK-GENERIC-NEXT:  %6 = "torch.aten.linear"(%x, %w, %b) : (!torch.vtensor<[4,256],f32>, !torch.vtensor<[512,256],f32>, !torch.vtensor<[512],f32>) -> !torch.vtensor<[4,512],f32>
  %7 = torch.aten.linear %x, %w, %none : !torch.vtensor<[4,256],f32>, !torch.vtensor<[512,256],f32>, !torch.none -> !torch.vtensor<[4,512],f32>
  // CHECK-NEXT:          %7 = torch.aten.linear %x, %w, %none : !torch.vtensor<[4,256],f32>, !torch.vtensor<[512,256],f32>, !torch.none -> !torch.vtensor<[4,512],f32>
  // CHECK-GENERIC-NEXT:  %7 = "torch.aten.linear"(%x, %w, %none) : (!torch.vtensor<[4,256],f32>, !torch.vtensor<[512,256],f32>, !torch.none) -> !torch.vtensor<[4,512],f32>
  %8 = torch.aten.add.Tensor %3, %b, %int1 : !torch.vtensor<[4,512],f32>, !torch.vtensor<[512],f32>, !torch.int -> !torch.vtensor<[4,512],f32>
  // CHECK-NEXT:          %8 = torch.aten.add.Tensor %3, %b, %int1 : !torch.vtensor<[4,512],f32>, !torch.vtensor<[512],f32>, !torch.int -> !torch.vtensor<[4,512],f32>
  // CHECK-GENERIC-NEXT:  %8 = "torch.aten.add.Tensor"(%3, %b, %int1) : (!torch.vtensor<[4,512],f32>, !torch.vtensor<[512],f32>, !torch.int) -> !torch.vtensor<[4,512],f32>
  %9 = torch.aten.add.Scalar %8, %float, %int1 : !torch.vtensor<[4,512],f32>, !torch.float, !torch.int -> !torch.vtensor<[4,512],f32>
  // CHECK-NEXT:          %9 = torch.aten.add.Scalar %8, %float, %int1 : !torch.vtensor<[4,512],f32>, !torch.float, !torch.int -> !torch.vtensor<[4,512],f32>
  // CHECK-GENERIC-NEXT:  %9 = "torch.aten.add.Scalar"(%8, %float, %int1) : (!torch.vtensor<[4,512],f32>, !torch.float, !torch.int) -> !torch.vtensor<[4,512],f32>
  %10 = torch.aten.sub.Tensor %9, %y, %int1 : !torch.vtensor<[4,512],f32>, !torch.vtensor<[4,512],f32>, !torch.int -> !torch.vtensor<[4,512],f32>
  // CHECK-NEXT:          %10 = torch.aten.sub.Tensor %9, %y, %int1 : !torch.vtensor<[4,512],f32>, !torch.vtensor<[4,512],f32>, !torch.int -> !torch.vtensor<[4,512],f32>
  // CHECK-GENERIC-NEXT:  %10 = "torch.aten.sub.Tensor"(%9, %y, %int1) : (!torch.vtensor<[4,512],f32>, !torch.vtensor<[4,512],f32>, !torch.int) -> !torch.vtensor<[4,512],f32>
  %11 = torch.aten.sub.Scalar %10, %int1, %float : !torch.vtensor<[4,512],f32>, !torch.int, !torch.float -> !torch.vtensor<[4,512],f32>
  // CHECK-NEXT:          %11 = torch.aten.sub.Scalar %10, %int1, %float : !torch.vtensor<[4,512],f32>, !torch.int, !torch.float -> !torch.vtensor<[4,512],f32>
  // CHECK-GENERIC-NEXT:  %11 = "torch.aten.sub.Scalar"(%10, %int1, %float) : (!torch.vtensor<[4,512],f32>, !torch.int, !torch.float) -> !torch.vtensor<[4,512],f32>
  %12 = torch.aten.mul.Tensor %11, %y : !torch.vtensor<[4,512],f32>, !torch.vtensor<[4,512],f32> -> !torch.vtensor<[4,512],f32>
  // CHECK-NEXT:          %12 = torch.aten.mul.Tensor %11, %y : !torch.vtensor<[4,512],f32>, !torch.vtensor<[4,512],f32> -> !torch.vtensor<[4,512],f32>
  // CHECK-GENERIC-NEXT:  %12 = "torch.aten.mul.Tensor"(%11, %y) : (!torch.vtensor<[4,512],f32>, !torch.vtensor<[4,512],f32>) -> !torch.vtensor<[4,512],f32>
  %13 = torch.aten.mul.Scalar %12, %int1 : !torch.vtensor<[4,512],f32>, !torch.int -> !torch.vtensor<[4,512],f32>
  // CHECK-NEXT:          %13 = torch.aten.mul.Scalar %12, %int1 : !torch.vtensor<[4,512],f32>, !torch.int -> !torch.vtensor<[4,512],f32>
  // CHECK-GENERIC-NEXT:  %13 = "torch.aten.mul.Scalar"(%12, %int1) : (!torch.vtensor<[4,512],f32>, !torch.int) -> !torch.vtensor<[4,512],f32>
  %14 = torch.aten.relu %13 : !torch.vtensor<[4,512],f32> -> !torch.vtensor<[4,512],f32>
  // CHECK-NEXT:          %14 = torch.aten.relu %13 : !torch.vtensor<[4,512],f32> -> !torch.vtensor<[4,512],f32>
  // CHECK-GENERIC-NEXT:  %14 = "torch.aten.relu"(%13) : (!torch.vtensor<[4,512],f32>) -> !torch.vtensor<[4,512],f32>
  %15 = torch.aten.gelu %14, %str : !torch.vtensor<[4,512],f32>, !torch.str -> !torch.vtensor<[4,512],f32>
  // CHECK-NEXT:          %15 = torch.aten.gelu %14, %str : !torch.vtensor<[4,512],f32>, !torch.str -> !torch.vtensor<[4,512],f32>
  // CHECK-GENERIC-NEXT:  %15 = "torch.aten.gelu"(%14, %str) : (!torch.vtensor<[4,512],f32>, !torch.str) -> !torch.vtensor<[4,512],f32>
  %size = torch.prim.ListConstruct %int-1 : (!torch.int) -> !torch.list<int>
  // CHECK-NEXT:          %size = torch.prim.ListConstruct %int-1 : (!torch.int) -> !torch.list<int>
  // CHECK-GENERIC-NEXT:  %size = "torch.prim.ListConstruct"(%int-1) : (!torch.int) -> !torch.list<int>
  %16 = torch.aten.view %15, %size : !torch.vtensor<[4,512],f32>, !torch.list<int> -> !torch.vtensor<[2048],f32>
  // CHECK-NEXT:          %16 = torch.aten.view %15, %size : !torch.vtensor<[4,512],f32>, !torch.list<int> -> !torch.vtensor<[2048],f32>
  // CHECK-GENERIC-NEXT:  %16 = "torch.aten.view"(%15, %size) : (!torch.vtensor<[4,512],f32>, !torch.list<int>) -> !torch.vtensor<[2048],f32>
  %17 = torch.aten.reshape %15, %size : !torch.vtensor<[4,512],f32>, !torch.list<int> -> !torch.vtensor<[2048],f32>
  // CHECK-NEXT:          %17 = torch.aten.reshape %15, %size : !torch.vtensor<[4,512],f32>, !torch.list<int> -> !torch.vtensor<[2048],f32>
  // CHECK-GENERIC-NEXT:  %17 = "torch.aten.reshape"(%15, %size) : (!torch.vtensor<[4,512],f32>, !torch.list<int>) -> !torch.vtensor<[2048],f32>
  %18 = torch.aten._unsafe_view %15, %size : !torch.vtensor<[4,512],f32>, !torch.list<int> -> !torch.vtensor<[2048],f32>
  // CHECK-NEXT:          %18 = torch.aten._unsafe_view %15, %size : !torch.vtensor<[4,512],f32>, !torch.list<int> -> !torch.vtensor<[2048],f32>
  // CHECK-GENERIC-NEXT:  %18 = "torch.aten._unsafe_view"(%15, %size) : (!torch.vtensor<[4,512],f32>, !torch.list<int>) -> !torch.vtensor<[2048],f32>
  %19 = torch.aten.clone %16, %none : !torch.vtensor<[2048],f32>, !torch.none -> !torch.vtensor<[2048],f32>
  // CHECK-NEXT:          %19 = torch.aten.clone %16, %none : !torch.vtensor<[2048],f32>, !torch.none -> !torch.vtensor<[2048],f32>
  // CHECK-GENERIC-NEXT:  %19 = "torch.aten.clone"(%16, %none) : (!torch.vtensor<[2048],f32>, !torch.none) -> !torch.vtensor<[2048],f32>
  %20 = torch.aten.clone %16, %int0 : !torch.vtensor<[2048],f32>, !torch.int -> !torch.vtensor<[2048],f32>
  // CHECK-NEXT:          %20 = torch.aten.clone %16, %int0 : !torch.vtensor<[2048],f32>, !torch.int -> !torch.vtensor<[2048],f32>
  // CHECK-GENERIC-NEXT:  %20 = "torch.aten.clone"(%16, %int0) : (!torch.vtensor<[2048],f32>, !torch.int) -> !torch.vtensor<[2048],f32>
  func.return
  // CHECK-NEXT:          func.return
  // CHECK-GENERIC-NEXT:  "func.return"() : () -> ()
}

// -----

// Ops without a dedicated class use the catch-all with torch-mlir's default syntax.
func.func @default_syntax(%x: !torch.vtensor<[4,512],f32>) -> !torch.vtensor<[4],f32> {
// CHECK-LABEL: func.func @default_syntax(%x: !torch.vtensor<[4,512],f32>) -> !torch.vtensor<[4],f32> {
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "default_syntax"
// CHECK-GENERIC-NEXT:  ^bb0(%x: !torch.vtensor<[4,512],f32>):
  %int-1 = torch.constant.int -1
  // CHECK-NEXT:          %int-1 = torch.constant.int -1
  // CHECK-GENERIC-NEXT:  %int-1 = "torch.constant.int"() <{value = -1 : i64}> : () -> !torch.int
  %false = torch.constant.bool false
  // CHECK-NEXT:          %false = torch.constant.bool false
  // CHECK-GENERIC-NEXT:  %false = "torch.constant.bool"() <{value = false}> : () -> !torch.bool
  %0:2 = torch.aten.max.dim %x, %int-1, %false : !torch.vtensor<[4,512],f32>, !torch.int, !torch.bool -> !torch.vtensor<[4],f32>, !torch.vtensor<[4],si64>
  // CHECK-NEXT:          %0, %1 = torch.aten.max.dim %x, %int-1, %false : !torch.vtensor<[4,512],f32>, !torch.int, !torch.bool -> !torch.vtensor<[4],f32>, !torch.vtensor<[4],si64>
  // CHECK-GENERIC-NEXT:  %0, %1 = "torch.aten.max.dim"(%x, %int-1, %false) : (!torch.vtensor<[4,512],f32>, !torch.int, !torch.bool) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[4],si64>)
  %1 = torch.aten.sigmoid %0#0 {note = "kept"} : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  // CHECK-NEXT:          %2 = torch.aten.sigmoid %0 {note = "kept"} : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  // CHECK-GENERIC-NEXT:  %2 = "torch.aten.sigmoid"(%0) {note = "kept"} : (!torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32>
  %2 = torch.aten.zero_result  : !torch.int
  // CHECK-NEXT:          %3 = torch.aten.zero_result  : !torch.int
  // CHECK-GENERIC-NEXT:  %3 = "torch.aten.zero_result"() : () -> !torch.int
  torch.aten.no_result %2 : !torch.int
  // CHECK-NEXT:          torch.aten.no_result %3 : !torch.int
  // CHECK-GENERIC-NEXT:  "torch.aten.no_result"(%3) : (!torch.int) -> ()
  func.return %1 : !torch.vtensor<[4],f32>
  // CHECK-NEXT:          func.return %2 : !torch.vtensor<[4],f32>
  // CHECK-GENERIC-NEXT:  "func.return"(%2) : (!torch.vtensor<[4],f32>) -> ()
}

// -----

// torch-mlir's spelling of a PyTorch op it has no registered op for.
func.func @operator(%x: !torch.vtensor<[1,5,16],f32>, %int2: !torch.int) -> !torch.vtensor<[1,5,16],f32> {
// CHECK-LABEL: func.func @operator(%x: !torch.vtensor<[1,5,16],f32>, %int2: !torch.int) -> !torch.vtensor<[1,5,16],f32> {
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "operator"
// CHECK-GENERIC-NEXT:  ^bb0(%x: !torch.vtensor<[1,5,16],f32>, %int2: !torch.int):
  %0 = torch.operator "torch.aten._transformer_encoder_layer_fwd"(%x, %int2) : (!torch.vtensor<[1,5,16],f32>, !torch.int) -> !torch.vtensor<[1,5,16],f32>
  // CHECK-NEXT:          %0 = torch.operator "torch.aten._transformer_encoder_layer_fwd"(%x, %int2) : (!torch.vtensor<[1,5,16],f32>, !torch.int) -> !torch.vtensor<[1,5,16],f32>
  // CHECK-GENERIC-NEXT:  %0 = "torch.operator"(%x, %int2) <{name = "torch.aten._transformer_encoder_layer_fwd"}> : (!torch.vtensor<[1,5,16],f32>, !torch.int) -> !torch.vtensor<[1,5,16],f32>
  torch.operator "torch.aten._no_result"(%x) : (!torch.vtensor<[1,5,16],f32>) -> ()
  // CHECK-NEXT:          torch.operator "torch.aten._no_result"(%x) : (!torch.vtensor<[1,5,16],f32>) -> ()
  // CHECK-GENERIC-NEXT:  "torch.operator"(%x) <{name = "torch.aten._no_result"}> : (!torch.vtensor<[1,5,16],f32>) -> ()
  func.return %0 : !torch.vtensor<[1,5,16],f32>
  // CHECK-NEXT:          func.return %0 : !torch.vtensor<[1,5,16],f32>
  // CHECK-GENERIC-NEXT:  "func.return"(%0) : (!torch.vtensor<[1,5,16],f32>) -> ()
}
