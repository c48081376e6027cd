// RUN: spyre-opt %s -p spyre-resident-chains --print-remarks 2>&1 | filecheck %s
// RUN: spyre-opt %s -p 'spyre-resident-chains{split_k=false}' | filecheck %s --check-prefix=NOK
// Input: spyre-fuse's output for Linear(128, 256) -> GELU -> Linear(256, 128) on x (64, 128)
// (two matmul kernels with epilogues), and the same with the intermediate also returned, on a
// target of 4 cores.
// The MLP's intermediate stays in LX: the producer splits its rows in two and its columns in
// two, the consumer the same rows in two and its contraction (the producer's columns) in two,
// and the producer's n parts sit on the cores of the consumer's k parts (core_order: core 2
// computes the columns core 1 contracts), so every core multiplies the block it computed
// (lowering/resident-chains.mlir lowers such marks). Each pair of cores shares its weights
// along a multicast chain.

// CHECK-DAG: remark: g1_k0 -> g1_k1: the intermediate stays in LX (8192 bytes per core): split m = 2, n = k = 2, estimated {{.*}} us
// CHECK-DAG: remark: g2_k0 -> g2_k1: the intermediate goes through DDR: the intermediate has other readers (they read it from DDR)
// CHECK-LABEL: func.func @mlp
// CHECK:       spyre.kernel "g1_k0"(%{{.*}}) split <n = 2, m = 2, k = 1> multicast <chain = 2> core_order [0, 2, 1, 3] resident_out <offset = [[AT:[0-9]+]]> lx_budget <bytes = [[AT]]>
// CHECK:       spyre.kernel "g1_k1"(%{{.*}}) split <n = 1, m = 2, k = 2> multicast <chain = 2> resident_in <input = 0, offset = [[AT]]> lx_budget <bytes = [[AT]]>
// CHECK-LABEL: func.func @two_readers
// CHECK-NOT:   resident_

// Without k splits the consumer cannot take the producer's column parts: one part each.
// NOK:         spyre.kernel "g1_k0"(%{{.*}}) split <n = 1, m = {{[0-9]+}}, k = 1> {{.*}}resident_out
// NOK:         spyre.kernel "g1_k1"(%{{.*}}) split <n = 1, m = {{[0-9]+}}, k = 1> {{.*}}resident_in

