// RUN: spyre-opt %s -p cse --split-input-file | filecheck %s
// xDSL's cse at the torch level (spyre-pipeline runs it after torch-adapt): equal pure
// computations (same op, operands, attributes and result types) become one value. The torch
// ops without a dedicated class are pure when their name is in torch.PURE_OPS; random,
// uninitialised and unlisted ops keep unknown effects and are never merged. (That the merged
// where is one launch read by both adds, end to end: test/python/transforms/test_cse.py.)

// SDPA's mask, decomposed per layer: two layers compute where(mask, 0, -inf) from their own
// constants and scalar tensors. Equal constants merge, then the scalar tensors, then the wheres.
// CHECK-LABEL: func.func @mask_per_layer
// CHECK:         %[[NINF:.*]] = torch.constant.float 0xFFF0000000000000
// CHECK-NOT:     torch.constant.float 0xFFF0000000000000
// CHECK:         %[[Z:.*]] = torch.aten.scalar_tensor %float0,
// CHECK-NEXT:    %[[N:.*]] = torch.aten.scalar_tensor %[[NINF]],
// CHECK-NEXT:    %[[W:.*]] = torch.aten.where.self %mask, %[[Z]], %[[N]]
// CHECK-NEXT:    %[[A:.*]] = torch.aten.add.Tensor %s0, %[[W]], %int1
// CHECK-NEXT:    %[[B:.*]] = torch.aten.add.Tensor %s1, %[[W]], %int1
// CHECK-NEXT:    func.return %[[A]], %[[B]]
func.func @mask_per_layer(%mask: !torch.vtensor<[1,1,64,64],i1>, %s0: !torch.vtensor<[1,4,64,64],f32>, %s1: !torch.vtensor<[1,4,64,64],f32>) -> (!torch.vtensor<[1,4,64,64],f32>, !torch.vtensor<[1,4,64,64],f32>) {
  %none = torch.constant.none
  %int6 = torch.constant.int 6
  %int1 = torch.constant.int 1
  %cpu = torch.constant.device "cpu"
  %float0 = torch.constant.float 0.000000e+00
  %ninf0 = torch.constant.float 0xFFF0000000000000
  %z0 = torch.aten.scalar_tensor %float0, %int6, %none, %cpu, %none : !torch.float, !torch.int, !torch.none, !torch.Device, !torch.none -> !torch.vtensor<[],f32>
  %n0 = torch.aten.scalar_tensor %ninf0, %int6, %none, %cpu, %none : !torch.float, !torch.int, !torch.none, !torch.Device, !torch.none -> !torch.vtensor<[],f32>
  %w0 = torch.aten.where.self %mask, %z0, %n0 : !torch.vtensor<[1,1,64,64],i1>, !torch.vtensor<[],f32>, !torch.vtensor<[],f32> -> !torch.vtensor<[1,1,64,64],f32>
  %a = torch.aten.add.Tensor %s0, %w0, %int1 : !torch.vtensor<[1,4,64,64],f32>, !torch.vtensor<[1,1,64,64],f32>, !torch.int -> !torch.vtensor<[1,4,64,64],f32>
  %ninf1 = torch.constant.float 0xFFF0000000000000
  %z1 = torch.aten.scalar_tensor %float0, %int6, %none, %cpu, %none : !torch.float, !torch.int, !torch.none, !torch.Device, !torch.none -> !torch.vtensor<[],f32>
  %n1 = torch.aten.scalar_tensor %ninf1, %int6, %none, %cpu, %none : !torch.float, !torch.int, !torch.none, !torch.Device, !torch.none -> !torch.vtensor<[],f32>
  %w1 = torch.aten.where.self %mask, %z1, %n1 : !torch.vtensor<[1,1,64,64],i1>, !torch.vtensor<[],f32>, !torch.vtensor<[],f32> -> !torch.vtensor<[1,1,64,64],f32>
  %b = torch.aten.add.Tensor %s1, %w1, %int1 : !torch.vtensor<[1,4,64,64],f32>, !torch.vtensor<[1,1,64,64],f32>, !torch.int -> !torch.vtensor<[1,4,64,64],f32>
  return %a, %b : !torch.vtensor<[1,4,64,64],f32>, !torch.vtensor<[1,4,64,64],f32>
}

// -----

