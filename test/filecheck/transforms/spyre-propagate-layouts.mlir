// RUN: spyre-opt %s -p spyre-propagate-layouts | filecheck %s
// RUN: spyre-opt %s -p 'spyre-propagate-layouts{fold_transfers=false}' | filecheck %s --check-prefix=NOFOLD
// Input: convert-torch-to-spyre's output for four small functions. Matmul wants its operands
// in the generic stick layout (A sticked on K, B on N); pointwise wants its inputs' sticks to
// hold the output's elements. Relayouts of host inputs fold into the transfer.

// CHECK-LABEL: func.func @weight_transpose_folds
// CHECK:         %[[W:.*]] = spyre.to_device %w permutation [1, 0] : tensor<64x128xf32> -> tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>
// CHECK-NOT:     spyre.restickify
// CHECK:         spyre.matmul %{{.*}}, %[[W]]
// NOFOLD-LABEL:  func.func @weight_transpose_folds
// NOFOLD:        %[[P:.*]] = spyre.permute
// NOFOLD-NEXT:   %[[R:.*]] = spyre.restickify %[[P]] : tensor<128x64xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [4096, 1, 64]>> -> tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>
// NOFOLD-NEXT:   spyre.matmul %{{.*}}, %[[R]]

// A transposed activation is moved on the device, once, right before the matmul.
// CHECK-LABEL: func.func @activation_transpose_moves
// CHECK:         %[[T:.*]] = spyre.permute
// CHECK-NEXT:    %[[R:.*]] = spyre.restickify %[[T]] : tensor<128x128xf16, #spyre.layout<device_size = [2, 128, 64], stride_map = [8192, 1, 128]>> -> tensor<128x128xf16, #spyre.layout<device_size = [2, 128, 64], stride_map = [64, 128, 1]>>
// CHECK-NEXT:    spyre.matmul %[[R]], %{{.*}}

// A chain of pointwise ops on a transposed value restickifies it once; later links read the
// generic result.
// CHECK-LABEL: func.func @pointwise_chain_on_transpose
// CHECK:         %[[T:.*]] = spyre.permute
// CHECK-NEXT:    %[[R:.*]] = spyre.restickify %[[T]]
// CHECK-NEXT:    %[[A:.*]] = spyre.pointwise %[[R]]
// CHECK:         %[[B:.*]] = spyre.pointwise %[[A]], %[[A]]
// CHECK:         spyre.pointwise %[[B]], %[[R]]
// CHECK-NOT:     spyre.restickify

// A reshape of a host input folds into its transfer as well.
// CHECK-LABEL: func.func @reshape_folds
// CHECK:         %[[X:.*]] = spyre.to_device %x : tensor<2x3x128xf32> -> tensor<6x128xf16, #spyre.layout<device_size = [2, 6, 64], stride_map = [64, 128, 1]>>
// CHECK-NEXT:    spyre.matmul %[[X]]

