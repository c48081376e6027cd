// RUN: spyre-opt %s -p 'convert-torch-to-spyre,spyre-propagate-layouts,spyre-fuse' | filecheck %s
// A decoder's residual add after o_proj, then the RMS norm of the sum, at 128 tokens: the
// product's result (128, 256) is viewed as (1, 128, 256) and added to the residual stream. The
// sum is placed as the product's result (sticks outermost), not in the generic layout of
// (1, 128, 256) (rows outermost): there the add is the product's epilogue, in its kernel, and the
// norm's row group reads the sum as it is; in the generic layout it would be a kernel of its own,
// the product's result stored and loaded again.

// CHECK-LABEL: func.func @residual_then_norm
// CHECK:         spyre.kernel "{{k[0-9]+}}"
// CHECK-NEXT:    ^{{.*}}
// CHECK-NEXT:      spyre.matmul {{.*}} -> tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>
// CHECK-NEXT:      spyre.pointwise
// CHECK-NEXT:      ^{{.*}}
// CHECK-NEXT:        arith.addf
// CHECK:           spyre.yield {{.*}} : tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>
// CHECK:         spyre.reshape {{.*}} -> tensor<1x128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>
// CHECK-NOT:     spyre.restickify
// CHECK:         spyre.kernel "{{k[0-9]+}}"
// CHECK-NEXT:    ^{{.*}}
// CHECK-NEXT:      spyre.pointwise
// CHECK:           spyre.reduce "mean"
// CHECK-NOT:     spyre.kernel
// CHECK:         spyre.from_device
func.func @residual_then_norm(%h: !torch.vtensor<[128,256],f32>, %w: !torch.vtensor<[256,256],f32>, %res: !torch.vtensor<[1,128,256],f32>) -> !torch.vtensor<[1,128,256],f32> {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int128 = torch.constant.int 128
  %int256 = torch.constant.int 256
  %true = torch.constant.bool true
  %none = torch.constant.none
  %eps = torch.constant.float 1.000000e-06
  %0 = torch.aten.mm %h, %w : !torch.vtensor<[128,256],f32>, !torch.vtensor<[256,256],f32> -> !torch.vtensor<[128,256],f32>
  %l = torch.prim.ListConstruct %int1, %int128, %int256 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.view %0, %l : !torch.vtensor<[128,256],f32>, !torch.list<int> -> !torch.vtensor<[1,128,256],f32>
  %2 = torch.aten.add.Tensor %res, %1, %int1 : !torch.vtensor<[1,128,256],f32>, !torch.vtensor<[1,128,256],f32>, !torch.int -> !torch.vtensor<[1,128,256],f32>
  %3 = torch.aten.mul.Tensor %2, %2 : !torch.vtensor<[1,128,256],f32>, !torch.vtensor<[1,128,256],f32> -> !torch.vtensor<[1,128,256],f32>
  %d = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
  %4 = torch.aten.mean.dim %3, %d, %true, %none : !torch.vtensor<[1,128,256],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[1,128,1],f32>
  %5 = torch.aten.add.Scalar %4, %eps, %int1 : !torch.vtensor<[1,128,1],f32>, !torch.float, !torch.int -> !torch.vtensor<[1,128,1],f32>
  %6 = torch.aten.rsqrt %5 : !torch.vtensor<[1,128,1],f32> -> !torch.vtensor<[1,128,1],f32>
  %7 = torch.aten.mul.Tensor %2, %6 : !torch.vtensor<[1,128,256],f32>, !torch.vtensor<[1,128,1],f32> -> !torch.vtensor<[1,128,256],f32>
  return %7 : !torch.vtensor<[1,128,256],f32>
}