builtin.module attributes {spyre.target = #spyre.target<cores = 4>} {
  func.func @mlp(%arg0: tensor<256x128xf32>, %arg1: tensor<256xf32>, %arg2: tensor<64x128xf32>, %arg3: tensor<128x256xf32>, %arg4: tensor<128xf32>) -> tensor<64x128xf32> {
    %0 = spyre.to_device %arg2 : tensor<64x128xf32> -> tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>
    %1 = spyre.to_device %arg1 : tensor<256xf32> -> tensor<256xf16, #spyre.layout<device_size = [4, 64], stride_map = [64, 1]>>
    %2 = spyre.to_device %arg0 permutation [1, 0] : tensor<256x128xf32> -> tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>
    %3 = spyre.kernel "g1_k0"(%0, %2, %1) : (tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>, tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, tensor<256xf16, #spyre.layout<device_size = [4, 64], stride_map = [64, 1]>>) -> tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%4: tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>, %5: tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, %6: tensor<256xf16, #spyre.layout<device_size = [4, 64], stride_map = [64, 1]>>):
      %7 = spyre.matmul %4, %5 : (tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>, tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>) -> tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>
      %8 = spyre.pointwise %7, %6 : (tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>, tensor<256xf16, #spyre.layout<device_size = [4, 64], stride_map = [64, 1]>>) -> tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>> {
      ^bb0(%9: f32, %10: f32):
        %11 = arith.addf %9, %10 : f32
        %12 = arith.constant 5.000000e-01 : f32
        %13 = arith.mulf %11, %12 : f32
        %14 = arith.constant 0.707106769 : f32
        %15 = arith.mulf %11, %14 : f32
        %16 = math.erf %15 : f32
        %17 = arith.constant 1.000000e+00 : f32
        %18 = arith.addf %16, %17 : f32
        %19 = arith.mulf %13, %18 : f32
        spyre.yield %19 : f32
      }
      spyre.yield %8 : tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>
    }
    %4 = spyre.to_device %arg4 : tensor<128xf32> -> tensor<128xf16, #spyre.layout<device_size = [2, 64], stride_map = [64, 1]>>
    %5 = spyre.to_device %arg3 permutation [1, 0] : tensor<128x256xf32> -> tensor<256x128xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 128, 1]>>
    %6 = spyre.kernel "g1_k1"(%3, %5, %4) : (tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>, tensor<256x128xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 128, 1]>>, tensor<128xf16, #spyre.layout<device_size = [2, 64], stride_map = [64, 1]>>) -> tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> {
    ^bb0(%7: tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>, %8: tensor<256x128xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 128, 1]>>, %9: tensor<128xf16, #spyre.layout<device_size = [2, 64], stride_map = [64, 1]>>):
      %10 = spyre.matmul %7, %8 : (tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>, tensor<256x128xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 128, 1]>>) -> tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>
      %11 = spyre.pointwise %10, %9 : (tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>, tensor<128xf16, #spyre.layout<device_size = [2, 64], stride_map = [64, 1]>>) -> tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> {
      ^bb0(%12: f32, %13: f32):
        %14 = arith.addf %12, %13 : f32
        spyre.yield %14 : f32
      }
      spyre.yield %11 : tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>
    }
    %7 = spyre.from_device %6 : tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> -> tensor<64x128xf32>
    func.return %7 : tensor<64x128xf32>
  }
  func.func @two_readers(%arg0: tensor<256x128xf32>, %arg1: tensor<256xf32>, %arg2: tensor<64x128xf32>, %arg3: tensor<128x256xf32>, %arg4: tensor<128xf32>) -> (tensor<64x128xf32>, tensor<64x256xf32>) {
    %0 = spyre.to_device %arg2 : tensor<64x128xf32> -> tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>
    %1 = spyre.to_device %arg1 : tensor<256xf32> -> tensor<256xf16, #spyre.layout<device_size = [4, 64], stride_map = [64, 1]>>
    %2 = spyre.to_device %arg0 permutation [1, 0] : tensor<256x128xf32> -> tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>
    %3 = spyre.kernel "g2_k0"(%0, %2, %1) : (tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>, tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, tensor<256xf16, #spyre.layout<device_size = [4, 64], stride_map = [64, 1]>>) -> tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%4: tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>, %5: tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, %6: tensor<256xf16, #spyre.layout<device_size = [4, 64], stride_map = [64, 1]>>):
      %7 = spyre.matmul %4, %5 : (tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>, tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>) -> tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>
      %8 = spyre.pointwise %7, %6 : (tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>, tensor<256xf16, #spyre.layout<device_size = [4, 64], stride_map = [64, 1]>>) -> tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>> {
      ^bb0(%9: f32, %10: f32):
        %11 = arith.addf %9, %10 : f32
        %12 = arith.constant 5.000000e-01 : f32
        %13 = arith.mulf %11, %12 : f32
        %14 = arith.constant 0.707106769 : f32
        %15 = arith.mulf %11, %14 : f32
        %16 = math.erf %15 : f32
        %17 = arith.constant 1.000000e+00 : f32
        %18 = arith.addf %16, %17 : f32
        %19 = arith.mulf %13, %18 : f32
        spyre.yield %19 : f32
      }
      spyre.yield %8 : tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>
    }
    %4 = spyre.to_device %arg4 : tensor<128xf32> -> tensor<128xf16, #spyre.layout<device_size = [2, 64], stride_map = [64, 1]>>
    %5 = spyre.to_device %arg3 permutation [1, 0] : tensor<128x256xf32> -> tensor<256x128xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 128, 1]>>
    %6 = spyre.kernel "g2_k1"(%3, %5, %4) : (tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>, tensor<256x128xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 128, 1]>>, tensor<128xf16, #spyre.layout<device_size = [2, 64], stride_map = [64, 1]>>) -> tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> {
    ^bb0(%7: tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>, %8: tensor<256x128xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 128, 1]>>, %9: tensor<128xf16, #spyre.layout<device_size = [2, 64], stride_map = [64, 1]>>):
      %10 = spyre.matmul %7, %8 : (tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>, tensor<256x128xf16, #spyre.layout<device_size = [2, 256, 64], stride_map = [64, 128, 1]>>) -> tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>
      %11 = spyre.pointwise %10, %9 : (tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>, tensor<128xf16, #spyre.layout<device_size = [2, 64], stride_map = [64, 1]>>) -> tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> {
      ^bb0(%12: f32, %13: f32):
        %14 = arith.addf %12, %13 : f32
        spyre.yield %14 : f32
      }
      spyre.yield %11 : tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>
    }
    %7 = spyre.from_device %6 : tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> -> tensor<64x128xf32>
    %8 = spyre.from_device %3 : tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], stride_map = [64, 256, 1]>> -> tensor<64x256xf32>
    func.return %7, %8 : tensor<64x128xf32>, tensor<64x256xf32>
  }
}
