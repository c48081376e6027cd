// RUN: spyre-opt %s -p convert-torch-to-spyre | filecheck %s
// RUN: spyre-opt %s -p 'convert-torch-to-spyre{strict=true}' | filecheck %s --check-prefix=STRICT
// A reshape that is no view of the generic layout: an attention head split with heads below a
// stick (MiniLM's 384 -> 12 x 32), where each head of 32 would start a new stick. The value is
// restickified to a layout sticked along another dim, where the split is a view, when that
// relayout is estimated cheaper than the round trip through the host (analysis/cost.py:
// relayout_seconds, host_round_trip_seconds); with strict=true, whenever it is a view.

// The layout sticked along dim 0 (64 rows a stick): its relayout (est. 1.16 us) is cheaper than
// the round trip (est. 7.92 us).
// CHECK-LABEL: func.func @head_split
// CHECK:         %[[PW:.*]] = spyre.pointwise
// CHECK:         %[[T:.*]] = spyre.restickify %[[PW]] : {{.*}} -> tensor<128x384xf16, #spyre.layout<device_size = [2, 384, 64], stride_map = [24576, 1, 384]>>
// CHECK-NEXT:    %[[V:.*]] = spyre.reshape %[[T]] : {{.*}} -> tensor<128x12x32xf16, #spyre.layout<device_size = [2, 12, 32, 64], stride_map = [24576, 32, 1, 384]>>
// CHECK-NEXT:    spyre.from_device %[[V]]
func.func @head_split(%x: !torch.vtensor<[128,384],f32>) -> !torch.vtensor<[128,12,32],f32> {
  %0 = torch.aten.relu %x : !torch.vtensor<[128,384],f32> -> !torch.vtensor<[128,384],f32>
  %int128 = torch.constant.int 128
  %int12 = torch.constant.int 12
  %int32 = torch.constant.int 32
  %l = torch.prim.ListConstruct %int128, %int12, %int32 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.view %0, %l : !torch.vtensor<[128,384],f32>, !torch.list<int> -> !torch.vtensor<[128,12,32],f32>
  return %1 : !torch.vtensor<[128,12,32],f32>
}

// A batch of sequences of 100: no layout of (200, 384) keeps the padded rows whole, so the
// leading dims are split first (a view of the generic layout), then the last dim, in the
// layout sticked along the sequence (est. 2.12 us against the round trip's 9.68 us).
// CHECK-LABEL: func.func @head_split_of_a_batch
// CHECK:         %[[PW:.*]] = spyre.pointwise
// CHECK:         %[[L:.*]] = spyre.reshape %[[PW]] : {{.*}} -> tensor<2x100x384xf16, #spyre.layout<device_size = [6, 2, 100, 64], stride_map = [64, 38400, 384, 1]>>
// CHECK-NEXT:    %[[T:.*]] = spyre.restickify %[[L]] : {{.*}} -> tensor<2x100x384xf16, #spyre.layout<device_size = [384, 2, 2, 64], stride_map = [1, 24576, 38400, 384]>>
// CHECK-NEXT:    %[[V:.*]] = spyre.reshape %[[T]] : {{.*}} -> tensor<2x100x12x32xf16, #spyre.layout<device_size = [12, 32, 2, 2, 64], stride_map = [32, 1, 24576, 38400, 384]>>
// CHECK-NEXT:    spyre.from_device %[[V]]
func.func @head_split_of_a_batch(%x: !torch.vtensor<[200,384],f32>) -> !torch.vtensor<[2,100,12,32],f32> {
  %0 = torch.aten.relu %x : !torch.vtensor<[200,384],f32> -> !torch.vtensor<[200,384],f32>
  %int2 = torch.constant.int 2
  %int100 = torch.constant.int 100
  %int12 = torch.constant.int 12
  %int32 = torch.constant.int 32
  %l = torch.prim.ListConstruct %int2, %int100, %int12, %int32 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.view %0, %l : !torch.vtensor<[200,384],f32>, !torch.list<int> -> !torch.vtensor<[2,100,12,32],f32>
  return %1 : !torch.vtensor<[2,100,12,32],f32>
}

// Four rows split into heads of 16: after (4, 128) -> (2, 2, 128), the split is a view of a
// layout sticked along a dim of 2 (2 of 64 lanes used), whose relayout (est. 0.52 us) is
// cheaper than the round trip (est. 4.83 us, most of it the link's latency, the host op and a
// new launch).
// CHECK-LABEL: func.func @small_split
// CHECK:         %[[L:.*]] = spyre.reshape %{{.*}} : {{.*}} -> tensor<2x2x128xf16
// CHECK-NEXT:    %[[T:.*]] = spyre.restickify %[[L]]
// CHECK-NEXT:    %[[V:.*]] = spyre.reshape %[[T]] : {{.*}} -> tensor<2x2x8x16xf16
// CHECK-NEXT:    spyre.from_device %[[V]]
func.func @small_split(%x: !torch.vtensor<[4,128],f32>) -> !torch.vtensor<[2,2,8,16],f32> {
  %0 = torch.aten.relu %x : !torch.vtensor<[4,128],f32> -> !torch.vtensor<[4,128],f32>
  %int2 = torch.constant.int 2
  %int8 = torch.constant.int 8
  %int16 = torch.constant.int 16
  %l = torch.prim.ListConstruct %int2, %int2, %int8, %int16 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.view %0, %l : !torch.vtensor<[4,128],f32>, !torch.list<int> -> !torch.vtensor<[2,2,8,16],f32>
  return %1 : !torch.vtensor<[2,2,8,16],f32>
}

