// RUN: spyre-opt %s -p torch-adapt --split-input-file | filecheck %s
// torch-adapt's rewrites, one function each; the exactness of each is stated in
// spyre_mlir/transforms/torch_adapt.py and its end-to-end effect is checked in
// test/python/test_torch_adapt.py.

// pow(x, 2) -> x * x: exact (one rounding, as pow).
// CHECK-LABEL: func.func @square
// CHECK-NEXT:    %[[M:.*]] = torch.aten.mul.Tensor %x, %x
// CHECK-NEXT:    func.return %[[M]]
func.func @square(%x: !torch.vtensor<[4,64],f32>) -> !torch.vtensor<[4,64],f32> {
  %float2 = torch.constant.float 2.000000e+00
  %0 = torch.aten.pow.Tensor_Scalar %x, %float2 : !torch.vtensor<[4,64],f32>, !torch.float -> !torch.vtensor<[4,64],f32>
  return %0 : !torch.vtensor<[4,64],f32>
}

// -----

// pow(x, 3) -> (x * x) * x; an int exponent is a number too.
// CHECK-LABEL: func.func @cube
// CHECK-NEXT:    %[[S:.*]] = torch.aten.mul.Tensor %x, %x
// CHECK-NEXT:    %[[C:.*]] = torch.aten.mul.Tensor %[[S]], %x
// CHECK-NEXT:    func.return %[[C]]
func.func @cube(%x: !torch.vtensor<[4,64],f32>) -> !torch.vtensor<[4,64],f32> {
  %int3 = torch.constant.int 3
  %0 = torch.aten.pow.Tensor_Scalar %x, %int3 : !torch.vtensor<[4,64],f32>, !torch.int -> !torch.vtensor<[4,64],f32>
  return %0 : !torch.vtensor<[4,64],f32>
}

// -----

// pow(x, -0.5) -> rsqrt(x); pow(x, -2) -> reciprocal(x * x); pow(x, 0.5) -> sqrt(x).
// CHECK-LABEL: func.func @roots
// CHECK:         torch.aten.rsqrt %x
// CHECK:         %[[S:.*]] = torch.aten.mul.Tensor %x, %x
// CHECK-NEXT:    torch.aten.reciprocal %[[S]]
// CHECK:         torch.aten.sqrt %x
// CHECK-NOT:     torch.aten.pow
func.func @roots(%x: !torch.vtensor<[4,64],f32>) -> !torch.vtensor<[4,64],f32> {
  %a = torch.constant.float -5.000000e-01
  %b = torch.constant.float -2.000000e+00
  %c = torch.constant.float 5.000000e-01
  %0 = torch.aten.pow.Tensor_Scalar %x, %a : !torch.vtensor<[4,64],f32>, !torch.float -> !torch.vtensor<[4,64],f32>
  %1 = torch.aten.pow.Tensor_Scalar %x, %b : !torch.vtensor<[4,64],f32>, !torch.float -> !torch.vtensor<[4,64],f32>
  %2 = torch.aten.pow.Tensor_Scalar %x, %c : !torch.vtensor<[4,64],f32>, !torch.float -> !torch.vtensor<[4,64],f32>
  %int1 = torch.constant.int 1
  %3 = torch.aten.add.Tensor %0, %1, %int1 : !torch.vtensor<[4,64],f32>, !torch.vtensor<[4,64],f32>, !torch.int -> !torch.vtensor<[4,64],f32>
  %4 = torch.aten.add.Tensor %3, %2, %int1 : !torch.vtensor<[4,64],f32>, !torch.vtensor<[4,64],f32>, !torch.int -> !torch.vtensor<[4,64],f32>
  return %4 : !torch.vtensor<[4,64],f32>
}

// -----

// A non-integer exponent other than +-0.5 is left to the lowering (exp(c log x)).
// CHECK-LABEL: func.func @general
// CHECK:         torch.aten.pow.Tensor_Scalar %x
func.func @general(%x: !torch.vtensor<[4,64],f32>) -> !torch.vtensor<[4,64],f32> {
  %c = torch.constant.float 1.500000e+00
  %0 = torch.aten.pow.Tensor_Scalar %x, %c : !torch.vtensor<[4,64],f32>, !torch.float -> !torch.vtensor<[4,64],f32>
  return %0 : !torch.vtensor<[4,64],f32>
}

