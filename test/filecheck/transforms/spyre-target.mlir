// RUN: spyre-opt %s -p spyre-divide-work,spyre-plan-scratchpad --split-input-file | filecheck %s
// The planning passes plan for the device the module's `spyre.target` names. The same
// 64x1024x2048 matmul kernel (spyre-fuse's output for torch.mm) on four targets gets four
// plans: the default device; DDR four times as fast (the ring and the LX port then bound the
// default's chain of 8, so fewer cores share each B tile: test_spyre_target.py simulates both
// plans on that device, and the one made for it is faster); 8 cores; 128 KiB of LX.

// The default device: 8 row blocks of 8 rows, k in 4 parts, B passed down chains of 8.
// CHECK:       builtin.module attributes {{[{]}}spyre.target = #spyre.target{{[}]}} {
// CHECK:         spyre.kernel "k0"({{.*}}) split <n = 1, m = 8, k = 4> chunks <n = 8, m = 1, k = 1> {{.*}} multicast <chain = 8>
builtin.module attributes {spyre.target = #spyre.target} {
  func.func @mm(%a: tensor<64x1024xf32>, %b: tensor<1024x2048xf32>) -> tensor<64x2048xf32> {
    %0 = spyre.to_device %a : tensor<64x1024xf32> -> tensor<64x1024xf16, #spyre.layout<device_size = [16, 64, 64], stride_map = [64, 1024, 1]>>
    %1 = spyre.to_device %b : tensor<1024x2048xf32> -> tensor<1024x2048xf16, #spyre.layout<device_size = [32, 1024, 64], stride_map = [64, 2048, 1]>>
    %2 = spyre.kernel "k0"(%0, %1) : (tensor<64x1024xf16, #spyre.layout<device_size = [16, 64, 64], stride_map = [64, 1024, 1]>>, tensor<1024x2048xf16, #spyre.layout<device_size = [32, 1024, 64], stride_map = [64, 2048, 1]>>) -> tensor<64x2048xf16, #spyre.layout<device_size = [32, 64, 64], stride_map = [64, 2048, 1]>> {
    ^bb0(%3: tensor<64x1024xf16, #spyre.layout<device_size = [16, 64, 64], stride_map = [64, 1024, 1]>>, %4: tensor<1024x2048xf16, #spyre.layout<device_size = [32, 1024, 64], stride_map = [64, 2048, 1]>>):
      %5 = spyre.matmul %3, %4 : (tensor<64x1024xf16, #spyre.layout<device_size = [16, 64, 64], stride_map = [64, 1024, 1]>>, tensor<1024x2048xf16, #spyre.layout<device_size = [32, 1024, 64], stride_map = [64, 2048, 1]>>) -> tensor<64x2048xf16, #spyre.layout<device_size = [32, 64, 64], stride_map = [64, 2048, 1]>>
      spyre.yield %5 : tensor<64x2048xf16, #spyre.layout<device_size = [32, 64, 64], stride_map = [64, 2048, 1]>>
    }
    %3 = spyre.from_device %2 : tensor<64x2048xf16, #spyre.layout<device_size = [32, 64, 64], stride_map = [64, 2048, 1]>> -> tensor<64x2048xf32>
    func.return %3 : tensor<64x2048xf32>
  }
}

// -----

// DDR at 819.2 GB/s: B is read by chains of 2, n in 4 parts.
// CHECK:       builtin.module attributes {{[{]}}spyre.target = #spyre.target<ddr_bytes_per_s = 819200000000.0>{{[}]}} {
// CHECK:         spyre.kernel "k0"({{.*}}) split <n = 4, m = 2, k = 4> chunks <n = 8, m = 1, k = 1> {{.*}} multicast <chain = 2>
builtin.module attributes {spyre.target = #spyre.target<ddr_bytes_per_s = 819200000000.0>} {
  func.func @mm(%a: tensor<64x1024xf32>, %b: tensor<1024x2048xf32>) -> tensor<64x2048xf32> {
    %0 = spyre.to_device %a : tensor<64x1024xf32> -> tensor<64x1024xf16, #spyre.layout<device_size = [16, 64, 64], stride_map = [64, 1024, 1]>>
    %1 = spyre.to_device %b : tensor<1024x2048xf32> -> tensor<1024x2048xf16, #spyre.layout<device_size = [32, 1024, 64], stride_map = [64, 2048, 1]>>
    %2 = spyre.kernel "k0"(%0, %1) : (tensor<64x1024xf16, #spyre.layout<device_size = [16, 64, 64], stride_map = [64, 1024, 1]>>, tensor<1024x2048xf16, #spyre.layout<device_size = [32, 1024, 64], stride_map = [64, 2048, 1]>>) -> tensor<64x2048xf16, #spyre.layout<device_size = [32, 64, 64], stride_map = [64, 2048, 1]>> {
    ^bb0(%3: tensor<64x1024xf16, #spyre.layout<device_size = [16, 64, 64], stride_map = [64, 1024, 1]>>, %4: tensor<1024x2048xf16, #spyre.layout<device_size = [32, 1024, 64], stride_map = [64, 2048, 1]>>):
      %5 = spyre.matmul %3, %4 : (tensor<64x1024xf16, #spyre.layout<device_size = [16, 64, 64], stride_map = [64, 1024, 1]>>, tensor<1024x2048xf16, #spyre.layout<device_size = [32, 1024, 64], stride_map = [64, 2048, 1]>>) -> tensor<64x2048xf16, #spyre.layout<device_size = [32, 64, 64], stride_map = [64, 2048, 1]>>
      spyre.yield %5 : tensor<64x2048xf16, #spyre.layout<device_size = [32, 64, 64], stride_map = [64, 2048, 1]>>
    }
    %3 = spyre.from_device %2 : tensor<64x2048xf16, #spyre.layout<device_size = [32, 64, 64], stride_map = [64, 2048, 1]>> -> tensor<64x2048xf32>
    func.return %3 : tensor<64x2048xf32>
  }
}

// -----

// 8 cores: 2 row blocks x 4 k parts.
// CHECK:       builtin.module attributes {{[{]}}spyre.target = #spyre.target<cores = 8>{{[}]}} {
// CHECK:         spyre.kernel "k0"({{.*}}) split <n = 1, m = 2, k = 4> chunks <n = 16, m = 1, k = 1> {{.*}} multicast <chain = 2>
builtin.module attributes {spyre.target = #spyre.target<cores = 8>} {
  func.func @mm(%a: tensor<64x1024xf32>, %b: tensor<1024x2048xf32>) -> tensor<64x2048xf32> {
    %0 = spyre.to_device %a : tensor<64x1024xf32> -> tensor<64x1024xf16, #spyre.layout<device_size = [16, 64, 64], stride_map = [64, 1024, 1]>>
    %1 = spyre.to_device %b : tensor<1024x2048xf32> -> tensor<1024x2048xf16, #spyre.layout<device_size = [32, 1024, 64], stride_map = [64, 2048, 1]>>
    %2 = spyre.kernel "k0"(%0, %1) : (tensor<64x1024xf16, #spyre.layout<device_size = [16, 64, 64], stride_map = [64, 1024, 1]>>, tensor<1024x2048xf16, #spyre.layout<device_size = [32, 1024, 64], stride_map = [64, 2048, 1]>>) -> tensor<64x2048xf16, #spyre.layout<device_size = [32, 64, 64], stride_map = [64, 2048, 1]>> {
    ^bb0(%3: tensor<64x1024xf16, #spyre.layout<device_size = [16, 64, 64], stride_map = [64, 1024, 1]>>, %4: tensor<1024x2048xf16, #spyre.layout<device_size = [32, 1024, 64], stride_map = [64, 2048, 1]>>):
      %5 = spyre.matmul %3, %4 : (tensor<64x1024xf16, #spyre.layout<device_size = [16, 64, 64], stride_map = [64, 1024, 1]>>, tensor<1024x2048xf16, #spyre.layout<device_size = [32, 1024, 64], stride_map = [64, 2048, 1]>>) -> tensor<64x2048xf16, #spyre.layout<device_size = [32, 64, 64], stride_map = [64, 2048, 1]>>
      spyre.yield %5 : tensor<64x2048xf16, #spyre.layout<device_size = [32, 64, 64], stride_map = [64, 2048, 1]>>
    }
    %3 = spyre.from_device %2 : tensor<64x2048xf16, #spyre.layout<device_size = [32, 64, 64], stride_map = [64, 2048, 1]>> -> tensor<64x2048xf32>
    func.return %3 : tensor<64x2048xf32>
  }
}

// -----

// 128 KiB of LX (a 104832-byte budget): every buffer placed below it.
// CHECK:       builtin.module attributes {{[{]}}spyre.target = #spyre.target<lx_bytes = 131072>{{[}]}} {
// CHECK:         spyre.kernel "k0"({{.*}}) split <n = 2, m = 4, k = 4> chunks <n = 16, m = 1, k = 1> lx <{{.*}}, out_1 = 92160> multicast <chain = 4>
builtin.module attributes {spyre.target = #spyre.target<lx_bytes = 131072>} {
  func.func @mm(%a: tensor<64x1024xf32>, %b: tensor<1024x2048xf32>) -> tensor<64x2048xf32> {
    %0 = spyre.to_device %a : tensor<64x1024xf32> -> tensor<64x1024xf16, #spyre.layout<device_size = [16, 64, 64], stride_map = [64, 1024, 1]>>
    %1 = spyre.to_device %b : tensor<1024x2048xf32> -> tensor<1024x2048xf16, #spyre.layout<device_size = [32, 1024, 64], stride_map = [64, 2048, 1]>>
    %2 = spyre.kernel "k0"(%0, %1) : (tensor<64x1024xf16, #spyre.layout<device_size = [16, 64, 64], stride_map = [64, 1024, 1]>>, tensor<1024x2048xf16, #spyre.layout<device_size = [32, 1024, 64], stride_map = [64, 2048, 1]>>) -> tensor<64x2048xf16, #spyre.layout<device_size = [32, 64, 64], stride_map = [64, 2048, 1]>> {
    ^bb0(%3: tensor<64x1024xf16, #spyre.layout<device_size = [16, 64, 64], stride_map = [64, 1024, 1]>>, %4: tensor<1024x2048xf16, #spyre.layout<device_size = [32, 1024, 64], stride_map = [64, 2048, 1]>>):
      %5 = spyre.matmul %3, %4 : (tensor<64x1024xf16, #spyre.layout<device_size = [16, 64, 64], stride_map = [64, 1024, 1]>>, tensor<1024x2048xf16, #spyre.layout<device_size = [32, 1024, 64], stride_map = [64, 2048, 1]>>) -> tensor<64x2048xf16, #spyre.layout<device_size = [32, 64, 64], stride_map = [64, 2048, 1]>>
      spyre.yield %5 : tensor<64x2048xf16, #spyre.layout<device_size = [32, 64, 64], stride_map = [64, 2048, 1]>>
    }
    %3 = spyre.from_device %2 : tensor<64x2048xf16, #spyre.layout<device_size = [32, 64, 64], stride_map = [64, 2048, 1]>> -> tensor<64x2048xf32>
    func.return %3 : tensor<64x2048xf32>
  }
}
