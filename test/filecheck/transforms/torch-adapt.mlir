// RUN: spyre-opt %s -p torch-adapt --split-input-file | filecheck %s
// torch-adapt's rewrites, one function each; the exactness of each is stated in
// spyre_mlir/transforms/torch_adapt/ and its end-to-end effect is checked in
// test/python/transforms/test_torch_adapt.py.

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

// Where the indices are read, they are an argmax (the host's by design: an index from floats).
// CHECK-LABEL: func.func @max_indices
// CHECK:         %[[I:.*]] = torch.aten.argmax %x, %int-1, %true : !torch.vtensor<[4,100],f32>, !torch.int, !torch.bool -> !torch.vtensor<[4,1],si64>
// CHECK-NEXT:    func.return %[[I]]
// CHECK-NOT:     torch.aten.max.dim
func.func @max_indices(%x: !torch.vtensor<[4,100],f32>) -> !torch.vtensor<[4,1],si64> {
  %int-1 = torch.constant.int -1
  %true = torch.constant.bool true
  %values, %indices = torch.aten.max.dim %x, %int-1, %true : !torch.vtensor<[4,100],f32>, !torch.int, !torch.bool -> !torch.vtensor<[4,1],f32>, !torch.vtensor<[4,1],si64>
  return %indices : !torch.vtensor<[4,1],si64>
}

// -----

// split_with_sizes into pieces that are unpacked -> a slice per piece (GPT-2's q, k, v).
// CHECK-LABEL: func.func @split_qkv
// CHECK-NOT:     torch.aten.split_with_sizes
// CHECK:         %[[Q:.*]] = torch.aten.slice.Tensor %x, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : {{.*}} -> !torch.vtensor<[23,64],f32>
// CHECK:         %[[KV:.*]] = torch.aten.slice.Tensor %x, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : {{.*}} -> !torch.vtensor<[23,128],f32>
// CHECK-NEXT:    func.return %[[Q]], %[[KV]]
func.func @split_qkv(%x: !torch.vtensor<[23,192],f32>) -> (!torch.vtensor<[23,64],f32>, !torch.vtensor<[23,128],f32>) {
  %int64 = torch.constant.int 64
  %int128 = torch.constant.int 128
  %int1 = torch.constant.int 1
  %sizes = torch.prim.ListConstruct %int64, %int128 : (!torch.int, !torch.int) -> !torch.list<int>
  %parts = torch.aten.split_with_sizes %x, %sizes, %int1 : !torch.vtensor<[23,192],f32>, !torch.list<int>, !torch.int -> !torch.list<vtensor>
  %q, %kv = torch.prim.ListUnpack %parts : !torch.list<vtensor> -> !torch.vtensor<[23,64],f32>, !torch.vtensor<[23,128],f32>
  return %q, %kv : !torch.vtensor<[23,64],f32>, !torch.vtensor<[23,128],f32>
}

// -----

// A merged linear's parts joined, then split again (q, k and v; spyre_mlir/vllm/layers.py):
// each slice that is exactly a piece is the piece; one spanning whole pieces is their cat.
// CHECK-LABEL: func.func @slices_of_a_cat
// CHECK-NOT:     torch.aten.slice.Tensor
// CHECK:         %[[KV:.*]] = torch.aten.cat %{{.*}}, %{{.*}} : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[2,128],f32>
// CHECK-NEXT:    func.return %q, %k, %v, %[[KV]]
func.func @slices_of_a_cat(%q: !torch.vtensor<[2,64],f32>, %k: !torch.vtensor<[2,64],f32>, %v: !torch.vtensor<[2,64],f32>) -> (!torch.vtensor<[2,64],f32>, !torch.vtensor<[2,64],f32>, !torch.vtensor<[2,64],f32>, !torch.vtensor<[2,128],f32>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int64 = torch.constant.int 64
  %int128 = torch.constant.int 128
  %intm1 = torch.constant.int -1
  %intm64 = torch.constant.int -64
  %none = torch.constant.none
  %list = torch.prim.ListConstruct %q, %k, %v : (!torch.vtensor<[2,64],f32>, !torch.vtensor<[2,64],f32>, !torch.vtensor<[2,64],f32>) -> !torch.list<vtensor>
  %qkv = torch.aten.cat %list, %int1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[2,192],f32>
  %0 = torch.aten.slice.Tensor %qkv, %int1, %int0, %int64, %int1 : !torch.vtensor<[2,192],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,64],f32>
  %1 = torch.aten.slice.Tensor %qkv, %intm1, %int64, %int128, %int1 : !torch.vtensor<[2,192],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,64],f32>
  %2 = torch.aten.slice.Tensor %qkv, %int1, %intm64, %none, %int1 : !torch.vtensor<[2,192],f32>, !torch.int, !torch.int, !torch.none, !torch.int -> !torch.vtensor<[2,64],f32>
  %3 = torch.aten.slice.Tensor %qkv, %int1, %int64, %none, %int1 : !torch.vtensor<[2,192],f32>, !torch.int, !torch.int, !torch.none, !torch.int -> !torch.vtensor<[2,128],f32>
  return %0, %1, %2, %3 : !torch.vtensor<[2,64],f32>, !torch.vtensor<[2,64],f32>, !torch.vtensor<[2,64],f32>, !torch.vtensor<[2,128],f32>
}

// -----

// A slice across a piece's end is a slice (the cat stays).
// CHECK-LABEL: func.func @slice_inside_a_cat
// CHECK:         torch.aten.cat
// CHECK:         torch.aten.slice.Tensor
func.func @slice_inside_a_cat(%a: !torch.vtensor<[2,64],f32>, %b: !torch.vtensor<[2,64],f32>) -> !torch.vtensor<[2,64],f32> {
  %int1 = torch.constant.int 1
  %int32 = torch.constant.int 32
  %int96 = torch.constant.int 96
  %list = torch.prim.ListConstruct %a, %b : (!torch.vtensor<[2,64],f32>, !torch.vtensor<[2,64],f32>) -> !torch.list<vtensor>
  %ab = torch.aten.cat %list, %int1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[2,128],f32>
  %0 = torch.aten.slice.Tensor %ab, %int1, %int32, %int96, %int1 : !torch.vtensor<[2,128],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,64],f32>
  return %0 : !torch.vtensor<[2,64],f32>
}

