// RUN: spyre-opt %s -p spyre-propagate-layouts | filecheck %s
// RUN: spyre-opt %s -p 'spyre-propagate-layouts{fold_transfers=false}' | filecheck %s --check-prefix=NOFOLD
// RUN: spyre-opt %s -p 'spyre-propagate-layouts{choose=false}' | filecheck %s --check-prefix=NOCHOOSE
// Input: convert-torch-to-spyre's output for small functions, one per op class. Matmul wants its operands
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

// A chain of pointwise ops on a transposed value whose result goes to the host runs in the
// transposed layout: no relayout at all (from_device reads any layout). With the choice off
// (NOCHOOSE), every result is generic and the chain's input is restickified once.
// CHECK-LABEL: func.func @pointwise_chain_on_transpose
// CHECK-NOT:     spyre.restickify
// CHECK:         %[[T:.*]] = spyre.permute %{{.*}} permutation [1, 0] : {{.*}} -> tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>>
// CHECK-NEXT:    %[[A:.*]] = spyre.pointwise %[[T]] : {{.*}} -> tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>>
// CHECK:         %[[B:.*]] = spyre.pointwise %[[A]], %[[A]]
// CHECK:         %[[C:.*]] = spyre.pointwise %[[B]], %[[T]] : {{.*}} -> tensor<200x100xf16, #spyre.layout<device_size = [4, 100, 64], stride_map = [6400, 1, 100]>>
// CHECK-NOT:     spyre.restickify
// CHECK:         spyre.from_device %[[C]]
// NOCHOOSE-LABEL: func.func @pointwise_chain_on_transpose
// NOCHOOSE:        %[[T:.*]] = spyre.permute
// NOCHOOSE-NEXT:   %[[R:.*]] = spyre.restickify %[[T]]
// NOCHOOSE-NEXT:   %[[A:.*]] = spyre.pointwise %[[R]]
// NOCHOOSE:        %[[B:.*]] = spyre.pointwise %[[A]], %[[A]]
// NOCHOOSE:        spyre.pointwise %[[B]], %[[R]]
// NOCHOOSE-NOT:    spyre.restickify
// NOCHOOSE-LABEL: func.func @reshape_folds

// A reshape of a host input folds into its transfer as well.
// CHECK-LABEL: func.func @reshape_folds
// CHECK:         %[[X:.*]] = spyre.to_device %x : tensor<2x3x128xf32> -> tensor<6x128xf16, #spyre.layout<device_size = [2, 6, 64], stride_map = [64, 128, 1]>>
// CHECK-NEXT:    spyre.matmul %[[X]]

// Into a matmul (which wants the generic layout) the chain costs one relayout wherever it
// goes; a tie keeps the converted (generic) layouts, so it is at the chain's input.
// CHECK-LABEL: func.func @chain_into_matmul
// CHECK:         %[[T:.*]] = spyre.permute
// CHECK-NEXT:    %[[R:.*]] = spyre.restickify %[[T]] : {{.*}} -> tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>
// CHECK-NEXT:    spyre.pointwise %[[R]]
// CHECK-NOT:     spyre.restickify
// CHECK:         spyre.matmul

// Reductions read their input in the generic layout: the transposed value is restickified
// before the pointwise op (a tie: before or after it costs the same).
// CHECK-LABEL: func.func @reduce_on_transpose
// CHECK:         %[[T:.*]] = spyre.permute
// CHECK-NEXT:    %[[R:.*]] = spyre.restickify %[[T]]
// CHECK-NEXT:    %[[E:.*]] = spyre.pointwise %[[R]]
// CHECK:         spyre.reduce "sum" %[[E]] dim 1
// CHECK-NOT:     spyre.restickify

// A slice copies whole sticks of the generic layout: one restickify before it.
// CHECK-LABEL: func.func @slice_of_transpose
// CHECK:         %[[T:.*]] = spyre.permute
// CHECK-NEXT:    %[[R:.*]] = spyre.restickify %[[T]]
// CHECK-NEXT:    spyre.slice %[[R]]
// CHECK-NOT:     spyre.restickify

