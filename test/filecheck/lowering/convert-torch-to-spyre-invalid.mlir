// RUN: spyre-opt %s -p 'convert-torch-to-spyre{strict=true}' --verify-diagnostics --split-input-file | filecheck %s
// In strict mode, a float op the device cannot take is refused, naming the op and why.

func.func @unsupported(%x: !torch.vtensor<[4,64],f32>) -> !torch.vtensor<[4,64],f32> {
  %0 = torch.aten.sin %x : !torch.vtensor<[4,64],f32> -> !torch.vtensor<[4,64],f32>
  %1 = torch.aten.atan %0 : !torch.vtensor<[4,64],f32> -> !torch.vtensor<[4,64],f32>
  return %1 : !torch.vtensor<[4,64],f32>
}
// CHECK: 'torch.aten.atan' producing !torch.vtensor<[4,64],f32> cannot run on the device: no device lowering yet

// -----

func.func @to_float(%x: !torch.vtensor<[4,64],si64>) -> !torch.vtensor<[4,64],f32> {
  %int6 = torch.constant.int 6
  %none = torch.constant.none
  %false = torch.constant.bool false
  %0 = torch.aten._to_copy %x, %int6, %none, %none, %none, %false, %none : !torch.vtensor<[4,64],si64>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[4,64],f32>
  return %0 : !torch.vtensor<[4,64],f32>
}
// CHECK: 'torch.aten._to_copy' producing !torch.vtensor<[4,64],f32> cannot run on the device: no device lowering yet

// -----

func.func @dynamic(%x: !torch.vtensor<[?,64],f32>) -> !torch.vtensor<[?,64],f32> {
  %0 = torch.aten.relu %x : !torch.vtensor<[?,64],f32> -> !torch.vtensor<[?,64],f32>
  return %0 : !torch.vtensor<[?,64],f32>
}
// CHECK: 'func.func': dynamic shape !torch.vtensor<[?,64],f32> is not supported (shapes must be static)

// -----

func.func @padded_reshape(%x: !torch.vtensor<[4,100],f32>) -> !torch.vtensor<[400],f32> {
  %0 = torch.aten.relu %x : !torch.vtensor<[4,100],f32> -> !torch.vtensor<[4,100],f32>
  %int400 = torch.constant.int 400
  %l = torch.prim.ListConstruct %int400 : (!torch.int) -> !torch.list<int>
  %1 = torch.aten.view %0, %l : !torch.vtensor<[4,100],f32>, !torch.list<int> -> !torch.vtensor<[400],f32>
  return %1 : !torch.vtensor<[400],f32>
}
// CHECK: 'torch.aten.view' producing !torch.vtensor<[400],f32> cannot run on the device: reshaping (4, 100) to (400,) would move stick padding (the last dim 100 is not a multiple of 64 and does not survive), and no layout sticked along another dim makes it a view

// -----

// A reshape that splits both dims: the generic layout would put elements into stick padding
// (runs of 16), and a layout sticked along dim 0 would move its padding (4 of 64 lanes). (An
// attention head split, (128, 384) -> (128, 12, 32), is a view of the layout sticked along
// dim 0: convert-torch-to-spyre.mlir.)
func.func @split_both(%x: !torch.vtensor<[4,128],f32>) -> !torch.vtensor<[2,2,8,16],f32> {
  %0 = torch.aten.relu %x : !torch.vtensor<[4,128],f32> -> !torch.vtensor<[4,128],f32>
  %int2 = torch.constant.int 2
  %int8 = torch.constant.int 8
  %int16 = torch.constant.int 16
  %l = torch.prim.ListConstruct %int2, %int2, %int8, %int16 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.view %0, %l : !torch.vtensor<[4,128],f32>, !torch.list<int> -> !torch.vtensor<[2,2,8,16],f32>
  return %1 : !torch.vtensor<[2,2,8,16],f32>
}
// CHECK: 'torch.aten.view' producing !torch.vtensor<[2,2,8,16],f32> cannot run on the device: reshaping (4, 128) to (2, 2, 8, 16) would move elements into stick padding (the result's last dim 16 is not a multiple of 64: each run of 16 would start a new stick), and no layout sticked along another dim makes it a view