// -----

// A cat with a legacy empty 1-d piece (cat skips it, as a KV cache's first step has): the
// pieces are not whole along the dim, and the slice stays.
// CHECK-LABEL: func.func @slice_of_a_cat_with_an_empty_piece
// CHECK:         torch.aten.cat
// CHECK:         torch.aten.slice.Tensor
func.func @slice_of_a_cat_with_an_empty_piece(%e: !torch.vtensor<[0],f32>, %b: !torch.vtensor<[2,64],f32>) -> !torch.vtensor<[2,64],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int64 = torch.constant.int 64
  %list = torch.prim.ListConstruct %e, %b : (!torch.vtensor<[0],f32>, !torch.vtensor<[2,64],f32>) -> !torch.list<vtensor>
  %eb = torch.aten.cat %list, %int1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[2,64],f32>
  %0 = torch.aten.slice.Tensor %eb, %int1, %int0, %int64, %int1 : !torch.vtensor<[2,64],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,64],f32>
  return %0 : !torch.vtensor<[2,64],f32>
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

// -----

// A Linear's activation on its 3-d view: the activation moves before the view (exact), so it
// sits right after the matmul; the view back to 2-d then reads a view of the gelu's own shape,
// and both views go (the next matmul reads the gelu's result).
// CHECK-LABEL: func.func @activation_before_view
// CHECK:         %[[G:.*]] = torch.aten.gelu %y, %str : !torch.vtensor<[128,64],f32>, !torch.str -> !torch.vtensor<[128,64],f32>
// CHECK-NEXT:    func.return %[[G]]
func.func @activation_before_view(%y: !torch.vtensor<[128,64],f32>) -> !torch.vtensor<[128,64],f32> {
  %int1 = torch.constant.int 1
  %int128 = torch.constant.int 128
  %int64 = torch.constant.int 64
  %s3 = torch.prim.ListConstruct %int1, %int128, %int64 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %s2 = torch.prim.ListConstruct %int128, %int64 : (!torch.int, !torch.int) -> !torch.list<int>
  %str = torch.constant.str "none"
  %0 = torch.aten.view %y, %s3 : !torch.vtensor<[128,64],f32>, !torch.list<int> -> !torch.vtensor<[1,128,64],f32>
  %1 = torch.aten.gelu %0, %str : !torch.vtensor<[1,128,64],f32>, !torch.str -> !torch.vtensor<[1,128,64],f32>
  %2 = torch.aten.view %1, %s2 : !torch.vtensor<[1,128,64],f32>, !torch.list<int> -> !torch.vtensor<[128,64],f32>
  return %2 : !torch.vtensor<[128,64],f32>
}

// -----

// A gated activation: silu(view(gate)) * view(up) with gate and up of one shape: the
// sigmoid, the two products and the view all move (exact); a view kept by another reader stays.
// CHECK-LABEL: func.func @gated_before_view
// CHECK:         %[[U:.*]] = torch.aten.view %up, %s3
// CHECK:         %[[S:.*]] = torch.aten.sigmoid %gate : !torch.vtensor<[128,64],f32> -> !torch.vtensor<[128,64],f32>
// CHECK:         %[[M:.*]] = torch.aten.mul.Tensor %gate, %[[S]] : !torch.vtensor<[128,64],f32>, !torch.vtensor<[128,64],f32> -> !torch.vtensor<[128,64],f32>
// CHECK:         %[[P:.*]] = torch.aten.mul.Tensor %[[M]], %up : !torch.vtensor<[128,64],f32>, !torch.vtensor<[128,64],f32> -> !torch.vtensor<[128,64],f32>
// CHECK-NEXT:    %[[V:.*]] = torch.aten.view %[[P]], %s3
// CHECK-NEXT:    func.return %[[V]], %[[U]]
// CHECK-NOT:     torch.aten.view %gate
func.func @gated_before_view(%gate: !torch.vtensor<[128,64],f32>, %up: !torch.vtensor<[128,64],f32>) -> (!torch.vtensor<[1,128,64],f32>, !torch.vtensor<[1,128,64],f32>) {
  %int1 = torch.constant.int 1
  %int128 = torch.constant.int 128
  %int64 = torch.constant.int 64
  %s3 = torch.prim.ListConstruct %int1, %int128, %int64 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %g = torch.aten.view %gate, %s3 : !torch.vtensor<[128,64],f32>, !torch.list<int> -> !torch.vtensor<[1,128,64],f32>
  %u = torch.aten.view %up, %s3 : !torch.vtensor<[128,64],f32>, !torch.list<int> -> !torch.vtensor<[1,128,64],f32>
  %0 = torch.aten.sigmoid %g : !torch.vtensor<[1,128,64],f32> -> !torch.vtensor<[1,128,64],f32>
  %1 = torch.aten.mul.Tensor %g, %0 : !torch.vtensor<[1,128,64],f32>, !torch.vtensor<[1,128,64],f32> -> !torch.vtensor<[1,128,64],f32>
  %2 = torch.aten.mul.Tensor %1, %u : !torch.vtensor<[1,128,64],f32>, !torch.vtensor<[1,128,64],f32> -> !torch.vtensor<[1,128,64],f32>
  return %2, %u : !torch.vtensor<[1,128,64],f32>, !torch.vtensor<[1,128,64],f32>
}

// -----

