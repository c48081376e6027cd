// RUN: spyre-opt %s -p convert-torch-to-spyre | filecheck %s
// RUN: spyre-opt %s -p spyre-pipeline | filecheck %s --check-prefix=ISA
// Reductions, normalisations and data movement: softmax and layer norm decompose into
// spyre.reduce (along the stick dim: a splat result, broadcast back for free) and pointwise
// ops; embedding is a spyre.gather at indices the host hands over; where selects on a 0/1
// mask; slice copies a box of sticks.

// CHECK-LABEL: func.func @softmax
// CHECK:         %[[X:.*]] = spyre.to_device %x
// CHECK-NEXT:    %[[M:.*]] = spyre.reduce "max" %[[X]] dim 1 : tensor<3x100xf16, {{.*}}> -> tensor<3x1xf16, #spyre.layout<device_size = [1, 3, 64], stride_map = [64, 1, 0]>>
// CHECK-NEXT:    %[[E:.*]] = spyre.pointwise %[[X]], %[[M]]
// CHECK:           arith.subf
// CHECK-NEXT:      math.exp
// CHECK:         %[[S:.*]] = spyre.reduce "sum" %[[E]] dim 1
// CHECK-NEXT:    spyre.pointwise %[[E]], %[[S]]
// CHECK:           arith.divf

// CHECK-LABEL: func.func @layer_norm
// CHECK:         %[[MEAN:.*]] = spyre.reduce "mean"
// CHECK-NEXT:    %[[D:.*]] = spyre.pointwise %{{.*}}, %[[MEAN]]
// CHECK:         %[[SQ:.*]] = spyre.pointwise %[[D]]
// CHECK:         %[[VAR:.*]] = spyre.reduce "mean" %[[SQ]]
// CHECK-NEXT:    %[[R:.*]] = spyre.pointwise %[[VAR]] : (tensor<3x1xf16, #spyre.layout<{{.*}}stride_map = [64, 1, 0]>>) -> tensor<3x1xf16, #spyre.layout<{{.*}}stride_map = [64, 1, 0]>>
// CHECK:           math.rsqrt
// CHECK:         spyre.pointwise %[[D]], %[[R]], %{{.*}}, %{{.*}}

// CHECK-LABEL: func.func @embedding_slice_where
// CHECK:         %[[T:.*]] = spyre.to_device %table
// CHECK-NEXT:    %[[G:.*]] = spyre.gather %[[T]][%ids] : ({{.*}}, tensor<2x5xsi64>) -> tensor<10x64xf16
// CHECK-NEXT:    %[[E:.*]] = spyre.reshape %[[G]] : {{.*}} -> tensor<2x5x64xf16
// CHECK:         %[[MASK:.*]] = spyre.to_device %m : tensor<2x5x1xi1> -> tensor<2x5x1xf16
// CHECK-NEXT:    %[[SEL:.*]] = spyre.pointwise %[[MASK]], %[[E]], %{{.*}}
// CHECK:           %[[NZ:.*]] = arith.cmpf one
// CHECK-NEXT:      arith.select %[[NZ]]
// CHECK:         spyre.slice %[[SEL]] start [0, 1, 0] : {{.*}} -> tensor<2x3x64xf16

