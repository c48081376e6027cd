// RUN: spyre-opt %s -p spyre-track-origins | filecheck %s
// RUN: spyre-opt %s -p spyre-track-origins,spyre-pipeline | filecheck %s --check-prefix=END
// RUN: spyre-opt %s -p spyre-track-origins,spyre-pipeline | spyre-opt | filecheck %s --check-prefix=END
// RUN: spyre-opt %s -p spyre-track-origins,torch-adapt,convert-torch-to-spyre,spyre-propagate-layouts,spyre-fuse | spyre-opt | filecheck %s --check-prefix=FUSED
// The torch compute ops numbered in program order (constants and lists are not), then carried
// by every pass: each launch names the torch ops its kernel computes -> the value it returns.

func.func @main(%x: !torch.vtensor<[64,128],f32>, %w: !torch.vtensor<[128,128],f32>) -> !torch.vtensor<[64,128],f32> {
  %0 = torch.aten.t %w : !torch.vtensor<[128,128],f32> -> !torch.vtensor<[128,128],f32>
  %1 = torch.aten.mm %x, %0 : !torch.vtensor<[64,128],f32>, !torch.vtensor<[128,128],f32> -> !torch.vtensor<[64,128],f32>
  %2 = torch.aten.relu %1 : !torch.vtensor<[64,128],f32> -> !torch.vtensor<[64,128],f32>
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %3 = torch.aten.cumsum %2, %int1, %none : !torch.vtensor<[64,128],f32>, !torch.int, !torch.none -> !torch.vtensor<[64,128],f32>
  %4 = torch.aten.exp %3 : !torch.vtensor<[64,128],f32> -> !torch.vtensor<[64,128],f32>
  return %4 : !torch.vtensor<[64,128],f32>
}

// CHECK:      builtin.module attributes {spyre.origins = 5 : i64}
// CHECK:      torch.aten.t %w {spyre.origin = #spyre.origin<[0] -> [0]>}
// CHECK-NEXT: torch.aten.mm %x, %0 {spyre.origin = #spyre.origin<[1] -> [1]>}
// CHECK-NEXT: torch.aten.relu %1 {spyre.origin = #spyre.origin<[2] -> [2]>}
// CHECK:      torch.aten.cumsum %2, %int1, %none {spyre.origin = #spyre.origin<[3] -> [3]>}
// CHECK-NEXT: torch.aten.exp %3 {spyre.origin = #spyre.origin<[4] -> [4]>}

// The transpose went into the transfer (no device op has 0); the matmul and its relu are one
// kernel returning the relu's value; cumsum stays on the host with its number; exp is a kernel.
// END:      spyre_isa.launch @k0({{.*}}) {spyre.origin = #spyre.origin<[1, 2] -> [2]>}
// END:      torch.aten.cumsum {{.*}}spyre.origin = #spyre.origin<[3] -> [3]>
// END:      spyre_isa.launch @k1({{.*}}) {spyre.origin = #spyre.origin<[4] -> [4]>}

// A kernel's origin is its body's: the product and its relu epilogue, returning the relu.
// FUSED: spyre.kernel "k0"({{.*}}) origin <[1, 2] -> [2]>
// FUSED: spyre.kernel "k1"({{.*}}) origin <[4] -> [4]>
