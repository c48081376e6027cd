// RUN: spyre-opt %s -p 'convert-torch-to-spyre,spyre-propagate-layouts,spyre-fuse' | filecheck %s
// A grouped-query attention's scores: one batched product per KV head, its rows the query heads
// of the group (2 KV heads x 2 query heads x 128 rows), viewed as (1, 4 heads, 128, 128), the
// mask added, the softmax. The product's result is batch-major (batch, rows, column sticks), so
// the view is the generic layout of (1, 4, 128, 128), the one the softmax reduces in: the mask's
// add joins the softmax's row group, and no kernel relayouts the scores between them.

// CHECK-LABEL: func.func @grouped_scores
// CHECK:         spyre.kernel "{{k[0-9]+}}"
// CHECK-NEXT:    ^{{.*}}
// CHECK-NEXT:      spyre.matmul {{.*}} -> tensor<2x256x128xf16, #spyre.layout<device_size = [2, 256, 2, 64], stride_map = [32768, 128, 64, 1]>>
// CHECK:         spyre.reshape {{.*}} -> tensor<1x4x128x128xf16, #spyre.layout<device_size = [4, 128, 2, 64], stride_map = [16384, 128, 64, 1]>>
// CHECK-NEXT:    spyre.to_device %mask
// CHECK-NEXT:    spyre.kernel "{{k[0-9]+}}"
// CHECK-NEXT:    ^{{.*}}
// CHECK-NEXT:      spyre.pointwise
// CHECK-NEXT:      ^{{.*}}
// CHECK-NEXT:        arith.addf
// CHECK:           spyre.reduce "max"
// CHECK:           spyre.reduce "sum"
// CHECK:         spyre.from_device
func.func @grouped_scores(%q: !torch.vtensor<[2,256,64],f32>, %k: !torch.vtensor<[2,64,128],f32>, %mask: !torch.vtensor<[128,128],f32>) -> !torch.vtensor<[1,4,128,128],f32> {
  %int1 = torch.constant.int 1
  %int4 = torch.constant.int 4
  %int128 = torch.constant.int 128
  %int-1 = torch.constant.int -1
  %false = torch.constant.bool false
  %0 = torch.aten.bmm %q, %k : !torch.vtensor<[2,256,64],f32>, !torch.vtensor<[2,64,128],f32> -> !torch.vtensor<[2,256,128],f32>
  %l = torch.prim.ListConstruct %int1, %int4, %int128, %int128 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.view %0, %l : !torch.vtensor<[2,256,128],f32>, !torch.list<int> -> !torch.vtensor<[1,4,128,128],f32>
  %2 = torch.aten.add.Tensor %1, %mask, %int1 : !torch.vtensor<[1,4,128,128],f32>, !torch.vtensor<[128,128],f32>, !torch.int -> !torch.vtensor<[1,4,128,128],f32>
  %3 = torch.aten._softmax %2, %int-1, %false : !torch.vtensor<[1,4,128,128],f32>, !torch.int, !torch.bool -> !torch.vtensor<[1,4,128,128],f32>
  return %3 : !torch.vtensor<[1,4,128,128],f32>
}