// -----

// max.dim whose indices nobody reads -> amax (torch-mlir's softmax decomposition).
// CHECK-LABEL: func.func @max_values
// CHECK:         %[[D:.*]] = torch.prim.ListConstruct %int-1 : (!torch.int) -> !torch.list<int>
// CHECK-NEXT:    torch.aten.amax %x, %[[D]], %true : !torch.vtensor<[4,100],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[4,1],f32>
// CHECK-NOT:     torch.aten.max.dim
func.func @max_values(%x: !torch.vtensor<[4,100],f32>) -> !torch.vtensor<[4,1],f32> {
  %int-1 = torch.constant.int -1
  %true = torch.constant.bool true
  %values, %indices = torch.aten.max.dim %x, %int-1, %true : !torch.vtensor<[4,100],f32>, !torch.int, !torch.bool -> !torch.vtensor<[4,1],f32>, !torch.vtensor<[4,1],si64>
  return %values : !torch.vtensor<[4,1],f32>
}

// -----

// ... but not when the indices are used.
// CHECK-LABEL: func.func @max_indices
// CHECK:         torch.aten.max.dim
func.func @max_indices(%x: !torch.vtensor<[4,100],f32>) -> !torch.vtensor<[4,1],si64> {
  %int-1 = torch.constant.int -1
  %true = torch.constant.bool true
  %values, %indices = torch.aten.max.dim %x, %int-1, %true : !torch.vtensor<[4,100],f32>, !torch.int, !torch.bool -> !torch.vtensor<[4,1],f32>, !torch.vtensor<[4,1],si64>
  return %indices : !torch.vtensor<[4,1],si64>
}

// -----

// GPT-2's gelu_new, as aot_autograd decomposes it -> one gelu (tanh form); the chain is gone.
// CHECK-LABEL: func.func @gelu_new
// CHECK-NEXT:    %[[T:.*]] = torch.constant.str "tanh"
// CHECK-NEXT:    %[[G:.*]] = torch.aten.gelu %x, %[[T]] : !torch.vtensor<[4,64],f32>, !torch.str -> !torch.vtensor<[4,64],f32>
// CHECK-NEXT:    func.return %[[G]]
func.func @gelu_new(%x: !torch.vtensor<[4,64],f32>) -> !torch.vtensor<[4,64],f32> {
  %half = torch.constant.float 5.000000e-01
  %three = torch.constant.float 3.000000e+00
  %k = torch.constant.float 4.471500e-02
  %s = torch.constant.float 0.79788456080286541
  %one = torch.constant.float 1.000000e+00
  %int1 = torch.constant.int 1
  %0 = torch.aten.mul.Scalar %x, %half : !torch.vtensor<[4,64],f32>, !torch.float -> !torch.vtensor<[4,64],f32>
  %1 = torch.aten.pow.Tensor_Scalar %x, %three : !torch.vtensor<[4,64],f32>, !torch.float -> !torch.vtensor<[4,64],f32>
  %2 = torch.aten.mul.Scalar %1, %k : !torch.vtensor<[4,64],f32>, !torch.float -> !torch.vtensor<[4,64],f32>
  %3 = torch.aten.add.Tensor %x, %2, %int1 : !torch.vtensor<[4,64],f32>, !torch.vtensor<[4,64],f32>, !torch.int -> !torch.vtensor<[4,64],f32>
  %4 = torch.aten.mul.Scalar %3, %s : !torch.vtensor<[4,64],f32>, !torch.float -> !torch.vtensor<[4,64],f32>
  %5 = torch.aten.tanh %4 : !torch.vtensor<[4,64],f32> -> !torch.vtensor<[4,64],f32>
  %6 = torch.aten.add.Scalar %5, %one, %int1 : !torch.vtensor<[4,64],f32>, !torch.float, !torch.int -> !torch.vtensor<[4,64],f32>
  %7 = torch.aten.mul.Tensor %0, %6 : !torch.vtensor<[4,64],f32>, !torch.vtensor<[4,64],f32> -> !torch.vtensor<[4,64],f32>
  return %7 : !torch.vtensor<[4,64],f32>
}