// Two weights of one shape are different values, even with equal bytes (arguments, or literals
// with their own blobs): their products stay apart. Equal inline literals are one constant.
// CHECK-LABEL: func.func @weights_stay_apart
// CHECK:         %[[L0:.*]] = torch.vtensor.literal(dense_resource<blob0>
// CHECK-NEXT:    %[[L1:.*]] = torch.vtensor.literal(dense_resource<blob1>
// CHECK-NEXT:    %[[C:.*]] = torch.vtensor.literal(dense<2.000000e+00> : tensor<f32>)
// CHECK-NEXT:    %[[M0:.*]] = torch.aten.mm %x, %w0
// CHECK-NEXT:    %[[M1:.*]] = torch.aten.mm %x, %w1
// CHECK-NEXT:    %[[M2:.*]] = torch.aten.mm %x, %[[L0]]
// CHECK-NEXT:    %[[M3:.*]] = torch.aten.mm %x, %[[L1]]
// CHECK-NEXT:    %[[P:.*]] = torch.aten.mul.Tensor %x, %[[C]]
// CHECK-NEXT:    func.return %[[M0]], %[[M1]], %[[M2]], %[[M3]], %[[P]], %[[P]] :
func.func @weights_stay_apart(%x: !torch.vtensor<[4,8],f32>, %w0: !torch.vtensor<[8,8],f32>, %w1: !torch.vtensor<[8,8],f32>) -> (!torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>) {
  %l0 = torch.vtensor.literal(dense_resource<blob0> : tensor<8x8xf32>) : !torch.vtensor<[8,8],f32>
  %l1 = torch.vtensor.literal(dense_resource<blob1> : tensor<8x8xf32>) : !torch.vtensor<[8,8],f32>
  %c0 = torch.vtensor.literal(dense<2.000000e+00> : tensor<f32>) : !torch.vtensor<[],f32>
  %c1 = torch.vtensor.literal(dense<2.000000e+00> : tensor<f32>) : !torch.vtensor<[],f32>
  %0 = torch.aten.mm %x, %w0 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[8,8],f32> -> !torch.vtensor<[4,8],f32>
  %1 = torch.aten.mm %x, %w1 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[8,8],f32> -> !torch.vtensor<[4,8],f32>
  %2 = torch.aten.mm %x, %l0 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[8,8],f32> -> !torch.vtensor<[4,8],f32>
  %3 = torch.aten.mm %x, %l1 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[8,8],f32> -> !torch.vtensor<[4,8],f32>
  %4 = torch.aten.mul.Tensor %x, %c0 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[],f32> -> !torch.vtensor<[4,8],f32>
  %5 = torch.aten.mul.Tensor %x, %c1 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[],f32> -> !torch.vtensor<[4,8],f32>
  return %0, %1, %2, %3, %4, %5 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>
}

{-#
  dialect_resources: {
    builtin: {
      blob0: "0x040000000000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F",
      blob1: "0x040000000000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F"
    }
  }
#-}

// -----

// Random, uninitialised and in-place ops are not pure functions of their operands: two equal
// calls stay two, and unused ones stay (a pure op without uses would be erased). The function
// returns nothing, so that running it (bench/fuzz.py runs every lit input) compares no random
// or uninitialised values with a reference.
// CHECK-LABEL: func.func @impure_stay_apart
// CHECK-COUNT-2: torch.aten.rand_like %x
// CHECK-COUNT-2: torch.aten.bernoulli.p %x
// CHECK-COUNT-2: torch.aten.empty_like %x
// CHECK-COUNT-2: torch.aten.add_.Tensor %x, %x
// CHECK-NEXT:    func.return{{$}}
func.func @impure_stay_apart(%x: !torch.vtensor<[4,8],f32>) {
  %none = torch.constant.none
  %int1 = torch.constant.int 1
  %p = torch.constant.float 5.000000e-01
  %0 = torch.aten.rand_like %x, %none, %none, %none, %none, %none : !torch.vtensor<[4,8],f32>, !torch.none, !torch.none, !torch.none, !torch.none, !torch.none -> !torch.vtensor<[4,8],f32>
  %1 = torch.aten.rand_like %x, %none, %none, %none, %none, %none : !torch.vtensor<[4,8],f32>, !torch.none, !torch.none, !torch.none, !torch.none, !torch.none -> !torch.vtensor<[4,8],f32>
  %2 = torch.aten.bernoulli.p %x, %p, %none : !torch.vtensor<[4,8],f32>, !torch.float, !torch.none -> !torch.vtensor<[4,8],f32>
  %3 = torch.aten.bernoulli.p %x, %p, %none : !torch.vtensor<[4,8],f32>, !torch.float, !torch.none -> !torch.vtensor<[4,8],f32>
  %4 = torch.aten.empty_like %x, %none, %none, %none, %none, %none : !torch.vtensor<[4,8],f32>, !torch.none, !torch.none, !torch.none, !torch.none, !torch.none -> !torch.vtensor<[4,8],f32>
  %5 = torch.aten.empty_like %x, %none, %none, %none, %none, %none : !torch.vtensor<[4,8],f32>, !torch.none, !torch.none, !torch.none, !torch.none, !torch.none -> !torch.vtensor<[4,8],f32>
  %6 = torch.aten.add_.Tensor %x, %x, %int1 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>, !torch.int -> !torch.vtensor<[4,8],f32>
  %7 = torch.aten.add_.Tensor %x, %x, %int1 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>, !torch.int -> !torch.vtensor<[4,8],f32>
  return
}
