// RUN: spyre-opt %s --parsing-diagnostics --split-input-file | filecheck %s

// A kernel mark with a field missing or misspelled is a parse error at the offending token.

// The onchip mark without its staging offset.
%s = "test.op"() : () -> tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
%r = spyre.kernel "t_k1"(%s) split <d0 = 4, d1 = 1> onchip <src = 1648512, dst = 1664896, src_rows = [[0, 64], [64, 128], [128, 192], [192, 256]], dst_boxes = [[0, 1, 0, 100], [1, 2, 0, 100], [2, 3, 0, 100], [3, 4, 0, 100]]> : (tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>) -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>> {
^bb0(%ks: tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>):
  %kr = spyre.restickify %ks : tensor<100x256xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
  spyre.yield %kr : tensor<100x256xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>>
}
// CHECK: Expected 'staging'

// -----

"test.op"() {m = #spyre.resident_in<offset = 4096>} : () -> ()
// CHECK: Expected 'input'

// -----

"test.op"() {m = #spyre.lx_budget<offset = 4096>} : () -> ()
// CHECK: Expected 'bytes'

// -----

"test.op"() {m = #spyre.multicast<chain = 2, depth = 2>} : () -> ()
// CHECK: '>' expected

// -----

"test.op"() {m = #spyre.core_order<0, 1>} : () -> ()
// CHECK: '[' expected

// -----

// The target (#spyre.target): a parameter DeviceConfig does not have, one given twice, a value
// of another kind than its field's, and a device DeviceConfig.validate refuses.
"test.op"() {t = #spyre.target<lx = 4096>} : () -> ()
// CHECK: unknown device parameter 'lx'; known: cores, corelets_per_core,

// -----

"test.op"() {t = #spyre.target<cores = 2, cores = 4>} : () -> ()
// CHECK: device parameter cores given twice

// -----

"test.op"() {t = #spyre.target<cores = 2.5>} : () -> ()
// CHECK: Expected integer literal for cores

// -----

"test.op"() {t = #spyre.target<numerics = dl16>} : () -> ()
// CHECK: string literal expected for numerics

// -----

"test.op"() {t = #spyre.target<cores = 0>} : () -> ()
// CHECK: #spyre.target: a device needs >= 1 core and >= 1 stick of LX, got 0, 2097152

// -----

"test.op"() {t = #spyre.target<corelets_used = 3>} : () -> ()
// CHECK: #spyre.target: corelets_used must be 1 .. corelets_per_core (2), got 3