// -----

// A near miss (0.0447 is not gelu's constant) stays as it is, apart from its pow.
// CHECK-LABEL: func.func @not_gelu
// CHECK-NOT:     torch.aten.gelu
// CHECK:         torch.aten.tanh
func.func @not_gelu(%x: !torch.vtensor<[4,64],f32>) -> !torch.vtensor<[4,64],f32> {
  %half = torch.constant.float 5.000000e-01
  %three = torch.constant.float 3.000000e+00
  %k = torch.constant.float 4.470000e-02
  %s = torch.constant.float 0.79788456080286541
  %one = torch.constant.float 1.000000e+00
  %int1 = torch.constant.int 1
  %0 = torch.aten.mul.Scalar %x, %half : !torch.vtensor<[4,64],f32>, !torch.float -> !torch.vtensor<[4,64],f32>
  %1 = torch.aten.pow.Tensor_Scalar %x, %three : !torch.vtensor<[4,64],f32>, !torch.float -> !torch.vtensor<[4,64],f32>
  %2 = torch.aten.mul.Scalar %1, %k : !torch.vtensor<[4,64],f32>, !torch.float -> !torch.vtensor<[4,64],f32>
  %3 = torch.aten.add.Tensor %x, %2, %int1 : !torch.vtensor<[4,64],f32>, !torch.vtensor<[4,64],f32>, !torch.int -> !torch.vtensor<[4,64],f32>
  %4 = torch.aten.mul.Scalar %3, %s : !torch.vtensor<[4,64],f32>, !torch.float -> !torch.vtensor<[4,64],f32>
  %5 = torch.aten.tanh %4 : !torch.vtensor<[4,64],f32> -> !torch.vtensor<[4,64],f32>
  %6 = torch.aten.add.Scalar %5, %one, %int1 : !torch.vtensor<[4,64],f32>, !torch.float, !torch.int -> !torch.vtensor<[4,64],f32>
  %7 = torch.aten.mul.Tensor %0, %6 : !torch.vtensor<[4,64],f32>, !torch.vtensor<[4,64],f32> -> !torch.vtensor<[4,64],f32>
  return %7 : !torch.vtensor<[4,64],f32>
}

// -----

// A 0-d constant tensor operand becomes the scalar overload (exact).
// CHECK-LABEL: func.func @scalar_tensor_operand
// CHECK:         %[[C:.*]] = torch.constant.float 8.000000e+00
// CHECK-NEXT:    torch.aten.div.Scalar %x, %[[C]] : !torch.vtensor<[4,64],f32>, !torch.float -> !torch.vtensor<[4,64],f32>
func.func @scalar_tensor_operand(%x: !torch.vtensor<[4,64],f32>) -> !torch.vtensor<[4,64],f32> {
  %c = torch.vtensor.literal(dense<8.000000e+00> : tensor<f32>) : !torch.vtensor<[],f32>
  %0 = torch.aten.div.Tensor %x, %c : !torch.vtensor<[4,64],f32>, !torch.vtensor<[],f32> -> !torch.vtensor<[4,64],f32>
  return %0 : !torch.vtensor<[4,64],f32>
}

// -----

// mean without keepdim -> mean with keepdim, then a view (exact).
// CHECK-LABEL: func.func @mean_no_keepdim
// CHECK:         %[[K:.*]] = torch.aten.mean.dim %x, %{{.*}}, %true{{.*}} -> !torch.vtensor<[2,7,1],f32>
// CHECK:         torch.aten.view %[[K]], %{{.*}} : !torch.vtensor<[2,7,1],f32>, !torch.list<int> -> !torch.vtensor<[2,7],f32>
func.func @mean_no_keepdim(%x: !torch.vtensor<[2,7,64],f32>) -> !torch.vtensor<[2,7],f32> {
  %int-1 = torch.constant.int -1
  %dims = torch.prim.ListConstruct %int-1 : (!torch.int) -> !torch.list<int>
  %false = torch.constant.bool false
  %none = torch.constant.none
  %0 = torch.aten.mean.dim %x, %dims, %false, %none : !torch.vtensor<[2,7,64],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[2,7],f32>
  return %0 : !torch.vtensor<[2,7],f32>
}
