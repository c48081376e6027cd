// RUN: spyre-opt %s -p 'spyre-divide-work{strategy=even}' --split-input-file | filecheck %s
// RUN: spyre-opt %s -p spyre-divide-work --split-input-file | filecheck %s --check-prefix=COST
// RUN: spyre-opt %s -p 'spyre-divide-work{split_k=false}' --split-input-file | filecheck %s --check-prefix=NOK
// RUN: spyre-opt %s -p 'spyre-divide-work{strategy=greedy}' --verify-diagnostics --split-input-file | filecheck %s --check-prefix=BAD
// Input: spyre-fuse's output for the kernels of inputs/kernels.mlir (a 128x256x512 matmul, a
// bias add, relu on (100, 200), a transpose, relu on (200, 100)), without epilogues (@unfused)
// and with them (@fused: the bias add is the matmul's epilogue), on the default target (32
// cores), and @unfused again on a target of 4 cores (@four_cores).
// Even splits over the cores: halve the parallel dim with the most units per core while the
// parts fit. Matmul splits n (output sticks) and m (rows), never k (strategy=cost may). Pointwise and restickify
// split the output's device dims; a transpose advances the old stick dim in blocks of 64.

// CHECK-LABEL: func.func @unfused
// 128x256x512: n has 8 sticks, m 128 rows -> n = 2 (4 sticks each), m = 16 (8 rows each)
// CHECK: spyre.kernel "k0"({{.*}}) split <n = 2, m = 16, k = 1>
// bias add on (128, 512): device dims [8 sticks, 128 rows]
// CHECK: spyre.kernel "k1"({{.*}}) split <d0 = 2, d1 = 16>
// relu on (100, 200): [4, 100] -> 25 parts of 4 rows (no empty part)
// CHECK: spyre.kernel "k2"({{.*}}) split <d0 = 1, d1 = 25>
// transpose to (200, 100): [2 sticks, 200 rows = 4 blocks of 64]
// CHECK: spyre.kernel "k3"({{.*}}) split <d0 = 2, d1 = 4>
// relu on (200, 100): 29 parts of 7 rows, the last one ragged (4 rows)
// CHECK: spyre.kernel "k4"({{.*}}) split <d0 = 1, d1 = 29>

// The default, strategy=cost, ranks every split of the matmul, with and without passing B
// tiles along the ring between the cores that share them, by its estimated time
// (analysis/cost.py). For 128x256x512 without k splits it takes 16 row blocks of 8 rows and
// two column halves on all 32 cores, two chains of 16 passing B along the ring (the first core
// of each loads its half from DDR once): 0.5 MB of DDR traffic where the even split reads
// 4.5 MB. The other kernels split as with strategy=even.
// (With the bias add the matmul's epilogue, f_k1 is the relu.)
// With k splits allowed (the default, split_k) it halves k instead of n: pairs of adjacent
// cores sum the two halves of k for the same rows and add their partial sums over the ring;
// each chain of 16 (every other core) shares half the B tiles.
// COST-LABEL: func.func @fused
// COST: spyre.kernel "f_k0"({{.*}}) split <n = 1, m = 16, k = 2> multicast <chain = 16>
// COST: spyre.kernel "f_k1"({{.*}}) split <d0 = 1, d1 = 25>
// NOK-LABEL: func.func @fused
// NOK: spyre.kernel "f_k0"({{.*}}) split <n = 2, m = 16, k = 1> multicast <chain = 16>

// BAD: spyre-divide-work: unknown strategy 'greedy' (supported: cost, even)