// Left alone: views of sources of different shapes (the views meet only at the op), a
// broadcast at the op, an operand that is not a view, and a view that moves elements between
// lanes (the last dim changes: on the device the op does that move, a view cannot).
// CHECK-LABEL: func.func @not_before_view
// CHECK:         %[[C:.*]] = torch.aten.view %a, %s2
// CHECK-NEXT:    torch.aten.neg %[[C]]
// CHECK:         torch.aten.add.Tensor %a3, %b3
// CHECK:         torch.aten.mul.Tensor %a3, %r
// CHECK:         torch.aten.sub.Tensor %a3, %x
func.func @not_before_view(%a: !torch.vtensor<[128,64],f32>, %b: !torch.vtensor<[2,64,64],f32>, %r: !torch.vtensor<[64],f32>, %x: !torch.vtensor<[1,128,64],f32>) -> (!torch.vtensor<[1,128,64],f32>, !torch.vtensor<[1,128,64],f32>, !torch.vtensor<[1,128,64],f32>, !torch.vtensor<[8192,1],f32>) {
  %int1 = torch.constant.int 1
  %int128 = torch.constant.int 128
  %int64 = torch.constant.int 64
  %int8192 = torch.constant.int 8192
  %s3 = torch.prim.ListConstruct %int1, %int128, %int64 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %s2 = torch.prim.ListConstruct %int8192, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %c = torch.aten.view %a, %s2 : !torch.vtensor<[128,64],f32>, !torch.list<int> -> !torch.vtensor<[8192,1],f32>
  %3 = torch.aten.neg %c : !torch.vtensor<[8192,1],f32> -> !torch.vtensor<[8192,1],f32>
  %a3 = torch.aten.view %a, %s3 : !torch.vtensor<[128,64],f32>, !torch.list<int> -> !torch.vtensor<[1,128,64],f32>
  %b3 = torch.aten.view %b, %s3 : !torch.vtensor<[2,64,64],f32>, !torch.list<int> -> !torch.vtensor<[1,128,64],f32>
  %0 = torch.aten.add.Tensor %a3, %b3, %int1 : !torch.vtensor<[1,128,64],f32>, !torch.vtensor<[1,128,64],f32>, !torch.int -> !torch.vtensor<[1,128,64],f32>
  %1 = torch.aten.mul.Tensor %a3, %r : !torch.vtensor<[1,128,64],f32>, !torch.vtensor<[64],f32> -> !torch.vtensor<[1,128,64],f32>
  %2 = torch.aten.sub.Tensor %a3, %x, %int1 : !torch.vtensor<[1,128,64],f32>, !torch.vtensor<[1,128,64],f32>, !torch.int -> !torch.vtensor<[1,128,64],f32>
  return %0, %1, %2, %3 : !torch.vtensor<[1,128,64],f32>, !torch.vtensor<[1,128,64],f32>, !torch.vtensor<[1,128,64],f32>, !torch.vtensor<[8192,1],f32>
}

// -----

// A view of a view reads the first view's source; a view to its source's own shape is dropped,
// unless the source is a graph input (no result aliases an input).
// CHECK-LABEL: func.func @view_of_view
// CHECK:         %[[R:.*]] = torch.aten.relu %y
// CHECK-NEXT:    %[[A:.*]] = torch.aten.view %y, %s1
// CHECK-NEXT:    %[[B:.*]] = torch.aten.view %y, %s2
// CHECK-NEXT:    func.return %[[R]], %[[A]], %[[B]]
func.func @view_of_view(%y: !torch.vtensor<[128,64],f32>) -> (!torch.vtensor<[128,64],f32>, !torch.vtensor<[8192],f32>, !torch.vtensor<[128,64],f32>) {
  %int1 = torch.constant.int 1
  %int128 = torch.constant.int 128
  %int64 = torch.constant.int 64
  %int8192 = torch.constant.int 8192
  %s3 = torch.prim.ListConstruct %int1, %int128, %int64 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %s2 = torch.prim.ListConstruct %int128, %int64 : (!torch.int, !torch.int) -> !torch.list<int>
  %s1 = torch.prim.ListConstruct %int8192 : (!torch.int) -> !torch.list<int>
  %r = torch.aten.relu %y : !torch.vtensor<[128,64],f32> -> !torch.vtensor<[128,64],f32>
  %0 = torch.aten.view %r, %s3 : !torch.vtensor<[128,64],f32>, !torch.list<int> -> !torch.vtensor<[1,128,64],f32>
  %1 = torch.aten.view %0, %s2 : !torch.vtensor<[1,128,64],f32>, !torch.list<int> -> !torch.vtensor<[128,64],f32>
  %2 = torch.aten.view %y, %s3 : !torch.vtensor<[128,64],f32>, !torch.list<int> -> !torch.vtensor<[1,128,64],f32>
  %3 = torch.aten.view %2, %s1 : !torch.vtensor<[1,128,64],f32>, !torch.list<int> -> !torch.vtensor<[8192],f32>
  %4 = torch.aten.view %2, %s2 : !torch.vtensor<[1,128,64],f32>, !torch.list<int> -> !torch.vtensor<[128,64],f32>
  return %1, %3, %4 : !torch.vtensor<[128,64],f32>, !torch.vtensor<[8192],f32>, !torch.vtensor<[128,64],f32>
}

// -----

