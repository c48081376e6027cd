// RUN: spyre-opt %s --verify-diagnostics --split-input-file | filecheck %s
// RUN: spyre-opt %S/../../inputs/reduce-not-on-stick.mlir -p spyre-pipeline --verify-diagnostics | filecheck %s --check-prefix=PIPE

// A kernel's compute op must have an iteration space: a reduction runs along the stick dim of
// its input only. The kernel verifier says so (a diagnostic, not a ValueError's traceback).

%x = "test.op"() : () -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
%r = spyre.kernel "k0"(%x) : (tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<1x64xf16, #spyre.layout<device_size = [1, 1, 64], stride_map = [64, 64, 1]>> {
^bb0(%a: tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>):
  %s = spyre.reduce "sum" %a dim 0 : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<1x64xf16, #spyre.layout<device_size = [1, 1, 64], stride_map = [64, 64, 1]>>
  spyre.yield %s : tensor<1x64xf16, #spyre.layout<device_size = [1, 1, 64], stride_map = [64, 64, 1]>>
}
// CHECK: 'spyre.kernel' @k0: spyre.reduce along dim 0 needs its input sticked on that dim

// The same reduction outside a kernel: spyre-propagate-layouts refuses it, naming the op,
// before spyre-fuse would make a kernel of it.
// PIPE: 'spyre.reduce': along dim 0 of (4, 64): the device reduces along the stick dim (the last, of extent > 1) only
