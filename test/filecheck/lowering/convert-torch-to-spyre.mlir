// RUN: spyre-opt %s -p convert-torch-to-spyre | filecheck %s
// Op selection and the host/device border: every torch op becomes spyre ops on device tensors
// (generic stick layouts), transposes and reshapes become free views.

// CHECK-LABEL: func.func @linear3d(%x: tensor<2x3x128xf32>, %w: tensor<64x128xf32>, %b: tensor<64xf32>) -> tensor<2x3x64xf32>
// CHECK-NEXT:    %[[X:.*]] = spyre.to_device %x : tensor<2x3x128xf32> -> tensor<2x3x128xf16, #spyre.layout<device_size = [3, 2, 2, 64], stride_map = [128, 64, 384, 1]>>
// CHECK-NEXT:    %[[W:.*]] = spyre.to_device %w : tensor<64x128xf32> -> tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>
// CHECK-NEXT:    %[[B:.*]] = spyre.to_device %b
// The leading dims fold into rows; W.T is the same bytes read with transposed strides.
// CHECK-NEXT:    %[[X2:.*]] = spyre.reshape %[[X]] : {{.*}} -> tensor<6x128xf16, #spyre.layout<device_size = [3, 2, 2, 64], stride_map = [128, 64, 384, 1]>>
// CHECK-NEXT:    %[[WT:.*]] = spyre.permute %[[W]] permutation [1, 0] : {{.*}} -> tensor<128x64xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [4096, 1, 64]>>
// CHECK-NEXT:    %[[MM:.*]] = spyre.matmul %[[X2]], %[[WT]] : {{.*}} -> tensor<6x64xf16, #spyre.layout<device_size = [1, 6, 64], stride_map = [64, 64, 1]>>
// CHECK-NEXT:    %[[PW:.*]] = spyre.pointwise %[[MM]], %[[B]]
// CHECK:           arith.addf
// CHECK:         %[[R:.*]] = spyre.reshape %[[PW]] : {{.*}} -> tensor<2x3x64xf16
// CHECK-NEXT:    %[[H:.*]] = spyre.from_device %[[R]] : {{.*}} -> tensor<2x3x64xf32>
// CHECK-NEXT:    func.return %[[H]] : tensor<2x3x64xf32>
func.func @linear3d(%x: !torch.vtensor<[2,3,128],f32>, %w: !torch.vtensor<[64,128],f32>, %b: !torch.vtensor<[64],f32>) -> !torch.vtensor<[2,3,64],f32> {
  %0 = torch.aten.linear %x, %w, %b : !torch.vtensor<[2,3,128],f32>, !torch.vtensor<[64,128],f32>, !torch.vtensor<[64],f32> -> !torch.vtensor<[2,3,64],f32>
  return %0 : !torch.vtensor<[2,3,64],f32>
}
// beta * bias + alpha * (x @ w): alpha and beta fold into the bias pointwise body.
// CHECK-LABEL: func.func @addmm
// CHECK:         %[[MM:.*]] = spyre.matmul
// CHECK-NEXT:    spyre.pointwise %[[MM]], %{{.*}} :
// CHECK-NEXT:    ^{{.*}}(%[[C:.*]]: f32, %[[BIAS:.*]]: f32):
// CHECK-NEXT:      %[[ALPHA:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:      %[[CA:.*]] = arith.mulf %[[C]], %[[ALPHA]] : f32
// CHECK-NEXT:      %[[BETA:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:      %[[BB:.*]] = arith.mulf %[[BIAS]], %[[BETA]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[CA]], %[[BB]] : f32
// CHECK-NEXT:      spyre.yield %[[S]] : f32
func.func @addmm(%b: !torch.vtensor<[64],f32>, %x: !torch.vtensor<[4,128],f32>, %w: !torch.vtensor<[128,64],f32>) -> !torch.vtensor<[4,64],f32> {
  %float2 = torch.constant.float 2.000000e+00
  %float5 = torch.constant.float 5.000000e-01
  %0 = torch.aten.addmm %b, %x, %w, %float5, %float2 : !torch.vtensor<[64],f32>, !torch.vtensor<[4,128],f32>, !torch.vtensor<[128,64],f32>, !torch.float, !torch.float -> !torch.vtensor<[4,64],f32>
  return %0 : !torch.vtensor<[4,64],f32>
}
// sub.Tensor with alpha = 2 broadcasts y (shape [100]); x * 1 folds away; clone is its input.
// CHECK-LABEL: func.func @pointwise
// CHECK:         spyre.pointwise %{{.*}}, %{{.*}} : (tensor<4x100xf16, {{.*}}>, tensor<100xf16, {{.*}}>) -> tensor<4x100xf16
// CHECK:           arith.constant 2.000000e+00
// CHECK-NEXT:      arith.mulf
// CHECK-NEXT:      arith.subf
// CHECK-NOT:       arith.constant 1.000000e+00 : f32
// CHECK:           arith.constant 3.000000e+00
// CHECK-NEXT:      arith.addf
// CHECK:           arith.maximumf
// CHECK:           arith.constant 4.471500e-02
// CHECK:           math.tanh
// CHECK:         spyre.from_device
// CHECK-NOT:     torch.
func.func @pointwise(%x: !torch.vtensor<[4,100],f32>, %y: !torch.vtensor<[100],f32>) -> !torch.vtensor<[4,100],f32> {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %float3 = torch.constant.float 3.000000e+00
  %str = torch.constant.str "tanh"
  %0 = torch.aten.sub.Tensor %x, %y, %int2 : !torch.vtensor<[4,100],f32>, !torch.vtensor<[100],f32>, !torch.int -> !torch.vtensor<[4,100],f32>
  %1 = torch.aten.mul.Scalar %0, %int1 : !torch.vtensor<[4,100],f32>, !torch.int -> !torch.vtensor<[4,100],f32>
  %2 = torch.aten.add.Scalar %1, %float3, %int1 : !torch.vtensor<[4,100],f32>, !torch.float, !torch.int -> !torch.vtensor<[4,100],f32>
  %3 = torch.aten.relu %2 : !torch.vtensor<[4,100],f32> -> !torch.vtensor<[4,100],f32>
  %4 = torch.aten.gelu %3, %str : !torch.vtensor<[4,100],f32>, !torch.str -> !torch.vtensor<[4,100],f32>
  %5 = torch.aten.clone %4, %int1 : !torch.vtensor<[4,100],f32>, !torch.int -> !torch.vtensor<[4,100],f32>
  return %5 : !torch.vtensor<[4,100],f32>
}
// CHECK-LABEL: func.func @views
// CHECK:         spyre.permute %{{.*}} permutation [1, 0, 2]
// CHECK-NEXT:    spyre.reshape
// CHECK-NEXT:    spyre.from_device
func.func @views(%x: !torch.vtensor<[2,64,128],f32>) -> !torch.vtensor<[128,128],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %0 = torch.aten.transpose.int %x, %int0, %int1 : !torch.vtensor<[2,64,128],f32>, !torch.int, !torch.int -> !torch.vtensor<[64,2,128],f32>
  %int128 = torch.constant.int 128
  %l = torch.prim.ListConstruct %int128, %int128 : (!torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.view %0, %l : !torch.vtensor<[64,2,128],f32>, !torch.list<int> -> !torch.vtensor<[128,128],f32>
  return %1 : !torch.vtensor<[128,128],f32>
}