// The same split of long rows: the layout sticked along the dim of 2 holds 2 elements a
// stick, 32 times the bytes, and its relayout (est. 164.04 us) costs more than the round trip
// (est. 21.44 us): the reshape stays on the host, and says why. With strict=true it runs on
// the device.
// CHECK-LABEL: func.func @wide_split
// CHECK:         torch.aten.view %{{.*}}, %{{.*}} {spyre.host = "reshaping (4, 65536) to (2, 2, 4096, 16) {{.*}} the layout sticked along dim 0 makes it a view, but relayouting to it (est. 164.04 us) costs more than a round trip through the host (est. 21.44 us))"}
// STRICT-LABEL: func.func @wide_split
// STRICT:         %[[L:.*]] = spyre.reshape %{{.*}} : {{.*}} -> tensor<2x2x65536xf16
// STRICT-NEXT:    %[[T:.*]] = spyre.restickify %[[L]]
// STRICT-NEXT:    %[[V:.*]] = spyre.reshape %[[T]] : {{.*}} -> tensor<2x2x4096x16xf16
// STRICT-NEXT:    spyre.from_device %[[V]]
func.func @wide_split(%x: !torch.vtensor<[4,65536],f32>) -> !torch.vtensor<[2,2,4096,16],f32> {
  %0 = torch.aten.relu %x : !torch.vtensor<[4,65536],f32> -> !torch.vtensor<[4,65536],f32>
  %int2 = torch.constant.int 2
  %int4096 = torch.constant.int 4096
  %int16 = torch.constant.int 16
  %l = torch.prim.ListConstruct %int2, %int2, %int4096, %int16 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.view %0, %l : !torch.vtensor<[4,65536],f32>, !torch.list<int> -> !torch.vtensor<[2,2,4096,16],f32>
  return %1 : !torch.vtensor<[2,2,4096,16],f32>
}

// The last dim split in two and its first part merged into the rows ((1, 23, 18) -> (46, 9),
// ConvBERT's dynamic convolution): no layout makes it one view; the split is a view of the
// layout sticked along the sequence, the merge one of the generic layout, each after a
// relayout.
// CHECK-LABEL: func.func @split_and_merge
// CHECK:         %[[T:.*]] = spyre.restickify %{{.*}} -> tensor<1x23x18xf16, #spyre.layout<device_size = [18, 1, 1, 64], stride_map = [1, 64, 414, 18]>>
// CHECK-NEXT:    %[[S:.*]] = spyre.reshape %[[T]] : {{.*}} -> tensor<1x23x2x9xf16
// CHECK-NEXT:    %[[G:.*]] = spyre.restickify %[[S]] : {{.*}} -> tensor<1x23x2x9xf16, #spyre.layout<device_size = [23, 2, 1, 1, 64], stride_map = [18, 9, 64, 414, 1]>>
// CHECK-NEXT:    spyre.reshape %[[G]] : {{.*}} -> tensor<46x9xf16
func.func @split_and_merge(%x: !torch.vtensor<[1,23,18],f32>) -> !torch.vtensor<[46,9],f32> {
  %0 = torch.aten.relu %x : !torch.vtensor<[1,23,18],f32> -> !torch.vtensor<[1,23,18],f32>
  %int46 = torch.constant.int 46
  %int9 = torch.constant.int 9
  %l = torch.prim.ListConstruct %int46, %int9 : (!torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.view %0, %l : !torch.vtensor<[1,23,18],f32>, !torch.list<int> -> !torch.vtensor<[46,9],f32>
  return %1 : !torch.vtensor<[46,9],f32>
}

// A single row ((1, 1, 64) -> (1, 1, 4, 16)): a view of the layout sticked along a dim of
// extent 1, an element per stick.
// CHECK-LABEL: func.func @single_row
// CHECK:         %[[T:.*]] = spyre.restickify %{{.*}} -> tensor<1x1x64xf16, #spyre.layout<device_size = [64, 1, 1, 64], stride_map = [1, 64, 64, -1]>>
// CHECK-NEXT:    spyre.reshape %[[T]] : {{.*}} -> tensor<1x1x4x16xf16
func.func @single_row(%x: !torch.vtensor<[1,1,64],f32>) -> !torch.vtensor<[1,1,4,16],f32> {
  %0 = torch.aten.relu %x : !torch.vtensor<[1,1,64],f32> -> !torch.vtensor<[1,1,64],f32>
  %int1 = torch.constant.int 1
  %int4 = torch.constant.int 4
  %int16 = torch.constant.int 16
  %l = torch.prim.ListConstruct %int1, %int1, %int4, %int16 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.view %0, %l : !torch.vtensor<[1,1,64],f32>, !torch.list<int> -> !torch.vtensor<[1,1,4,16],f32>
  return %1 : !torch.vtensor<[1,1,4,16],f32>
}