builtin.module {
  func.func @unfused(%x: tensor<128x256xf32>, %w: tensor<256x512xf32>, %b: tensor<512xf32>, %y: tensor<100x200xf32>) -> (tensor<128x512xf32>, tensor<200x100xf32>) {
    %0 = spyre.to_device %x : tensor<128x256xf32> -> tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>
    %1 = spyre.to_device %w : tensor<256x512xf32> -> tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>
    %2 = spyre.to_device %b : tensor<512xf32> -> tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>
    %3 = spyre.to_device %y : tensor<100x200xf32> -> tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>
    %4 = spyre.kernel "k0"(%0, %1) : (tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> {
    ^bb0(%5: tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, %6: tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>):
      %7 = spyre.matmul %5, %6 : (tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>
      spyre.yield %7 : tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>
    }
    %5 = spyre.kernel "k1"(%4, %2) : (tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> {
    ^bb0(%6: tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>, %7: tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>):
      %8 = spyre.pointwise %6, %7 : (tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> {
      ^bb0(%9: f32, %10: f32):
        %11 = arith.addf %9, %10 : f32
        spyre.yield %11 : f32
      }
      spyre.yield %8 : tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>
    }
    %6 = spyre.kernel "k2"(%3) : (tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>) -> tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>> {
    ^bb0(%7: tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>):
      %8 = spyre.pointwise %7 : (tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>) -> tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>> {
      ^bb0(%9: f32):
        %10 = arith.constant 0.000000e+00 : f32
        %11 = arith.maximumf %9, %10 : f32
        spyre.yield %11 : f32
      }
      spyre.yield %8 : tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>
    }
    %7 = spyre.permute %6 permutation [1, 0] : tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>> -> tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>>
    %8 = spyre.kernel "k3"(%7) : (tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>>) -> tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%9: tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>>):
      %10 = spyre.restickify %9 : tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>> -> tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>
      spyre.yield %10 : tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>
    }
    %9 = spyre.kernel "k4"(%8) : (tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>) -> tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%10: tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>):
      %11 = spyre.pointwise %10 : (tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>) -> tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>> {
      ^bb0(%12: f32):
        %13 = arith.constant 0.000000e+00 : f32
        %14 = arith.maximumf %12, %13 : f32
        spyre.yield %14 : f32
      }
      spyre.yield %11 : tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>
    }
    %10 = spyre.from_device %5 : tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> -> tensor<128x512xf32>
    %11 = spyre.from_device %9 : tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>> -> tensor<200x100xf32>
    func.return %10, %11 : tensor<128x512xf32>, tensor<200x100xf32>
  }
  func.func @fused(%x: tensor<128x256xf32>, %w: tensor<256x512xf32>, %b: tensor<512xf32>, %y: tensor<100x200xf32>) -> (tensor<128x512xf32>, tensor<200x100xf32>) {
    %0 = spyre.to_device %x : tensor<128x256xf32> -> tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>
    %1 = spyre.to_device %w : tensor<256x512xf32> -> tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>
    %2 = spyre.to_device %b : tensor<512xf32> -> tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>
    %3 = spyre.to_device %y : tensor<100x200xf32> -> tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>
    %4 = spyre.kernel "f_k0"(%0, %1, %2) : (tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> {
    ^bb0(%5: tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, %6: tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>, %7: tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>):
      %8 = spyre.matmul %5, %6 : (tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>
      %9 = spyre.pointwise %8, %7 : (tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> {
      ^bb0(%10: f32, %11: f32):
        %12 = arith.addf %10, %11 : f32
        spyre.yield %12 : f32
      }
      spyre.yield %9 : tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>
    }
    %5 = spyre.kernel "f_k1"(%3) : (tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>) -> tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>> {
    ^bb0(%6: tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>):
      %7 = spyre.pointwise %6 : (tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>) -> tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>> {
      ^bb0(%8: f32):
        %9 = arith.constant 0.000000e+00 : f32
        %10 = arith.maximumf %8, %9 : f32
        spyre.yield %10 : f32
      }
      spyre.yield %7 : tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>
    }
    %6 = spyre.permute %5 permutation [1, 0] : tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>> -> tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>>
    %7 = spyre.kernel "f_k2"(%6) : (tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>>) -> tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%8: tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>>):
      %9 = spyre.restickify %8 : tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>> -> tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>
      spyre.yield %9 : tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>
    }
    %8 = spyre.kernel "f_k3"(%7) : (tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>) -> tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%9: tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>):
      %10 = spyre.pointwise %9 : (tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>) -> tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>> {
      ^bb0(%11: f32):
        %12 = arith.constant 0.000000e+00 : f32
        %13 = arith.maximumf %11, %12 : f32
        spyre.yield %13 : f32
      }
      spyre.yield %10 : tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>
    }
    %9 = spyre.from_device %4 : tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> -> tensor<128x512xf32>
    %10 = spyre.from_device %8 : tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>> -> tensor<200x100xf32>
    func.return %9, %10 : tensor<128x512xf32>, tensor<200x100xf32>
  }
}