// An attention head split of a Linear whose heads (32) are no whole sticks, going (through a
// scaling and a view) only to a batched matmul: computed transposed, w @ x^T + b[:, None] (the
// same products and sums), split as (H, D, B, S) and permuted to (B, H, S, D). On the device
// the result is sticked along the sequence (128 tokens: full sticks), so the split is a view.
// The scaling then moves before the split's permute and view (ElementwiseBeforeView), right
// after the bias add: on the device, one more step of the matmul's epilogue.
// CHECK-LABEL: func.func @heads_transposed
// CHECK:         %[[XT:.*]] = torch.aten.permute %x, %{{.*}} : !torch.vtensor<[128,384],f32>, !torch.list<int> -> !torch.vtensor<[384,128],f32>
// CHECK-NEXT:    %[[MM:.*]] = torch.aten.mm %w, %[[XT]] : {{.*}} -> !torch.vtensor<[384,128],f32>
// CHECK:         %[[B:.*]] = torch.aten.view %b, %{{.*}} : !torch.vtensor<[384],f32>, !torch.list<int> -> !torch.vtensor<[384,1],f32>
// CHECK:         %[[ADD:.*]] = torch.aten.add.Tensor %[[MM]], %[[B]], %{{.*}} : {{.*}} -> !torch.vtensor<[384,128],f32>
// CHECK:         %[[S:.*]] = torch.aten.mul.Scalar %[[ADD]], %float2 : !torch.vtensor<[384,128],f32>, !torch.float -> !torch.vtensor<[384,128],f32>
// CHECK:         %[[V:.*]] = torch.aten.view %[[S]], %{{.*}} -> !torch.vtensor<[12,32,1,128],f32>
// CHECK:         %[[P:.*]] = torch.aten.permute %[[V]], %{{.*}} -> !torch.vtensor<[1,12,128,32],f32>
// CHECK-NOT:     torch.aten.addmm
// CHECK:         torch.aten.bmm %{{.*}}
func.func @heads_transposed(%x: !torch.vtensor<[128,384],f32>, %w: !torch.vtensor<[384,384],f32>, %b: !torch.vtensor<[384],f32>, %k: !torch.vtensor<[12,32,128],f32>) -> !torch.vtensor<[12,128,128],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %int12 = torch.constant.int 12
  %int32 = torch.constant.int 32
  %int128 = torch.constant.int 128
  %t = torch.prim.ListConstruct %int1, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %wt = torch.aten.permute %w, %t : !torch.vtensor<[384,384],f32>, !torch.list<int> -> !torch.vtensor<[384,384],f32>
  %y = torch.aten.addmm %b, %x, %wt, %int1, %int1 : !torch.vtensor<[384],f32>, !torch.vtensor<[128,384],f32>, !torch.vtensor<[384,384],f32>, !torch.int, !torch.int -> !torch.vtensor<[128,384],f32>
  %s = torch.prim.ListConstruct %int1, %int128, %int12, %int32 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %v = torch.aten.view %y, %s : !torch.vtensor<[128,384],f32>, !torch.list<int> -> !torch.vtensor<[1,128,12,32],f32>
  %p = torch.prim.ListConstruct %int0, %int2, %int1, %int3 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %h = torch.aten.permute %v, %p : !torch.vtensor<[1,128,12,32],f32>, !torch.list<int> -> !torch.vtensor<[1,12,128,32],f32>
  %float2 = torch.constant.float 2.000000e+00
  %hs = torch.aten.mul.Scalar %h, %float2 : !torch.vtensor<[1,12,128,32],f32>, !torch.float -> !torch.vtensor<[1,12,128,32],f32>
  %s3 = torch.prim.ListConstruct %int12, %int128, %int32 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %q = torch.aten.view %hs, %s3 : !torch.vtensor<[1,12,128,32],f32>, !torch.list<int> -> !torch.vtensor<[12,128,32],f32>
  %sc = torch.aten.bmm %q, %k : !torch.vtensor<[12,128,32],f32>, !torch.vtensor<[12,32,128],f32> -> !torch.vtensor<[12,128,128],f32>
  return %sc : !torch.vtensor<[12,128,128],f32>
}

// -----

// The same heads read by an element-wise op (a rotary embedding, say) would make it work in
// the layout sticked along the sequence, with relayouts of its own: left alone.
// CHECK-LABEL: func.func @heads_read_elementwise
// CHECK:         torch.aten.addmm
// CHECK-NOT:     torch.aten.mm
func.func @heads_read_elementwise(%x: !torch.vtensor<[128,384],f32>, %w: !torch.vtensor<[384,384],f32>, %b: !torch.vtensor<[384],f32>) -> !torch.vtensor<[1,12,128,32],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %int12 = torch.constant.int 12
  %int32 = torch.constant.int 32
  %int128 = torch.constant.int 128
  %t = torch.prim.ListConstruct %int1, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %wt = torch.aten.permute %w, %t : !torch.vtensor<[384,384],f32>, !torch.list<int> -> !torch.vtensor<[384,384],f32>
  %y = torch.aten.addmm %b, %x, %wt, %int1, %int1 : !torch.vtensor<[384],f32>, !torch.vtensor<[128,384],f32>, !torch.vtensor<[384,384],f32>, !torch.int, !torch.int -> !torch.vtensor<[128,384],f32>
  %s = torch.prim.ListConstruct %int1, %int128, %int12, %int32 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %v = torch.aten.view %y, %s : !torch.vtensor<[128,384],f32>, !torch.list<int> -> !torch.vtensor<[1,128,12,32],f32>
  %p = torch.prim.ListConstruct %int0, %int2, %int1, %int3 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %h = torch.aten.permute %v, %p : !torch.vtensor<[1,128,12,32],f32>, !torch.list<int> -> !torch.vtensor<[1,12,128,32],f32>
  %r = torch.aten.relu %h : !torch.vtensor<[1,12,128,32],f32> -> !torch.vtensor<[1,12,128,32],f32>
  return %r : !torch.vtensor<[1,12,128,32],f32>
}

// -----

// Heads of 64 are whole sticks: the split is a view of the generic layout, left alone.
// CHECK-LABEL: func.func @heads_of_whole_sticks
// CHECK:         torch.aten.addmm
// CHECK-NOT:     torch.aten.mm
func.func @heads_of_whole_sticks(%x: !torch.vtensor<[128,384],f32>, %w: !torch.vtensor<[384,384],f32>, %b: !torch.vtensor<[384],f32>, %k: !torch.vtensor<[6,64,128],f32>) -> !torch.vtensor<[6,128,128],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %int6 = torch.constant.int 6
  %int64 = torch.constant.int 64
  %int128 = torch.constant.int 128
  %t = torch.prim.ListConstruct %int1, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %wt = torch.aten.permute %w, %t : !torch.vtensor<[384,384],f32>, !torch.list<int> -> !torch.vtensor<[384,384],f32>
  %y = torch.aten.addmm %b, %x, %wt, %int1, %int1 : !torch.vtensor<[384],f32>, !torch.vtensor<[128,384],f32>, !torch.vtensor<[384,384],f32>, !torch.int, !torch.int -> !torch.vtensor<[128,384],f32>
  %s = torch.prim.ListConstruct %int1, %int128, %int6, %int64 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %v = torch.aten.view %y, %s : !torch.vtensor<[128,384],f32>, !torch.list<int> -> !torch.vtensor<[1,128,6,64],f32>
  %p = torch.prim.ListConstruct %int0, %int2, %int1, %int3 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %h = torch.aten.permute %v, %p : !torch.vtensor<[1,128,6,64],f32>, !torch.list<int> -> !torch.vtensor<[1,6,128,64],f32>
  %s3 = torch.prim.ListConstruct %int6, %int128, %int64 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %q = torch.aten.view %h, %s3 : !torch.vtensor<[1,6,128,64],f32>, !torch.list<int> -> !torch.vtensor<[6,128,64],f32>
  %sc = torch.aten.bmm %q, %k : !torch.vtensor<[6,128,64],f32>, !torch.vtensor<[6,64,128],f32> -> !torch.vtensor<[6,128,128],f32>
  return %sc : !torch.vtensor<[6,128,128],f32>
}

