// RUN: spyre-opt %s -p 'convert-torch-to-spyre,spyre-propagate-layouts,spyre-fuse,spyre-divide-work{strategy=even},spyre-plan-scratchpad{double_buffer=false cost=false}' --verify-diagnostics | filecheck %s
// A kernel whose smallest tile cannot fit the planner's LX budget is refused by
// spyre-plan-scratchpad, naming the kernel, its compute op, every buffer and the bytes.

// A matmul whose buffers at the smallest chunk (A, B, the fp32 accumulator and the output
// tile: 8704 bytes) exceed the 1 KiB budget of a target with 1280 bytes of LX.
builtin.module attributes {spyre.target = #spyre.target<lx_bytes = 1280>} {
  func.func @larger_than_lx(%a: !torch.vtensor<[64,4096],f32>, %b: !torch.vtensor<[4096,64],f32>) -> !torch.vtensor<[64,64],f32> {
    %0 = torch.aten.mm %a, %b : !torch.vtensor<[64,4096],f32>, !torch.vtensor<[4096,64],f32> -> !torch.vtensor<[64,64],f32>
    return %0 : !torch.vtensor<[64,64],f32>
  }
}
// CHECK: kernel k0: its smallest chunk needs {{[0-9]+}} bytes of LX per core, the planner's budget is 1024 ('spyre.matmul' producing tensor<64x64xf16, {{.*}}>: buffers lhs {{[0-9]+}}, rhs {{[0-9]+}}, acc {{[0-9]+}}, out {{[0-9]+}} bytes, and no dim can be chunked further)