// A bias broadcast along dim 0 cannot be read by an output sticked on dim 0 (it would need a
// lane broadcast): that candidate is infeasible, so the add is generic; its transposed input
// is restickified once, before the relu (a tie with after it).
// CHECK-LABEL: func.func @broadcast_on_transpose
// CHECK:         %[[T:.*]] = spyre.permute
// CHECK-NEXT:    %[[R:.*]] = spyre.restickify %[[T]]
// CHECK-NEXT:    %[[A:.*]] = spyre.pointwise %[[R]]
// CHECK-NOT:     spyre.restickify
// CHECK:         spyre.pointwise %[[A]], %{{.*}} : {{.*}} -> tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>


// A matmul reads an operand whose sticks hold what the generic layout's hold, in another
// order, as it is: each dim is one device dim, stepped by one stick stride (a permuted
// pointwise result, here; in attention, a softmax or a key after the head split).
// CHECK-LABEL: func.func @stick_permuted_operand
// CHECK-NOT:     spyre.restickify
// CHECK:         %[[B:.*]] = spyre.permute %{{.*}} permutation [1, 0, 2] : {{.*}} -> tensor<2x64x128xf16, #spyre.layout<device_size = [2, 2, 64, 64], stride_map = [8192, 64, 128, 1]>>
// CHECK-NOT:     spyre.restickify
// CHECK:         spyre.matmul %{{.*}}, %[[B]]

// But not one whose rows are two device dims (a reshape of (2, 3, 128) to (6, 128)): that
// is restickified to the generic layout.
// CHECK-LABEL: func.func @split_rows_operand
// CHECK:         %[[V:.*]] = spyre.reshape
// CHECK:         %[[R:.*]] = spyre.restickify %[[V]] : {{.*}} -> tensor<6x128xf16, #spyre.layout<device_size = [2, 6, 64], stride_map = [64, 128, 1]>>
// CHECK-NEXT:    spyre.matmul %[[R]], %{{.*}}

