// RUN: spyre-opt %s -p spyre-pipeline --split-input-file | filecheck %s
// RUN: spyre-opt %s -p spyre-pipeline --split-input-file | spyre-opt -p spyre-pipeline --split-input-file | filecheck %s
// The whole compiler: torch in, spyre_isa programs and launches out, for the device the
// module's `spyre.target` names. Running it again on its own output changes nothing (every
// stage skips what is already lowered).

func.func @main(%x: !torch.vtensor<[64,128],f32>, %w: !torch.vtensor<[128,128],f32>) -> !torch.vtensor<[64,128],f32> {
  %0 = torch.aten.t %w : !torch.vtensor<[128,128],f32> -> !torch.vtensor<[128,128],f32>
  %1 = torch.aten.mm %x, %0 : !torch.vtensor<[64,128],f32>, !torch.vtensor<[128,128],f32> -> !torch.vtensor<[64,128],f32>
  %2 = torch.aten.relu %1 : !torch.vtensor<[64,128],f32> -> !torch.vtensor<[64,128],f32>
  return %2 : !torch.vtensor<[64,128],f32>
}

// A module without a target is compiled for the default device, which its output names.
// CHECK:       builtin.module attributes {{[{]}}spyre.target = #spyre.target{{[}]}} {
// The relu is the matmul's epilogue: one program, each output tile relu'd (sfp_max) straight
// from the f32 accumulator, rounded once as the SFP writes it, in LX before it is stored.
// CHECK:       spyre_isa.program @k0({{.*}}) inputs 2 {
// CHECK-NEXT:    spyre_isa.stream cores [{{.*}}] {
// CHECK:           spyre_isa.pt_matmul {{.*}} -> lx [[[ACC:[0-9]+]], strides = {{.*}}, f32]
// CHECK-NEXT:      spyre_isa.sfp_max lx [[[ACC]], strides = {{.*}}, f32], 0.000000e+00 -> lx [[[R:[0-9]+]], strides
// CHECK-NEXT:      spyre_isa.dma_store lx [[[R]],
// CHECK-NOT:       spyre_isa.sfp_copy
// CHECK-NOT:   spyre_isa.program @k1
// CHECK:       func.func @main(%x: tensor<64x128xf32>, %w: tensor<128x128xf32>) -> tensor<64x128xf32> {
// CHECK-NEXT:    %[[X:.*]] = spyre.to_device %x
// CHECK-NEXT:    %[[W:.*]] = spyre.to_device %w permutation [1, 0]
// CHECK-NEXT:    %[[R:.*]] = spyre_isa.launch @k0(%[[X]], %[[W]])
// CHECK-NEXT:    %[[Y:.*]] = spyre.from_device %[[R]]
// CHECK-NEXT:    func.return %[[Y]]
// CHECK-NOT:   spyre_isa.program

// -----

// On a device of two cores the 64 rows are split in halves that share B: core 0 loads it and
// passes it on over the ring, so each core has a stream of its own.
// CHECK:       builtin.module attributes {{[{]}}spyre.target = #spyre.target<cores = 2>{{[}]}} {
// CHECK:         spyre_isa.stream cores [0] {
// CHECK:           spyre_isa.ring_send
// CHECK:         spyre_isa.stream cores [1] {
// CHECK-NOT:       spyre_isa.ring_send
// CHECK:         func.func @main
builtin.module attributes {spyre.target = #spyre.target<cores = 2>} {
  func.func @main(%x: !torch.vtensor<[64,128],f32>, %w: !torch.vtensor<[128,128],f32>) -> !torch.vtensor<[64,128],f32> {
    %0 = torch.aten.t %w : !torch.vtensor<[128,128],f32> -> !torch.vtensor<[128,128],f32>
    %1 = torch.aten.mm %x, %0 : !torch.vtensor<[64,128],f32>, !torch.vtensor<[128,128],f32> -> !torch.vtensor<[64,128],f32>
    %2 = torch.aten.relu %1 : !torch.vtensor<[64,128],f32> -> !torch.vtensor<[64,128],f32>
    return %2 : !torch.vtensor<[64,128],f32>
  }
}