// -----

// A scaling moves before a permute only onto an element-wise op's result (read by nothing
// else), which it then joins on the device; an activation stays after the permute, where its
// pointwise kernel does the moving (or reads what spyre-onchip-relayout transposed in LX).
// CHECK-LABEL: func.func @scale_before_permute
// CHECK:         %[[A:.*]] = torch.aten.add.Tensor %x, %y, %{{.*}} : {{.*}} -> !torch.vtensor<[64,128],f32>
// CHECK-NEXT:    %[[S:.*]] = torch.aten.mul.Scalar %[[A]], %{{.*}} : !torch.vtensor<[64,128],f32>, !torch.float -> !torch.vtensor<[64,128],f32>
// CHECK-NEXT:    %[[P:.*]] = torch.aten.permute %[[S]], %{{.*}} -> !torch.vtensor<[128,64],f32>
// CHECK:         %[[R:.*]] = torch.aten.relu %x : !torch.vtensor<[64,128],f32> -> !torch.vtensor<[64,128],f32>
// CHECK-NEXT:    %[[Q:.*]] = torch.aten.permute %[[R]], %{{.*}} -> !torch.vtensor<[128,64],f32>
// CHECK-NEXT:    %[[T:.*]] = torch.aten.relu %[[Q]] : !torch.vtensor<[128,64],f32> -> !torch.vtensor<[128,64],f32>
// CHECK-NEXT:    func.return %[[P]], %[[T]]
func.func @scale_before_permute(%x: !torch.vtensor<[64,128],f32>, %y: !torch.vtensor<[64,128],f32>) -> (!torch.vtensor<[128,64],f32>, !torch.vtensor<[128,64],f32>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %float = torch.constant.float 4.200000e-01
  %t = torch.prim.ListConstruct %int1, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %a = torch.aten.add.Tensor %x, %y, %int1 : !torch.vtensor<[64,128],f32>, !torch.vtensor<[64,128],f32>, !torch.int -> !torch.vtensor<[64,128],f32>
  %p = torch.aten.permute %a, %t : !torch.vtensor<[64,128],f32>, !torch.list<int> -> !torch.vtensor<[128,64],f32>
  %s = torch.aten.mul.Scalar %p, %float : !torch.vtensor<[128,64],f32>, !torch.float -> !torch.vtensor<[128,64],f32>
  %r0 = torch.aten.relu %x : !torch.vtensor<[64,128],f32> -> !torch.vtensor<[64,128],f32>
  %q = torch.aten.permute %r0, %t : !torch.vtensor<[64,128],f32>, !torch.list<int> -> !torch.vtensor<[128,64],f32>
  %r = torch.aten.relu %q : !torch.vtensor<[128,64],f32> -> !torch.vtensor<[128,64],f32>
  return %s, %r : !torch.vtensor<[128,64],f32>, !torch.vtensor<[128,64],f32>
}

// A scaling after a product stays after its view: it joins what follows (the mask's add, the
// softmax's row group), not the product.
// CHECK-LABEL: func.func @scale_after_product
// CHECK:         %[[M:.*]] = torch.aten.mm %x, %y
// CHECK-NEXT:    %[[V:.*]] = torch.aten.view %[[M]], %{{.*}} -> !torch.vtensor<[1,64,64],f32>
// CHECK-NEXT:    %[[D:.*]] = torch.aten.div.Scalar %[[V]], %{{.*}} -> !torch.vtensor<[1,64,64],f32>
// CHECK-NEXT:    func.return %[[D]]
func.func @scale_after_product(%x: !torch.vtensor<[64,128],f32>, %y: !torch.vtensor<[128,64],f32>) -> !torch.vtensor<[1,64,64],f32> {
  %int1 = torch.constant.int 1
  %int64 = torch.constant.int 64
  %float = torch.constant.float 4.000000e+00
  %s = torch.prim.ListConstruct %int1, %int64, %int64 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %m = torch.aten.mm %x, %y : !torch.vtensor<[64,128],f32>, !torch.vtensor<[128,64],f32> -> !torch.vtensor<[64,64],f32>
  %v = torch.aten.view %m, %s : !torch.vtensor<[64,64],f32>, !torch.list<int> -> !torch.vtensor<[1,64,64],f32>
  %d = torch.aten.div.Scalar %v, %float : !torch.vtensor<[1,64,64],f32>, !torch.float -> !torch.vtensor<[1,64,64],f32>
  return %d : !torch.vtensor<[1,64,64],f32>
}

// -----

