// RUN: spyre-opt %s -p convert-torch-to-spyre | filecheck %s
// RUN: spyre-opt %s -p spyre-pipeline | filecheck %s --check-prefix=ISA
// Slices with a step. Along a dim other than the stick dim the step strides the copy's DMA
// (stick stride x step). Along the stick dim the kept elements change lanes: the stick dim is
// transposed with the next dim of extent > 1 (a device block transpose), the rows are taken
// there, and the result is transposed back; with no such dim (one row) the row is broadcast to
// two, sliced as a column and its first column kept.

// CHECK-LABEL: func.func @rows_step2
// CHECK:         %[[X:.*]] = spyre.to_device %x
// CHECK-NEXT:    spyre.slice %[[X]] start [1, 0] step [2, 1] : tensor<5x100xf16, #spyre.layout<device_size = [2, 5, 64], stride_map = [64, 100, 1]>> -> tensor<2x100xf16, #spyre.layout<device_size = [2, 2, 64], stride_map = [64, 100, 1]>>

// Rows 1 and 3 of each of the two sticks (5 sticks apart): sticks 1, 3, 6, 8.
// ISA-LABEL: spyre_isa.program @k0
// ISA:         spyre_isa.dma_load %in0[[1, 3, 6, 8], strides = [5, 2]]

// CHECK-LABEL: func.func @lanes_step3
// CHECK:         %[[X:.*]] = spyre.to_device %x
// CHECK-NEXT:    %[[P:.*]] = spyre.permute %[[X]] permutation [1, 0]
// CHECK-NEXT:    %[[R:.*]] = spyre.restickify %[[P]] : {{.*}} -> tensor<130x4xf16, #spyre.layout<device_size = [1, 130, 64], stride_map = [64, 4, 1]>>
// CHECK-NEXT:    %[[S:.*]] = spyre.slice %[[R]] start [1, 0] step [3, 1] : {{.*}} -> tensor<43x4xf16
// CHECK-NEXT:    spyre.permute %[[S]] permutation [1, 0] : {{.*}} -> tensor<4x43xf16

// ISA-LABEL: spyre_isa.program @k2
// ISA:         spyre_isa.dma_load %in0[[1 step 6 x 21], strides = [0, 3]]

// CHECK-LABEL: func.func @lanes_alone
// CHECK:         %[[TWO:.*]] = spyre.pointwise %{{.*}} -> tensor<2x130xf16
// CHECK:         %[[COL:.*]] = spyre.restickify %{{.*}} -> tensor<130x2xf16, #spyre.layout<device_size = [1, 130, 64], stride_map = [64, 2, 1]>>
// CHECK-NEXT:    %[[S:.*]] = spyre.slice %[[COL]] start [0, 0] step [2, 1] : {{.*}} -> tensor<65x2xf16
// CHECK-NEXT:    spyre.slice %[[S]] start [0, 0] : {{.*}} -> tensor<65x1xf16
// CHECK-NOT:     torch.aten.slice.Tensor

func.func @rows_step2(%x: !torch.vtensor<[5,100],f32>) -> !torch.vtensor<[2,100],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int5 = torch.constant.int 5
  %0 = torch.aten.slice.Tensor %x, %int0, %int1, %int5, %int2 : !torch.vtensor<[5,100],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,100],f32>
  %1 = torch.aten.neg %0 : !torch.vtensor<[2,100],f32> -> !torch.vtensor<[2,100],f32>
  return %1 : !torch.vtensor<[2,100],f32>
}
func.func @lanes_step3(%x: !torch.vtensor<[4,130],f32>) -> !torch.vtensor<[4,43],f32> {
  %int1 = torch.constant.int 1
  %int3 = torch.constant.int 3
  %int130 = torch.constant.int 130
  %0 = torch.aten.slice.Tensor %x, %int1, %int1, %int130, %int3 : !torch.vtensor<[4,130],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4,43],f32>
  %1 = torch.aten.neg %0 : !torch.vtensor<[4,43],f32> -> !torch.vtensor<[4,43],f32>
  return %1 : !torch.vtensor<[4,43],f32>
}
func.func @lanes_alone(%x: !torch.vtensor<[130],f32>) -> !torch.vtensor<[65],f32> {
  %int0 = torch.constant.int 0
  %int2 = torch.constant.int 2
  %int130 = torch.constant.int 130
  %0 = torch.aten.slice.Tensor %x, %int0, %int0, %int130, %int2 : !torch.vtensor<[130],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[65],f32>
  %1 = torch.aten.neg %0 : !torch.vtensor<[65],f32> -> !torch.vtensor<[65],f32>
  return %1 : !torch.vtensor<[65],f32>
}

// A slice of whole sticks of a transposed view (a rotary embedding's second half of each head,
// the heads transposed to (1, heads, rows, 128)): every stick of the view holds 64 elements of
// one head and row, so the slice copies them by one stride per loop from the view as it is; no
// relayout to the generic layout first.
// CHECK-LABEL: func.func @half_of_transposed_heads
// CHECK:         %[[P:.*]] = spyre.permute %{{.*}} permutation [0, 2, 1, 3]
// CHECK-NEXT:    spyre.slice %[[P]] start [0, 0, 0, 64] : tensor<1x4x128x128xf16, #spyre.layout<device_size = [128, 4, 2, 1, 64], stride_map = [128, 16384, 64, 65536, 1]>>
// CHECK-NOT:     spyre.restickify
func.func @half_of_transposed_heads(%x: !torch.vtensor<[1,128,512],f32>) -> !torch.vtensor<[1,4,128,64],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %int4 = torch.constant.int 4
  %int64 = torch.constant.int 64
  %int128 = torch.constant.int 128
  %none = torch.constant.none
  %l = torch.prim.ListConstruct %int1, %int128, %int4, %int128 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.view %x, %l : !torch.vtensor<[1,128,512],f32>, !torch.list<int> -> !torch.vtensor<[1,128,4,128],f32>
  %1 = torch.aten.transpose.int %0, %int1, %int2 : !torch.vtensor<[1,128,4,128],f32>, !torch.int, !torch.int -> !torch.vtensor<[1,4,128,128],f32>
  %2 = torch.aten.slice.Tensor %1, %int3, %int64, %int128, %int1 : !torch.vtensor<[1,4,128,128],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,4,128,64],f32>
  return %2 : !torch.vtensor<[1,4,128,64],f32>
}
// ISA-LABEL: func.func @half_of_transposed_heads