// A gather of pages viewed from a paged KV cache's own layout (each page's rows one run of
// sticks: spyre.table_rows) reads them where they are; a table whose rows are not by one
// stride (a transpose) is restickified to the generic layout first (a host table's
// restickify folds into its transfer).
// CHECK-LABEL: func.func @gather_pages_in_place
// CHECK-NOT:     spyre.restickify
// CHECK:         spyre.gather
// CHECK-LABEL: func.func @gather_transposed_table
// CHECK:         %[[T:.*]] = spyre.to_device %t permutation [1, 0] : tensor<128x64xf32> -> tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>
// CHECK-NEXT:    spyre.gather %[[T]]
// NOFOLD-LABEL:  func.func @gather_pages_in_place
// NOFOLD-NOT:    spyre.restickify
// NOFOLD:        spyre.gather
// NOFOLD-LABEL:  func.func @gather_transposed_table
// NOFOLD:        %[[R:.*]] = spyre.restickify
// NOFOLD-NEXT:   spyre.gather %[[R]]

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
  func.func @chain_into_matmul(%arg0: tensor<128x64xf32>, %arg1: tensor<128x32xf32>) -> tensor<64x32xf32> {
    %0 = spyre.to_device %arg0 : tensor<128x64xf32> -> tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>
    %1 = spyre.pointwise %0 : (tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>) -> tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>> {
    ^bb0(%2: f32):
      %3 = arith.constant 0.000000e+00 : f32
      %4 = arith.maximumf %2, %3 : f32
      spyre.yield %4 : f32
    }
    %5 = spyre.permute %1 permutation [1, 0] : tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>> -> tensor<64x128xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 1, 128]>>
    %6 = spyre.pointwise %5 : (tensor<64x128xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 1, 128]>>) -> tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> {
    ^bb0(%7: f32):
      %8 = arith.constant 0.000000e+00 : f32
      %9 = arith.maximumf %7, %8 : f32
      spyre.yield %9 : f32
    }
    %10 = spyre.pointwise %6 : (tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>) -> tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> {
    ^bb0(%11: f32):
      %12 = arith.constant 2.000000e+00 : f32
      %13 = arith.mulf %11, %12 : f32
      spyre.yield %13 : f32
    }
    %14 = spyre.to_device %arg1 : tensor<128x32xf32> -> tensor<128x32xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 32, 1]>>
    %15 = spyre.matmul %10, %14 : (tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>, tensor<128x32xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 32, 1]>>) -> tensor<64x32xf16, #spyre.layout<device_size = [1, 64, 64], stride_map = [64, 32, 1]>>
    %16 = spyre.from_device %15 : tensor<64x32xf16, #spyre.layout<device_size = [1, 64, 64], stride_map = [64, 32, 1]>> -> tensor<64x32xf32>
    func.return %16 : tensor<64x32xf32>
  }
  func.func @reduce_on_transpose(%arg0: tensor<128x64xf32>) -> tensor<64xf32> {
    %0 = spyre.to_device %arg0 : tensor<128x64xf32> -> tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>
    %1 = spyre.pointwise %0 : (tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>) -> tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>> {
    ^bb0(%2: f32):
      %3 = arith.constant 0.000000e+00 : f32
      %4 = arith.maximumf %2, %3 : f32
      spyre.yield %4 : f32
    }
    %5 = spyre.permute %1 permutation [1, 0] : tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>> -> tensor<64x128xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 1, 128]>>
    %6 = spyre.pointwise %5 : (tensor<64x128xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 1, 128]>>) -> tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> {
    ^bb0(%7: f32):
      %8 = math.exp %7 : f32
      spyre.yield %8 : f32
    }
    %9 = spyre.reduce "sum" %6 dim 1 : tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> -> tensor<64x1xf16, #spyre.layout<device_size = [1, 64, 64], stride_map = [64, 1, 0]>>
    %10 = spyre.reshape %9 : tensor<64x1xf16, #spyre.layout<device_size = [1, 64, 64], stride_map = [64, 1, 0]>> -> tensor<64xf16, #spyre.layout<device_size = [1, 64, 64], stride_map = [64, 1, 0]>>
    %11 = spyre.from_device %10 : tensor<64xf16, #spyre.layout<device_size = [1, 64, 64], stride_map = [64, 1, 0]>> -> tensor<64xf32>
    func.return %11 : tensor<64xf32>
  }
  func.func @slice_of_transpose(%arg0: tensor<128x96xf32>) -> tensor<96x64xf32> {
    %0 = spyre.to_device %arg0 : tensor<128x96xf32> -> tensor<128x96xf16, #spyre.layout<device_size = [2, 128, 64], stride_map = [64, 96, 1]>>
    %1 = spyre.pointwise %0 : (tensor<128x96xf16, #spyre.layout<device_size = [2, 128, 64], stride_map = [64, 96, 1]>>) -> tensor<128x96xf16, #spyre.layout<device_size = [2, 128, 64], stride_map = [64, 96, 1]>> {
    ^bb0(%2: f32):
      %3 = arith.constant 0.000000e+00 : f32
      %4 = arith.maximumf %2, %3 : f32
      spyre.yield %4 : f32
    }
    %5 = spyre.permute %1 permutation [1, 0] : tensor<128x96xf16, #spyre.layout<device_size = [2, 128, 64], stride_map = [64, 96, 1]>> -> tensor<96x128xf16, #spyre.layout<device_size = [2, 128, 64], stride_map = [8192, 1, 128]>>
    %6 = spyre.slice %5 start [0, 0] : tensor<96x128xf16, #spyre.layout<device_size = [2, 128, 64], stride_map = [8192, 1, 128]>> -> tensor<96x64xf16, #spyre.layout<device_size = [1, 96, 64], stride_map = [64, 64, 1]>>
    %7 = spyre.pointwise %6 : (tensor<96x64xf16, #spyre.layout<device_size = [1, 96, 64], stride_map = [64, 64, 1]>>) -> tensor<96x64xf16, #spyre.layout<device_size = [1, 96, 64], stride_map = [64, 64, 1]>> {
    ^bb0(%8: f32):
      %9 = arith.constant 1.000000e+00 : f32
      %10 = arith.addf %8, %9 : f32
      spyre.yield %10 : f32
    }
    %11 = spyre.from_device %7 : tensor<96x64xf16, #spyre.layout<device_size = [1, 96, 64], stride_map = [64, 64, 1]>> -> tensor<96x64xf32>
    func.return %11 : tensor<96x64xf32>
  }
  func.func @broadcast_on_transpose(%arg0: tensor<128x64xf32>, %arg1: tensor<128xf32>) -> tensor<64x128xf32> {
    %0 = spyre.to_device %arg0 : tensor<128x64xf32> -> tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>
    %1 = spyre.pointwise %0 : (tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>) -> tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>> {
    ^bb0(%2: f32):
      %3 = arith.constant 0.000000e+00 : f32
      %4 = arith.maximumf %2, %3 : f32
      spyre.yield %4 : f32
    }
    %5 = spyre.permute %1 permutation [1, 0] : tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>> -> tensor<64x128xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 1, 128]>>
    %6 = spyre.pointwise %5 : (tensor<64x128xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 1, 128]>>) -> tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> {
    ^bb0(%7: f32):
      %8 = arith.constant 0.000000e+00 : f32
      %9 = arith.maximumf %7, %8 : f32
      spyre.yield %9 : f32
    }
    %10 = spyre.to_device %arg1 : tensor<128xf32> -> tensor<128xf16, #spyre.layout<device_size = [2, 64], stride_map = [64, 1]>>
    %11 = spyre.pointwise %6, %10 : (tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>, tensor<128xf16, #spyre.layout<device_size = [2, 64], stride_map = [64, 1]>>) -> tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> {
    ^bb0(%12: f32, %13: f32):
      %14 = arith.addf %12, %13 : f32
      spyre.yield %14 : f32
    }
    %15 = spyre.from_device %11 : tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> -> tensor<64x128xf32>
    func.return %15 : tensor<64x128xf32>
  }

  func.func @stick_permuted_operand(%a: tensor<2x64x64xf32>, %x: tensor<64x2x128xf32>) -> tensor<2x64x128xf32> {
    %0 = spyre.to_device %x : tensor<64x2x128xf32> -> tensor<64x2x128xf16, #spyre.layout<device_size = [2, 2, 64, 64], stride_map = [128, 64, 256, 1]>>
    %1 = spyre.pointwise %0 : (tensor<64x2x128xf16, #spyre.layout<device_size = [2, 2, 64, 64], stride_map = [128, 64, 256, 1]>>) -> tensor<64x2x128xf16, #spyre.layout<device_size = [2, 2, 64, 64], stride_map = [128, 64, 256, 1]>> {
    ^bb0(%2: f32):
      %3 = arith.constant 0.000000e+00 : f32
      %4 = arith.maximumf %2, %3 : f32
      spyre.yield %4 : f32
    }
    %5 = spyre.permute %1 permutation [1, 0, 2] : tensor<64x2x128xf16, #spyre.layout<device_size = [2, 2, 64, 64], stride_map = [128, 64, 256, 1]>> -> tensor<2x64x128xf16, #spyre.layout<device_size = [2, 2, 64, 64], stride_map = [8192, 64, 128, 1]>>
    %6 = spyre.to_device %a : tensor<2x64x64xf32> -> tensor<2x64x64xf16, #spyre.layout<device_size = [64, 1, 2, 64], stride_map = [64, 64, 4096, 1]>>
    %7 = spyre.matmul %6, %5 : (tensor<2x64x64xf16, #spyre.layout<device_size = [64, 1, 2, 64], stride_map = [64, 64, 4096, 1]>>, tensor<2x64x128xf16, #spyre.layout<device_size = [2, 2, 64, 64], stride_map = [8192, 64, 128, 1]>>) -> tensor<2x64x128xf16, #spyre.layout<device_size = [64, 2, 2, 64], stride_map = [128, 64, 8192, 1]>>
    %8 = spyre.from_device %7 : tensor<2x64x128xf16, #spyre.layout<device_size = [64, 2, 2, 64], stride_map = [128, 64, 8192, 1]>> -> tensor<2x64x128xf32>
    func.return %8 : tensor<2x64x128xf32>
  }

  func.func @split_rows_operand(%x: tensor<2x3x128xf32>, %w: tensor<128x64xf32>) -> tensor<6x64xf32> {
    %0 = spyre.to_device %x : tensor<2x3x128xf32> -> tensor<2x3x128xf16, #spyre.layout<device_size = [3, 2, 2, 64], stride_map = [128, 64, 384, 1]>>
    %1 = spyre.pointwise %0 : (tensor<2x3x128xf16, #spyre.layout<device_size = [3, 2, 2, 64], stride_map = [128, 64, 384, 1]>>) -> tensor<2x3x128xf16, #spyre.layout<device_size = [3, 2, 2, 64], stride_map = [128, 64, 384, 1]>> {
    ^bb0(%2: f32):
      %3 = arith.constant 0.000000e+00 : f32
      %4 = arith.maximumf %2, %3 : f32
      spyre.yield %4 : f32
    }
    %5 = spyre.reshape %1 : tensor<2x3x128xf16, #spyre.layout<device_size = [3, 2, 2, 64], stride_map = [128, 64, 384, 1]>> -> tensor<6x128xf16, #spyre.layout<device_size = [3, 2, 2, 64], stride_map = [128, 64, 384, 1]>>
    %6 = spyre.to_device %w : tensor<128x64xf32> -> tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>
    %7 = spyre.matmul %5, %6 : (tensor<6x128xf16, #spyre.layout<device_size = [3, 2, 2, 64], stride_map = [128, 64, 384, 1]>>, tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>) -> tensor<6x64xf16, #spyre.layout<device_size = [1, 6, 64], stride_map = [64, 64, 1]>>
    %8 = spyre.from_device %7 : tensor<6x64xf16, #spyre.layout<device_size = [1, 6, 64], stride_map = [64, 64, 1]>> -> tensor<6x64xf32>
    func.return %8 : tensor<6x64xf32>
  }

  func.func @gather_pages_in_place(%cache: tensor<1x192x128xf32>, %pages: tensor<3xsi64>) -> tensor<3x2048xf32> {
    %0 = spyre.to_device %cache : tensor<1x192x128xf32> -> tensor<1x192x128xf16, #spyre.layout<device_size = [192, 2, 1, 64], stride_map = [128, 64, 24576, 1]>>
    %1 = spyre.reshape %0 : tensor<1x192x128xf16, #spyre.layout<device_size = [192, 2, 1, 64], stride_map = [128, 64, 24576, 1]>> -> tensor<12x2048xf16, #spyre.layout<device_size = [12, 32, 1, 64], stride_map = [2048, 64, 24576, 1]>>
    %2 = spyre.gather %1[%pages] : (tensor<12x2048xf16, #spyre.layout<device_size = [12, 32, 1, 64], stride_map = [2048, 64, 24576, 1]>>, tensor<3xsi64>) -> tensor<3x2048xf16, #spyre.layout<device_size = [32, 3, 64], stride_map = [64, 2048, 1]>>
    %3 = spyre.from_device %2 : tensor<3x2048xf16, #spyre.layout<device_size = [32, 3, 64], stride_map = [64, 2048, 1]>> -> tensor<3x2048xf32>
    func.return %3 : tensor<3x2048xf32>
  }

  func.func @gather_transposed_table(%t: tensor<128x64xf32>, %rows: tensor<3xsi64>) -> tensor<3x128xf32> {
    %0 = spyre.to_device %t : tensor<128x64xf32> -> tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>
    %1 = spyre.permute %0 permutation [1, 0] : tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 64, 1]>> -> tensor<64x128xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 1, 128]>>
    %2 = spyre.gather %1[%rows] : (tensor<64x128xf16, #spyre.layout<device_size = [1, 128, 64], stride_map = [64, 1, 128]>>, tensor<3xsi64>) -> tensor<3x128xf16, #spyre.layout<device_size = [2, 3, 64], stride_map = [64, 128, 1]>>
    %3 = spyre.from_device %2 : tensor<3x128xf16, #spyre.layout<device_size = [2, 3, 64], stride_map = [64, 128, 1]>> -> tensor<3x128xf32>
    func.return %3 : tensor<3x128xf32>
  }
}
