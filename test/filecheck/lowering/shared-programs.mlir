// RUN: spyre-opt %s -p spyre-pipeline | filecheck %s
// RUN: spyre-run %s --seed 3 | filecheck %s --check-prefix=PROFILE
// Kernels that differ only in name (a model's repeated layers) share one program: the first is
// lowered, every repeat launches it and names itself in `kernel`, which profiles use. A kernel
// with another body (here: another shape) gets a program of its own.

// CHECK:       spyre_isa.program @k0
// CHECK-NOT:   spyre_isa.program @k1
// CHECK:       spyre_isa.program @k2
// CHECK-NOT:   spyre_isa.program
// CHECK-LABEL: func.func @main
// CHECK:         spyre_isa.launch @k0(%{{.*}}) :
// CHECK:         spyre_isa.launch @k0(%{{.*}}) {kernel = "k1"} :
// CHECK:         spyre_isa.launch @k2(%{{.*}}) :

// The profile names every launch by its kernel.
// PROFILE-DAG: {{^}}k0 
// PROFILE-DAG: {{^}}k1 
// PROFILE-DAG: {{^}}k2 

func.func @main(%x: !torch.vtensor<[64,128],f32>, %z: !torch.vtensor<[64,128],f32>, %y: !torch.vtensor<[128,64],f32>) -> (!torch.vtensor<[64,128],f32>, !torch.vtensor<[64,128],f32>, !torch.vtensor<[128,64],f32>) {
  %a = torch.aten.relu %x : !torch.vtensor<[64,128],f32> -> !torch.vtensor<[64,128],f32>
  %c = torch.aten.relu %z : !torch.vtensor<[64,128],f32> -> !torch.vtensor<[64,128],f32>
  %d = torch.aten.relu %y : !torch.vtensor<[128,64],f32> -> !torch.vtensor<[128,64],f32>
  func.return %a, %c, %d : !torch.vtensor<[64,128],f32>, !torch.vtensor<[64,128],f32>, !torch.vtensor<[128,64],f32>
}