// GQA's repeat_kv: 2 KV heads expanded to 6 for the scores' product. The 3 query heads of a
// group become rows of one product with their shared K, scaled and transposed on its 2 heads.
// CHECK-LABEL: func.func @grouped_heads
// CHECK-NOT:     torch.aten.unsqueeze
// CHECK-NOT:     torch.aten.expand
// CHECK-NOT:     torch.aten.clone
// CHECK:         %[[T:.*]] = torch.aten.permute %k, %{{.*}} -> !torch.vtensor<[1,2,64,40],f32>
// CHECK-NEXT:    %[[S:.*]] = torch.aten.mul.Scalar %[[T]], %{{.*}} -> !torch.vtensor<[1,2,64,40],f32>
// CHECK:         %[[K:.*]] = torch.aten.view %[[S]], %{{.*}} -> !torch.vtensor<[2,64,40],f32>
// CHECK:         %[[Q:.*]] = torch.aten.view %q, %{{.*}} -> !torch.vtensor<[2,24,64],f32>
// CHECK-NEXT:    %[[P:.*]] = torch.aten.bmm %[[Q]], %[[K]] : {{.*}} -> !torch.vtensor<[2,24,40],f32>
// CHECK:         %[[R:.*]] = torch.aten.view %[[P]], %{{.*}} -> !torch.vtensor<[6,8,40],f32>
// CHECK-NEXT:    func.return %[[R]]
func.func @grouped_heads(%q: !torch.vtensor<[6,8,64],f32>, %k: !torch.vtensor<[1,2,40,64],f32>) -> !torch.vtensor<[6,8,40],f32> {
  %false = torch.constant.bool false
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %int6 = torch.constant.int 6
  %int40 = torch.constant.int 40
  %int64 = torch.constant.int 64
  %scale = torch.constant.float 3.535534e-01
  %u = torch.aten.unsqueeze %k, %int2 : !torch.vtensor<[1,2,40,64],f32>, !torch.int -> !torch.vtensor<[1,2,1,40,64],f32>
  %wide = torch.prim.ListConstruct %int1, %int2, %int3, %int40, %int64 : (!torch.int, !torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %e = torch.aten.expand %u, %wide, %false : !torch.vtensor<[1,2,1,40,64],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[1,2,3,40,64],f32>
  %c = torch.aten.clone %e, %int0 : !torch.vtensor<[1,2,3,40,64],f32>, !torch.int -> !torch.vtensor<[1,2,3,40,64],f32>
  %heads = torch.prim.ListConstruct %int1, %int6, %int40, %int64 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %h = torch.aten.view %c, %heads : !torch.vtensor<[1,2,3,40,64],f32>, !torch.list<int> -> !torch.vtensor<[1,6,40,64],f32>
  %swap = torch.prim.ListConstruct %int0, %int1, %int3, %int2 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %t = torch.aten.permute %h, %swap : !torch.vtensor<[1,6,40,64],f32>, !torch.list<int> -> !torch.vtensor<[1,6,64,40],f32>
  %s = torch.aten.mul.Scalar %t, %scale : !torch.vtensor<[1,6,64,40],f32>, !torch.float -> !torch.vtensor<[1,6,64,40],f32>
  %flat = torch.prim.ListConstruct %int6, %int64, %int40 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %b = torch.aten.view %s, %flat : !torch.vtensor<[1,6,64,40],f32>, !torch.list<int> -> !torch.vtensor<[6,64,40],f32>
  %r = torch.aten.bmm %q, %b : !torch.vtensor<[6,8,64],f32>, !torch.vtensor<[6,64,40],f32> -> !torch.vtensor<[6,8,40],f32>
  return %r : !torch.vtensor<[6,8,40],f32>
}

// -----

// A rotary embedding's rotate_half, cat(-x[..., 32:], x[..., :32]) on 8 heads of 64, read only
// by a product that contracts along it (as q by the attention scores): the pieces end inside a
// stick, and x is at most 4 sticks wide: one product by the signed permutation, a 64 x 64
// constant (printed in hex) whose row j holds -1 at lane 32 + j (j < 32) or 1 at lane j - 32.
// CHECK-LABEL: func.func @rotate_half
// CHECK:         %[[P:.*]] = torch.vtensor.literal(dense<"0x{{[0-9A-F]+}}"> : tensor<64x64xf32>) : !torch.vtensor<[64,64],f32>
// CHECK:         %[[R:.*]] = torch.aten.linear %x, %[[P]], %{{.*}} : {{.*}} -> !torch.vtensor<[1,8,1,64],f32>
// CHECK-NEXT:    %[[S:.*]] = torch.aten.linear %[[R]], %k, %{{.*}}
// CHECK-NEXT:    func.return %[[S]]
// CHECK-NOT:     torch.aten.cat
func.func @rotate_half(%x: !torch.vtensor<[1,8,1,64],f32>, %k: !torch.vtensor<[16,64],f32>) -> !torch.vtensor<[1,8,1,16],f32> {
  %int-1 = torch.constant.int -1
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int3 = torch.constant.int 3
  %int32 = torch.constant.int 32
  %none = torch.constant.none
  %end = torch.constant.int 9223372036854775807
  %lo = torch.aten.slice.Tensor %x, %int3, %int0, %int32, %int1 : !torch.vtensor<[1,8,1,64],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,8,1,32],f32>
  %hi = torch.aten.slice.Tensor %x, %int3, %int32, %end, %int1 : !torch.vtensor<[1,8,1,64],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,8,1,32],f32>
  %neg = torch.aten.neg %hi : !torch.vtensor<[1,8,1,32],f32> -> !torch.vtensor<[1,8,1,32],f32>
  %l = torch.prim.ListConstruct %neg, %lo : (!torch.vtensor<[1,8,1,32],f32>, !torch.vtensor<[1,8,1,32],f32>) -> !torch.list<vtensor>
  %r = torch.aten.cat %l, %int-1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[1,8,1,64],f32>
  %s = torch.aten.linear %r, %k, %none : !torch.vtensor<[1,8,1,64],f32>, !torch.vtensor<[16,64],f32>, !torch.none -> !torch.vtensor<[1,8,1,16],f32>
  return %s : !torch.vtensor<[1,8,1,16],f32>
}

// -----