// -----

// A target of four cores: rows have the most units per part, so m is halved until the parts fit.
// CHECK-LABEL: func.func @four_cores
// CHECK: spyre.kernel "k0"({{.*}}) split <n = 1, m = 4, k = 1>
// CHECK: spyre.kernel "k2"({{.*}}) split <d0 = 1, d1 = 4>
// CHECK: spyre.kernel "k3"({{.*}}) split <d0 = 2, d1 = 2>
builtin.module attributes {spyre.target = #spyre.target<cores = 4>} {
  func.func @four_cores(%x: tensor<128x256xf32>, %w: tensor<256x512xf32>, %b: tensor<512xf32>, %y: tensor<100x200xf32>) -> (tensor<128x512xf32>, tensor<200x100xf32>) {
    %0 = spyre.to_device %x : tensor<128x256xf32> -> tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>
    %1 = spyre.to_device %w : tensor<256x512xf32> -> tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>
    %2 = spyre.to_device %b : tensor<512xf32> -> tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>
    %3 = spyre.to_device %y : tensor<100x200xf32> -> tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>
    %4 = spyre.kernel "k0"(%0, %1) : (tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> {
    ^bb0(%5: tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, %6: tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>):
      %7 = spyre.matmul %5, %6 : (tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #spyre.layout<device_size = [8, 256, 64], stride_map = [64, 512, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>
      spyre.yield %7 : tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>
    }
    %5 = spyre.kernel "k1"(%4, %2) : (tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> {
    ^bb0(%6: tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>, %7: tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>):
      %8 = spyre.pointwise %6, %7 : (tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #spyre.layout<device_size = [8, 64], stride_map = [64, 1]>>) -> tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> {
      ^bb0(%9: f32, %10: f32):
        %11 = arith.addf %9, %10 : f32
        spyre.yield %11 : f32
      }
      spyre.yield %8 : tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>
    }
    %6 = spyre.kernel "k2"(%3) : (tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>) -> tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>> {
    ^bb0(%7: tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>):
      %8 = spyre.pointwise %7 : (tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>) -> tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>> {
      ^bb0(%9: f32):
        %10 = arith.constant 0.000000e+00 : f32
        %11 = arith.maximumf %9, %10 : f32
        spyre.yield %11 : f32
      }
      spyre.yield %8 : tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>
    }
    %7 = spyre.permute %6 permutation [1, 0] : tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>> -> tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>>
    %8 = spyre.kernel "k3"(%7) : (tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>>) -> tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%9: tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>>):
      %10 = spyre.restickify %9 : tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>> -> tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>
      spyre.yield %10 : tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>
    }
    %9 = spyre.kernel "k4"(%8) : (tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>) -> tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%10: tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>):
      %11 = spyre.pointwise %10 : (tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>) -> tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>> {
      ^bb0(%12: f32):
        %13 = arith.constant 0.000000e+00 : f32
        %14 = arith.maximumf %12, %13 : f32
        spyre.yield %14 : f32
      }
      spyre.yield %11 : tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>
    }
    %10 = spyre.from_device %5 : tensor<128x512xf16, #spyre.layout<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> -> tensor<128x512xf32>
    %11 = spyre.from_device %9 : tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>> -> tensor<200x100xf32>
    func.return %10, %11 : tensor<128x512xf32>, tensor<200x100xf32>
  }
}
