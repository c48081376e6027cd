// RUN: spyre-opt %s -p 'convert-torch-to-spyre{strict=true}' --verify-diagnostics --split-input-file | filecheck %s
// In strict mode, a float op the device cannot take is refused, naming the op and why.

func.func @unsupported(%x: !torch.vtensor<[4,64],f32>) -> !torch.vtensor<[4,64],f32> {
  %0 = torch.aten.sin %x : !torch.vtensor<[4,64],f32> -> !torch.vtensor<[4,64],f32>
  %1 = torch.aten.erfinv %0 : !torch.vtensor<[4,64],f32> -> !torch.vtensor<[4,64],f32>
  return %1 : !torch.vtensor<[4,64],f32>
}
// CHECK: 'torch.aten.erfinv' producing !torch.vtensor<[4,64],f32> cannot run on the device: no device lowering yet

// -----

// A copy between float dtypes has no lowering yet (a float copy of integers is the host's by
// design: the border where integer data crosses to floats, not refused).
func.func @to_half(%x: !torch.vtensor<[4,64],f32>) -> !torch.vtensor<[4,64],f16> {
  %int5 = torch.constant.int 5
  %none = torch.constant.none
  %false = torch.constant.bool false
  %0 = torch.aten._to_copy %x, %int5, %none, %none, %none, %false, %none : !torch.vtensor<[4,64],f32>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[4,64],f16>
  return %0 : !torch.vtensor<[4,64],f16>
}
// CHECK: 'torch.aten._to_copy' producing !torch.vtensor<[4,64],f16> cannot run on the device: no device lowering yet

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