// The same rotate_half returned: its reader (a KV cache, the caller) would see a NaN spread
// over the row by the product, so the lane moves stay moves: x is swapped once with the heads'
// dim (the last other dim of extent > 1), its halves are boxes of whole sticks there, and the
// result is swapped back.
// CHECK-LABEL: func.func @rotate_half_returned
// CHECK:         %[[T:.*]] = torch.aten.transpose.int %x, %[[P:.*]], %[[L:.*]] : {{.*}} -> !torch.vtensor<[1,64,1,8],f32>
// CHECK:         %[[HI:.*]] = torch.aten.slice.Tensor %[[T]], %[[P]], %{{.*}} -> !torch.vtensor<[1,32,1,8],f32>
// CHECK-NEXT:    %[[N:.*]] = torch.aten.neg %[[HI]] : {{.*}} -> !torch.vtensor<[1,32,1,8],f32>
// CHECK:         %[[LO:.*]] = torch.aten.slice.Tensor %[[T]], %[[P]], %{{.*}} -> !torch.vtensor<[1,32,1,8],f32>
// CHECK-NEXT:    %[[LIST:.*]] = torch.prim.ListConstruct %[[N]], %[[LO]]
// CHECK-NEXT:    %[[C:.*]] = torch.aten.cat %[[LIST]], %[[P]] : {{.*}} -> !torch.vtensor<[1,64,1,8],f32>
// CHECK-NEXT:    %[[R:.*]] = torch.aten.transpose.int %[[C]], %[[P]], %[[L]] : {{.*}} -> !torch.vtensor<[1,8,1,64],f32>
// CHECK-NEXT:    func.return %[[R]]
func.func @rotate_half_returned(%x: !torch.vtensor<[1,8,1,64],f32>) -> !torch.vtensor<[1,8,1,64],f32> {
  %int-1 = torch.constant.int -1
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int3 = torch.constant.int 3
  %int32 = torch.constant.int 32
  %end = torch.constant.int 9223372036854775807
  %lo = torch.aten.slice.Tensor %x, %int3, %int0, %int32, %int1 : !torch.vtensor<[1,8,1,64],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,8,1,32],f32>
  %hi = torch.aten.slice.Tensor %x, %int3, %int32, %end, %int1 : !torch.vtensor<[1,8,1,64],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,8,1,32],f32>
  %neg = torch.aten.neg %hi : !torch.vtensor<[1,8,1,32],f32> -> !torch.vtensor<[1,8,1,32],f32>
  %l = torch.prim.ListConstruct %neg, %lo : (!torch.vtensor<[1,8,1,32],f32>, !torch.vtensor<[1,8,1,32],f32>) -> !torch.list<vtensor>
  %r = torch.aten.cat %l, %int-1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[1,8,1,64],f32>
  return %r : !torch.vtensor<[1,8,1,64],f32>
}

// -----

// GPT-J's rotate_every_two on 4 heads of 8, read by a contracting product: stack((-x[..., 1::2],
// x[..., ::2]), -1) flattened, the pieces interleaved lane by lane: one product by the signed
// permutation (row 0 takes -x[1], row 1 x[0], ...).
// CHECK-LABEL: func.func @rotate_every_two
// CHECK:         %[[P:.*]] = torch.vtensor.literal(dense<{{\[\[}}0.000000e+00, -1.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [1.000000e+00, 0.000000e+00, {{.*}}> : tensor<8x8xf32>) : !torch.vtensor<[8,8],f32>
// CHECK:         %[[R:.*]] = torch.aten.linear %x, %[[P]], %{{.*}} : {{.*}} -> !torch.vtensor<[1,23,4,8],f32>
// CHECK-NEXT:    torch.aten.linear %[[R]], %k
// CHECK-NOT:     torch.aten.cat
func.func @rotate_every_two(%x: !torch.vtensor<[1,23,4,8],f32>, %k: !torch.vtensor<[16,8],f32>) -> !torch.vtensor<[1,23,4,16],f32> {
  %none = torch.constant.none
  %int-1 = torch.constant.int -1
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %int4 = torch.constant.int 4
  %int8 = torch.constant.int 8
  %int23 = torch.constant.int 23
  %end = torch.constant.int 9223372036854775807
  %even = torch.aten.slice.Tensor %x, %int3, %int0, %end, %int2 : !torch.vtensor<[1,23,4,8],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,23,4,4],f32>
  %odd = torch.aten.slice.Tensor %x, %int3, %int1, %end, %int2 : !torch.vtensor<[1,23,4,8],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,23,4,4],f32>
  %neg = torch.aten.neg %odd : !torch.vtensor<[1,23,4,4],f32> -> !torch.vtensor<[1,23,4,4],f32>
  %a = torch.aten.unsqueeze %neg, %int4 : !torch.vtensor<[1,23,4,4],f32>, !torch.int -> !torch.vtensor<[1,23,4,4,1],f32>
  %b = torch.aten.unsqueeze %even, %int4 : !torch.vtensor<[1,23,4,4],f32>, !torch.int -> !torch.vtensor<[1,23,4,4,1],f32>
  %l = torch.prim.ListConstruct %a, %b : (!torch.vtensor<[1,23,4,4,1],f32>, !torch.vtensor<[1,23,4,4,1],f32>) -> !torch.list<vtensor>
  %c = torch.aten.cat %l, %int-1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[1,23,4,4,2],f32>
  %shape = torch.prim.ListConstruct %int1, %int23, %int4, %int8 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %r = torch.aten.view %c, %shape : !torch.vtensor<[1,23,4,4,2],f32>, !torch.list<int> -> !torch.vtensor<[1,23,4,8],f32>
  %s = torch.aten.linear %r, %k, %none : !torch.vtensor<[1,23,4,8],f32>, !torch.vtensor<[16,8],f32>, !torch.none -> !torch.vtensor<[1,23,4,16],f32>
  return %s : !torch.vtensor<[1,23,4,16],f32>
}

// -----

