// RUN: spyre-opt %s -p spyre-pipeline --verify-diagnostics --split-input-file | filecheck %s
// A tensor the device's DDR cannot hold is refused at compile time (spyre-pipeline checks every
// device value after each stage), with a diagnostic naming the op, the value and the bytes,
// before anything is planned or allocated.

// A (262144, 262144) f32 tensor is 128 GiB in DL16, more than the 112 GiB of DDR the device
// may allocate (DeviceConfig.ddr_usable_bytes).
func.func @larger_than_ddr(%x: !torch.vtensor<[262144,262144],f32>) -> !torch.vtensor<[262144,262144],f32> {
  %0 = torch.aten.relu %x : !torch.vtensor<[262144,262144],f32> -> !torch.vtensor<[262144,262144],f32>
  return %0 : !torch.vtensor<[262144,262144],f32>
}
// CHECK: 'spyre.to_device': its result tensor<262144x262144xf16, #spyre.layout<device_size = [4096, 262144, 64], stride_map = [64, 262144, 1]>> needs 137438953472 bytes of DDR, more than the 120259084288 bytes the device may allocate (ddr_usable_bytes)
