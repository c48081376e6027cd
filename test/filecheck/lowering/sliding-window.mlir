// RUN: spyre-opt %s -p convert-torch-to-spyre | filecheck %s
// A full sliding-window KV cache's update, as aot_autograd gives HF's StaticSlidingWindowLayer
// (roll as a cat of two slices, frontend/decompositions.py): the rows rolled by one (two slices
// along the positions, one spyre.concat), the new row written last (spyre.scatter at host index
// -1; the values' missing leading 1 is a view), and `aten.copy` of the result into the cache
// argument lowered to the result itself, written back as a mirror of its device copy.

// CHECK-LABEL: func.func @window_update
// CHECK:         %[[D:.*]] = spyre.to_device %cache
// CHECK-DAG:     %[[A:.*]] = spyre.slice %[[D]] start [0, 0, 1, 0]
// CHECK-DAG:     %[[B:.*]] = spyre.slice %[[D]] start [0, 0, 0, 0]
// CHECK:         %[[C:.*]] = spyre.concat %[[A]], %[[B]] dim 2
// CHECK:         %[[V:.*]] = spyre.reshape %[[C]] : {{.*}} -> tensor<2x4x64xf16
// CHECK:         %[[S:.*]] = spyre.scatter %[[V]][%{{.*}}] = %{{.*}} : (tensor<2x4x64xf16{{.*}}, tensor<1xsi64>, tensor<2x1x64xf16
// CHECK:         spyre.from_device mirror
// CHECK-NOT:     torch.aten.copy
// CHECK-NOT:     torch.aten.index_put
// CHECK-NOT:     torch.aten.cat
func.func @window_update(%cache: !torch.vtensor<[1,2,4,64],f32> {spyre.aliasing_output = 0 : i64}, %k: !torch.vtensor<[2,1,64],f32>) -> !torch.vtensor<[1,2,4,64],f32> {
  %none = torch.constant.none
  %false = torch.constant.bool false
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int4 = torch.constant.int 4
  %rest = torch.aten.slice.Tensor %cache, %int2, %int1, %int4, %int1 : !torch.vtensor<[1,2,4,64],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,2,3,64],f32>
  %first = torch.aten.slice.Tensor %cache, %int2, %int0, %int1, %int1 : !torch.vtensor<[1,2,4,64],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,2,1,64],f32>
  %pieces = torch.prim.ListConstruct %rest, %first : (!torch.vtensor<[1,2,3,64],f32>, !torch.vtensor<[1,2,1,64],f32>) -> !torch.list<vtensor>
  %rolled = torch.aten.cat %pieces, %int2 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[1,2,4,64],f32>
  %last = torch.vtensor.literal(dense<-1> : tensor<1xsi64>) : !torch.vtensor<[1],si64>
  %idx = torch.prim.ListConstruct %none, %none, %last : (!torch.none, !torch.none, !torch.vtensor<[1],si64>) -> !torch.list<optional<vtensor>>
  %new = torch.aten.index_put %rolled, %idx, %k, %false : !torch.vtensor<[1,2,4,64],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[2,1,64],f32>, !torch.bool -> !torch.vtensor<[1,2,4,64],f32>
  %copied = torch.aten.copy %cache, %new, %false : !torch.vtensor<[1,2,4,64],f32>, !torch.vtensor<[1,2,4,64],f32>, !torch.bool -> !torch.vtensor<[1,2,4,64],f32>
  func.return %copied : !torch.vtensor<[1,2,4,64],f32>
}
