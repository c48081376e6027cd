// RUN: spyre-opt %s -p convert-torch-to-spyre --verify-diagnostics --split-input-file | filecheck %s
// What the device path cannot take is refused before anything is rewritten, naming the op.

func.func @unsupported(%x: !torch.vtensor<[4,64],f32>) -> !torch.vtensor<[4,64],f32> {
  %0 = torch.aten.sin %x : !torch.vtensor<[4,64],f32> -> !torch.vtensor<[4,64],f32>
  %1 = torch.aten.cos %0 : !torch.vtensor<[4,64],f32> -> !torch.vtensor<[4,64],f32>
  return %1 : !torch.vtensor<[4,64],f32>
}
// CHECK: 'torch.aten.sin' producing !torch.vtensor<[4,64],f32> cannot run on the device: no lowering to the device exists yet (and 1 more: torch.aten.cos)

// -----

func.func @integers(%x: !torch.vtensor<[4,64],si64>) -> !torch.vtensor<[4,64],si64> {
  %0 = torch.aten.relu %x : !torch.vtensor<[4,64],si64> -> !torch.vtensor<[4,64],si64>
  return %0 : !torch.vtensor<[4,64],si64>
}
// CHECK: 'torch.aten.relu' producing !torch.vtensor<[4,64],si64> cannot run on the device: dtype si64 of !torch.vtensor<[4,64],si64> is not supported on the device (f32, f16 and bf16 become DL16)

// -----

func.func @dynamic(%x: !torch.vtensor<[?,64],f32>) -> !torch.vtensor<[?,64],f32> {
  %0 = torch.aten.relu %x : !torch.vtensor<[?,64],f32> -> !torch.vtensor<[?,64],f32>
  return %0 : !torch.vtensor<[?,64],f32>
}
// CHECK: 'torch.aten.relu' producing !torch.vtensor<[?,64],f32> cannot run on the device: dynamic shape !torch.vtensor<[?,64],f32> is not supported (shapes must be static)

// -----

func.func @padded_reshape(%x: !torch.vtensor<[4,100],f32>) -> !torch.vtensor<[400],f32> {
  %0 = torch.aten.relu %x : !torch.vtensor<[4,100],f32> -> !torch.vtensor<[4,100],f32>
  %int400 = torch.constant.int 400
  %l = torch.prim.ListConstruct %int400 : (!torch.int) -> !torch.list<int>
  %1 = torch.aten.view %0, %l : !torch.vtensor<[4,100],f32>, !torch.list<int> -> !torch.vtensor<[400],f32>
  return %1 : !torch.vtensor<[400],f32>
}
// CHECK: 'torch.aten.view': reshaping (4, 100) to (400,) moves stick padding (the last dim 100 is not a multiple of 64 and does not survive); not supported yet
