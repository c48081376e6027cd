// RUN: spyre-opt %s -p convert-torch-to-spyre | filecheck %s
// RUN: spyre-opt %s -p spyre-pipeline | filecheck %s --check-prefix=ISA
// torch.aten.index_put of rows along one dim at host indices (a KV-cache update, HF's
// index_copy_ at cache_position) becomes spyre.scatter: the destination seen as (O, L, C) by a
// free view, the new rows DMAed into its buffer in place. The argument written in place
// (spyre.aliasing_output) comes back as a mirror of its device copy: no transfer.

// CHECK-LABEL: func.func @kv_update
// CHECK:         %[[D:.*]] = spyre.to_device %cache
// CHECK:         %[[V:.*]] = spyre.reshape %[[D]] : {{.*}} -> tensor<2x8x64xf16
// CHECK:         %[[S:.*]] = spyre.scatter %[[V]][%pos] = %{{.*}} : (tensor<2x8x64xf16{{.*}}, tensor<1xsi64>, tensor<2x1x64xf16{{.*}}) -> tensor<2x8x64xf16
// CHECK:         %[[B:.*]] = spyre.reshape %[[S]] : {{.*}} -> tensor<1x2x8x64xf16
// CHECK:         spyre.from_device mirror %[[B]]
// CHECK-NOT:     torch.aten.index_put
// ISA-LABEL:   spyre_isa.program @{{.*}}(%in0: tensor<2x8x64xf16{{.*}}, %in1: tensor<1xsi64>, %in2: tensor<2x1x64xf16{{.*}}, %out: tensor<2x8x64xf16{{.*}}) inputs 3 attributes {spyre.in_place = 0 : i64}
// ISA:           spyre_isa.dma_scatter lx
// ISA-LABEL:   func.func @kv_update
// ISA-NOT:       torch.aten.index_put
// ISA:           spyre.from_device mirror
func.func @kv_update(%cache: !torch.vtensor<[1,2,8,64],f32> {spyre.aliasing_output = 1 : i64}, %k: !torch.vtensor<[1,2,1,64],f32>, %pos: !torch.vtensor<[1],si64>) -> (!torch.vtensor<[1,2,8],f32>, !torch.vtensor<[1,2,8,64],f32>) {
  %none = torch.constant.none
  %false = torch.constant.bool false
  %idx = torch.prim.ListConstruct %none, %none, %pos : (!torch.none, !torch.none, !torch.vtensor<[1],si64>) -> !torch.list<optional<vtensor>>
  %new = torch.aten.index_put %cache, %idx, %k, %false : !torch.vtensor<[1,2,8,64],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[1,2,1,64],f32>, !torch.bool -> !torch.vtensor<[1,2,8,64],f32>
  %int-1 = torch.constant.int -1
  %dims = torch.prim.ListConstruct %int-1 : (!torch.int) -> !torch.list<int>
  %s = torch.aten.sum.dim_IntList %new, %dims, %false, %none : !torch.vtensor<[1,2,8,64],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[1,2,8],f32>
  func.return %s, %new : !torch.vtensor<[1,2,8],f32>, !torch.vtensor<[1,2,8,64],f32>
}

// A destination read elsewhere too cannot be written in place: the update stays on the host, saying why.
// CHECK-LABEL: func.func @read_twice
// CHECK:         torch.aten.index_put {{.*}} {spyre.host = "its destination is read elsewhere too (the device scatter writes it in place)"}
func.func @read_twice(%cache: !torch.vtensor<[2,8,64],f32>, %k: !torch.vtensor<[2,1,64],f32>, %pos: !torch.vtensor<[1],si64>) -> (!torch.vtensor<[2,8,64],f32>, !torch.vtensor<[2,8,64],f32>) {
  %none = torch.constant.none
  %false = torch.constant.bool false
  %idx = torch.prim.ListConstruct %none, %pos : (!torch.none, !torch.vtensor<[1],si64>) -> !torch.list<optional<vtensor>>
  %new = torch.aten.index_put %cache, %idx, %k, %false : !torch.vtensor<[2,8,64],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[2,1,64],f32>, !torch.bool -> !torch.vtensor<[2,8,64],f32>
  %d = torch.aten.neg %cache : !torch.vtensor<[2,8,64],f32> -> !torch.vtensor<[2,8,64],f32>
  func.return %new, %d : !torch.vtensor<[2,8,64],f32>, !torch.vtensor<[2,8,64],f32>
}