builtin.module {
  func.func @weight_transpose_folds(%x: tensor<8x128xf32>, %w: tensor<64x128xf32>) -> tensor<8x64xf32> {
    %0 = spyre.to_device %x : tensor<8x128xf32> -> tensor<8x128xf16, #spyre.layout<device_size = [2, 8, 64], stride_map = [64, 128, 1]>>
    %1 = spyre.to_device %w : tensor<64x128xf32> -> tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>
    %2 = spyre.permute %1 permutation [1, 0] : tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> -> tensor<128x64xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [4096, 1, 64]>>
    %3 = spyre.matmul %0, %2 : (tensor<8x128xf16, #spyre.layout<device_size = [2, 8, 64], stride_map = [64, 128, 1]>>, tensor<128x64xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [4096, 1, 64]>>) -> tensor<8x64xf16, #spyre.layout<device_size = [1, 8, 64], stride_map = [64, 64, 1]>>
    %4 = spyre.from_device %3 : tensor<8x64xf16, #spyre.layout<device_size = [1, 8, 64], stride_map = [64, 64, 1]>> -> tensor<8x64xf32>
    func.return %4 : tensor<8x64xf32>
  }
  func.func @activation_transpose_moves(%x: tensor<128x128xf32>, %w: tensor<128x64xf32>) -> tensor<128x64xf32> {
    %0 = spyre.to_device %x : tensor<128x128xf32> -> tensor<128x128xf16, #spyre.layout<device_size = [2, 128, 64], stride_map = [64, 128, 1]>>
    %1 = spyre.to_device %w : tensor<128x64xf32> -> tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>
    %2 = spyre.pointwise %0 : (tensor<128x128xf16, #spyre.layout<device_size = [2, 128, 64], stride_map = [64, 128, 1]>>) -> tensor<128x128xf16, #spyre.layout<device_size = [2, 128, 64], stride_map = [64, 128, 1]>> {
    ^bb0(%3: f32):
      %4 = arith.constant 0.000000e+00 : f32
      %5 = arith.maximumf %3, %4 : f32
      spyre.yield %5 : f32
    }
    %6 = spyre.permute %2 permutation [1, 0] : tensor<128x128xf16, #spyre.layout<device_size = [2, 128, 64], stride_map = [64, 128, 1]>> -> tensor<128x128xf16, #spyre.layout<device_size = [2, 128, 64], stride_map = [8192, 1, 128]>>
    %7 = spyre.matmul %6, %1 : (tensor<128x128xf16, #spyre.layout<device_size = [2, 128, 64], stride_map = [8192, 1, 128]>>, tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>) -> tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>
    %8 = spyre.from_device %7 : tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>> -> tensor<128x64xf32>
    func.return %8 : tensor<128x64xf32>
  }
  func.func @pointwise_chain_on_transpose(%x: tensor<100x200xf32>) -> tensor<200x100xf32> {
    %0 = spyre.to_device %x : tensor<100x200xf32> -> tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>
    %1 = spyre.pointwise %0 : (tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>>) -> tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>> {
    ^bb0(%2: f32):
      %3 = arith.constant 0.000000e+00 : f32
      %4 = arith.maximumf %2, %3 : f32
      spyre.yield %4 : f32
    }
    %5 = spyre.permute %1 permutation [1, 0] : tensor<100x200xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>> -> tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>>
    %6 = spyre.pointwise %5 : (tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>>) -> tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%7: f32):
      %8 = arith.constant 0.000000e+00 : f32
      %9 = arith.maximumf %7, %8 : f32
      spyre.yield %9 : f32
    }
    %10 = spyre.pointwise %6, %6 : (tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>, tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>) -> tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%11: f32, %12: f32):
      %13 = arith.addf %11, %12 : f32
      spyre.yield %13 : f32
    }
    %14 = spyre.pointwise %10, %5 : (tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>>, tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>>) -> tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>> {
    ^bb0(%15: f32, %16: f32):
      %17 = arith.addf %15, %16 : f32
      spyre.yield %17 : f32
    }
    %18 = spyre.from_device %14 : tensor<200x100xf16, #spyre.layout<device_size = [2, 200, 64], stride_map = [64, 100, 1]>> -> tensor<200x100xf32>
    func.return %18 : tensor<200x100xf32>
  }
  func.func @reshape_folds(%x: tensor<2x3x128xf32>, %w: tensor<128x64xf32>) -> tensor<6x64xf32> {
    %0 = spyre.to_device %x : tensor<2x3x128xf32> -> tensor<2x3x128xf16, #spyre.layout<device_size = [3, 2, 2, 64], stride_map = [128, 64, 384, 1]>>
    %1 = spyre.to_device %w : tensor<128x64xf32> -> tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>
    %2 = spyre.reshape %0 : tensor<2x3x128xf16, #spyre.layout<device_size = [3, 2, 2, 64], stride_map = [128, 64, 384, 1]>> -> tensor<6x128xf16, #spyre.layout<device_size = [3, 2, 2, 64], stride_map = [128, 64, 384, 1]>>
    %3 = spyre.matmul %2, %1 : (tensor<6x128xf16, #spyre.layout<device_size = [3, 2, 2, 64], stride_map = [128, 64, 384, 1]>>, tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>) -> tensor<6x64xf16, #spyre.layout<device_size = [1, 6, 64], stride_map = [64, 64, 1]>>
    %4 = spyre.from_device %3 : tensor<6x64xf16, #spyre.layout<device_size = [1, 6, 64], stride_map = [64, 64, 1]>> -> tensor<6x64xf32>
    func.return %4 : tensor<6x64xf32>
  }
}