// The same on heads of 320, wider than 4 sticks (a 320 x 320 constant would not pay): the
// lane moves stay moves, even read only by a contracting product.
// CHECK-LABEL: func.func @rotate_half_of_wide_heads
// CHECK:         %[[T:.*]] = torch.aten.transpose.int %x, %[[P:.*]], %[[L:.*]] : {{.*}} -> !torch.vtensor<[1,320,1,8],f32>
// CHECK:         %[[HI:.*]] = torch.aten.slice.Tensor %[[T]], %[[P]], %{{.*}} -> !torch.vtensor<[1,160,1,8],f32>
// CHECK-NEXT:    %[[N:.*]] = torch.aten.neg %[[HI]] : {{.*}} -> !torch.vtensor<[1,160,1,8],f32>
// CHECK:         %[[LO:.*]] = torch.aten.slice.Tensor %[[T]], %[[P]], %{{.*}} -> !torch.vtensor<[1,160,1,8],f32>
// CHECK-NEXT:    %[[LIST:.*]] = torch.prim.ListConstruct %[[N]], %[[LO]]
// CHECK-NEXT:    %[[C:.*]] = torch.aten.cat %[[LIST]], %[[P]] : {{.*}} -> !torch.vtensor<[1,320,1,8],f32>
// CHECK-NEXT:    %[[R:.*]] = torch.aten.transpose.int %[[C]], %[[P]], %[[L]] : {{.*}} -> !torch.vtensor<[1,8,1,320],f32>
// CHECK-NEXT:    torch.aten.linear %[[R]], %k
func.func @rotate_half_of_wide_heads(%x: !torch.vtensor<[1,8,1,320],f32>, %k: !torch.vtensor<[16,320],f32>) -> !torch.vtensor<[1,8,1,16],f32> {
  %none = torch.constant.none
  %int-1 = torch.constant.int -1
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int3 = torch.constant.int 3
  %int160 = torch.constant.int 160
  %end = torch.constant.int 9223372036854775807
  %lo = torch.aten.slice.Tensor %x, %int3, %int0, %int160, %int1 : !torch.vtensor<[1,8,1,320],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,8,1,160],f32>
  %hi = torch.aten.slice.Tensor %x, %int3, %int160, %end, %int1 : !torch.vtensor<[1,8,1,320],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,8,1,160],f32>
  %neg = torch.aten.neg %hi : !torch.vtensor<[1,8,1,160],f32> -> !torch.vtensor<[1,8,1,160],f32>
  %l = torch.prim.ListConstruct %neg, %lo : (!torch.vtensor<[1,8,1,160],f32>, !torch.vtensor<[1,8,1,160],f32>) -> !torch.list<vtensor>
  %r = torch.aten.cat %l, %int-1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[1,8,1,320],f32>
  %s = torch.aten.linear %r, %k, %none : !torch.vtensor<[1,8,1,320],f32>, !torch.vtensor<[16,320],f32>, !torch.none -> !torch.vtensor<[1,8,1,16],f32>
  return %s : !torch.vtensor<[1,8,1,16],f32>
}

// -----

// Halves of whole sticks are DMA copies as they are, and a row with no other dim of extent > 1
// has nothing to swap with (returned, its lane moves are no product either): both left alone.
// CHECK-LABEL: func.func @nothing_to_swap
// CHECK-NOT:     torch.aten.transpose.int
// CHECK-NOT:     torch.aten.linear
func.func @nothing_to_swap(%x: !torch.vtensor<[4,128],f32>, %y: !torch.vtensor<[1,1,64],f32>) -> (!torch.vtensor<[4,128],f32>, !torch.vtensor<[1,1,64],f32>) {
  %int-1 = torch.constant.int -1
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int32 = torch.constant.int 32
  %int64 = torch.constant.int 64
  %end = torch.constant.int 9223372036854775807
  %lo = torch.aten.slice.Tensor %x, %int-1, %int0, %int64, %int1 : !torch.vtensor<[4,128],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4,64],f32>
  %hi = torch.aten.slice.Tensor %x, %int-1, %int64, %end, %int1 : !torch.vtensor<[4,128],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4,64],f32>
  %neg = torch.aten.neg %hi : !torch.vtensor<[4,64],f32> -> !torch.vtensor<[4,64],f32>
  %l = torch.prim.ListConstruct %neg, %lo : (!torch.vtensor<[4,64],f32>, !torch.vtensor<[4,64],f32>) -> !torch.list<vtensor>
  %r = torch.aten.cat %l, %int-1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[4,128],f32>
  %ylo = torch.aten.slice.Tensor %y, %int-1, %int0, %int32, %int1 : !torch.vtensor<[1,1,64],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,1,32],f32>
  %yhi = torch.aten.slice.Tensor %y, %int-1, %int32, %end, %int1 : !torch.vtensor<[1,1,64],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,1,32],f32>
  %m = torch.prim.ListConstruct %yhi, %ylo : (!torch.vtensor<[1,1,32],f32>, !torch.vtensor<[1,1,32],f32>) -> !torch.list<vtensor>
  %s = torch.aten.cat %m, %int-1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[1,1,64],f32>
  return %r, %s : !torch.vtensor<[4,128],f32>, !torch.vtensor<[1,1,64],f32>
}

// -----

// view.dtype to the dtype x has -> x (vLLM's vocabulary-parallel embedding); to another stays.
// CHECK-LABEL: func.func @view_as_own_dtype
// CHECK-NEXT:    %{{.*}} = torch.constant.int 5
// CHECK-NEXT:    %[[H:.*]] = torch.aten.view.dtype %x, %{{.*}} : !torch.vtensor<[4,64],f32>, !torch.int -> !torch.vtensor<[4,128],f16>
// CHECK-NEXT:    func.return %x, %[[H]]
func.func @view_as_own_dtype(%x: !torch.vtensor<[4,64],f32>) -> (!torch.vtensor<[4,64],f32>, !torch.vtensor<[4,128],f16>) {
  %int6 = torch.constant.int 6
  %int5 = torch.constant.int 5
  %0 = torch.aten.view.dtype %x, %int6 : !torch.vtensor<[4,64],f32>, !torch.int -> !torch.vtensor<[4,64],f32>
  %1 = torch.aten.view.dtype %x, %int5 : !torch.vtensor<[4,64],f32>, !torch.int -> !torch.vtensor<[4,128],f16>
  return %0, %1 : !torch.vtensor<[4,64],f32>, !torch.vtensor<[4,128],f16>
}