// Softmax is one kernel (spyre-fuse's row group): the rows' sticks in once, an SFP max over
// sticks and lanes (the last stick's 36 padding lanes masked), exp(x - max) into LX, the f32
// sum, the division, the result out; no intermediate touches DDR.
// ISA-LABEL: spyre_isa.program @k0
// ISA:         spyre_isa.dma_load %in0
// ISA-NEXT:    spyre_isa.sfp_reduce_max lx [0, strides = [2, 1]] -> lx [2, strides = [1, 0]] sizes [1, 2] tail 36
// ISA-NEXT:    spyre_isa.sfp_sub lx [0, strides = [2, 1]], lx [2, strides = [1, 0]] -> lx [[[T:[0-9]+]], strides = [4, 2], f32] sizes [1, 2]
// ISA-NEXT:    spyre_isa.sfp_exp lx [[[T]], strides = [4, 2], f32] -> lx [[[E:[0-9]+]], strides = [2, 1]] sizes [1, 2]
// ISA-NEXT:    spyre_isa.sfp_reduce_sum lx [[[E]], strides = [2, 1]] -> lx [[[ACC:[0-9]+]], strides = [2, 0], f32] sizes [1, 2] tail 36
// ISA-NEXT:    spyre_isa.sfp_copy lx [[[ACC]], strides = [2], f32] -> lx [[[S:[0-9]+]], strides = [1]] sizes [1]
// ISA-NEXT:    spyre_isa.sfp_div lx [[[E]], strides = [2, 1]], lx [[[S]], strides = [1, 0]] -> lx [[[Y:[0-9]+]], strides = [2, 1]] sizes [1, 2]
// ISA-NEXT:    spyre_isa.dma_store lx [[[Y]], strides = [2, 1]] -> %out
// Layer norm likewise: mean (the f32 sum scaled by 1/100), x - mean, its square's mean,
// rsqrt(var + eps) on the splat, then * w + b with w and b loaded once per chunk.
// ISA-LABEL: spyre_isa.program @k1
// ISA-COUNT-3: spyre_isa.dma_load
// ISA-NEXT:    spyre_isa.sfp_reduce_sum
// ISA-NEXT:    spyre_isa.sfp_mul {{.*}}, 1.000000e-02
// ISA:         spyre_isa.sfp_rsqrt
// ISA:         spyre_isa.dma_store
// ISA-NOT:     spyre_isa.dma_store
// The gather: rows at host indices, then stored in place.
// ISA-LABEL: spyre_isa.program @k2
// ISA:         spyre_isa.dma_gather %in0[%in1[[0 step 1 x 10]] count 1 row_sticks 1] -> lx [0, strides = [1, 1]] : tensor<50x64xf16, {{.*}}>, tensor<2x5xsi64>
// ISA:         spyre_isa.sfp_select lx [{{.*}}] ? lx [{{.*}}] : lx [{{.*}}] -> lx [{{.*}}]
// ISA:         spyre_isa.launch @{{.*}}(%{{.*}}, %ids)

func.func @softmax(%x: !torch.vtensor<[3,100],f32>) -> !torch.vtensor<[3,100],f32> {
  %int-1 = torch.constant.int -1
  %false = torch.constant.bool false
  %0 = torch.aten._softmax %x, %int-1, %false : !torch.vtensor<[3,100],f32>, !torch.int, !torch.bool -> !torch.vtensor<[3,100],f32>
  return %0 : !torch.vtensor<[3,100],f32>
}
func.func @layer_norm(%x: !torch.vtensor<[3,100],f32>, %w: !torch.vtensor<[100],f32>, %b: !torch.vtensor<[100],f32>) -> !torch.vtensor<[3,100],f32> {
  %int100 = torch.constant.int 100
  %eps = torch.constant.float 1.000000e-05
  %ns = torch.prim.ListConstruct %int100 : (!torch.int) -> !torch.list<int>
  %0:3 = torch.aten.native_layer_norm %x, %ns, %w, %b, %eps : !torch.vtensor<[3,100],f32>, !torch.list<int>, !torch.vtensor<[100],f32>, !torch.vtensor<[100],f32>, !torch.float -> !torch.vtensor<[3,100],f32>, !torch.vtensor<[3,1],f32>, !torch.vtensor<[3,1],f32>
  return %0#0 : !torch.vtensor<[3,100],f32>
}
func.func @embedding_slice_where(%table: !torch.vtensor<[50,64],f32>, %ids: !torch.vtensor<[2,5],si64>, %m: !torch.vtensor<[2,5,1],i1>) -> !torch.vtensor<[2,3,64],f32> {
  %int-1 = torch.constant.int -1
  %false = torch.constant.bool false
  %int1 = torch.constant.int 1
  %int4 = torch.constant.int 4
  %0 = torch.aten.embedding %table, %ids, %int-1, %false, %false : !torch.vtensor<[50,64],f32>, !torch.vtensor<[2,5],si64>, !torch.int, !torch.bool, !torch.bool -> !torch.vtensor<[2,5,64],f32>
  %1 = torch.aten.neg %0 : !torch.vtensor<[2,5,64],f32> -> !torch.vtensor<[2,5,64],f32>
  %2 = torch.aten.where.self %m, %0, %1 : !torch.vtensor<[2,5,1],i1>, !torch.vtensor<[2,5,64],f32>, !torch.vtensor<[2,5,64],f32> -> !torch.vtensor<[2,5,64],f32>
  %3 = torch.aten.slice.Tensor %2, %int1, %int1, %int4, %int1 : !torch.vtensor<[2,5,64],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,3,64],f32>
  return %3 : !torch.vtensor<[2,3,64],f32>
}
