// RUN: spyre-opt %s -p spyre-fold-infinity-tests --split-input-file | filecheck %s
// RUN: spyre-run %S/../inputs/safe-softmax.mlir --reference --no-profile | filecheck %s --check-prefix=EXEC
// RUN: spyre-run %S/../inputs/safe-softmax.mlir --reference --no-profile --config numerics=ieee-fp16 | filecheck %s --check-prefix=EXEC
// RUN: spyre-opt %S/../inputs/safe-softmax.mlir -p spyre-pipeline -o %t.mlir
// RUN: not spyre-run %t.mlir --no-profile --config numerics=ieee-fp16 2>&1 | filecheck %s --check-prefix=REFUSED
// spyre-fold-infinity-tests: DL16 holds no infinity, so a host test of a device value
// against -inf is all false. torch's _safe_softmax, where(all(y == -inf, -1), 0, softmax(y)),
// becomes softmax(y): no transfer back of y and of the softmax, no host test, no mask or
// zeros sent, no select; the module records that it assumed DL16, and a device model with
// another numerics mode refuses it. On a target with IEEE fp16 numerics, which has
// infinities, nothing is folded (the last module). A module without a target is given the
// default one (DL16), which the output shows.
// The inputs are convert-torch-to-spyre's output (the softmax on the device, the tests on the
// host); inputs/safe-softmax.mlir is the torch-level @main, run end to end (EXEC, REFUSED).

// EXEC:        within the {{.*}} bound: yes
// REFUSED:     spyre-run: error: {{.*}}compiled for numerics 'dl16'{{.*}}runs 'ieee-fp16'
// REFUSED-NOT: Traceback

// A host value (here the argument) may hold -inf: nothing is folded, nothing recorded.
// CHECK-NOT:    spyre.numerics
// CHECK-LABEL:  func.func @host_value
// CHECK:          torch.aten.eq.Scalar %x
// CHECK:          arith.select
func.func @host_value(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %x_1 = builtin.unrealized_conversion_cast %x : tensor<4x64xf32> to !torch.vtensor<[4,64],f32>
  %int1 = torch.constant.int 1
  %int-1 = torch.constant.int -1
  %int0 = torch.constant.int 0
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %none = torch.constant.none
  %ninf = torch.constant.float 0xFFF0000000000000
  %0 = spyre.to_device %x : tensor<4x64xf32> -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
  %y = spyre.pointwise %0, %0 : (tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  ^bb0(%1: f32, %2: f32):
    %3 = arith.addf %1, %2 : f32
    spyre.yield %3 : f32
  }
  %s = spyre.reduce "max" %y dim 1 : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, 0]>>
  %s_1 = spyre.pointwise %y, %s : (tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, 0]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  ^bb0(%4: f32, %5: f32):
    %6 = arith.subf %4, %5 : f32
    %7 = math.exp %6 : f32
    spyre.yield %7 : f32
  }
  %s_2 = spyre.reduce "sum" %s_1 dim 1 : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, 0]>>
  %s_3 = spyre.pointwise %s_1, %s_2 : (tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, 0]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  ^bb0(%8: f32, %9: f32):
    %10 = arith.divf %8, %9 : f32
    spyre.yield %10 : f32
  }
  %e = torch.aten.eq.Scalar %x_1, %ninf {spyre.host = "computes an integer/boolean mask (host)"} : !torch.vtensor<[4,64],f32>, !torch.float -> !torch.vtensor<[4,64],i1>
  %n = torch.aten.logical_not %e {spyre.host = "integer/boolean tensors stay on the host"} : !torch.vtensor<[4,64],i1> -> !torch.vtensor<[4,64],i1>
  %a = torch.aten.any.dim %n, %int-1, %true {spyre.host = "integer/boolean tensors stay on the host"} : !torch.vtensor<[4,64],i1>, !torch.int, !torch.bool -> !torch.vtensor<[4,1],i1>
  %m = torch.aten.logical_not %a {spyre.host = "integer/boolean tensors stay on the host"} : !torch.vtensor<[4,1],i1> -> !torch.vtensor<[4,1],i1>
  %11 = spyre.from_device %s_3 : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf32>
  %12 = builtin.unrealized_conversion_cast %11 : tensor<4x64xf32> to !torch.vtensor<[4,64],f32>
  %z = torch.aten.full_like %12, %int0, %none, %none, %none, %false, %int1 {spyre.host = "a constant made from shapes and numbers (host-built)"} : !torch.vtensor<[4,64],f32>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.int -> !torch.vtensor<[4,64],f32>
  %13 = builtin.unrealized_conversion_cast %m : !torch.vtensor<[4,1],i1> to tensor<4x1xi1>
  %14 = spyre.to_device %13 : tensor<4x1xi1> -> tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, -1]>>
  %15 = builtin.unrealized_conversion_cast %z : !torch.vtensor<[4,64],f32> to tensor<4x64xf32>
  %16 = spyre.to_device %15 : tensor<4x64xf32> -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
  %w = spyre.pointwise %14, %16, %s_3 : (tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, -1]>>, tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  ^bb0(%17: f32, %18: f32, %19: f32):
    %20 = arith.constant 0.000000e+00 : f32
    %21 = arith.cmpf one, %17, %20 : f32
    %22 = arith.select %21, %18, %19 : f32
    spyre.yield %22 : f32
  }
  %23 = spyre.from_device %w : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf32>
  func.return %23 : tensor<4x64xf32>
}

// -----

// A test against a finite number is left alone.
// CHECK-NOT:    spyre.numerics
// CHECK-LABEL:  func.func @finite
// CHECK:          torch.aten.eq.Scalar
// CHECK:          arith.select
func.func @finite(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %int1 = torch.constant.int 1
  %int-1 = torch.constant.int -1
  %int0 = torch.constant.int 0
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %none = torch.constant.none
  %ninf = torch.constant.float -1.000000e+04
  %0 = spyre.to_device %x : tensor<4x64xf32> -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
  %y = spyre.pointwise %0, %0 : (tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  ^bb0(%1: f32, %2: f32):
    %3 = arith.addf %1, %2 : f32
    spyre.yield %3 : f32
  }
  %s = spyre.reduce "max" %y dim 1 : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, 0]>>
  %s_1 = spyre.pointwise %y, %s : (tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, 0]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  ^bb0(%4: f32, %5: f32):
    %6 = arith.subf %4, %5 : f32
    %7 = math.exp %6 : f32
    spyre.yield %7 : f32
  }
  %s_2 = spyre.reduce "sum" %s_1 dim 1 : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, 0]>>
  %s_3 = spyre.pointwise %s_1, %s_2 : (tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, 0]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  ^bb0(%8: f32, %9: f32):
    %10 = arith.divf %8, %9 : f32
    spyre.yield %10 : f32
  }
  %11 = spyre.from_device %y : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf32>
  %12 = builtin.unrealized_conversion_cast %11 : tensor<4x64xf32> to !torch.vtensor<[4,64],f32>
  %e = torch.aten.eq.Scalar %12, %ninf {spyre.host = "computes an integer/boolean mask (host)"} : !torch.vtensor<[4,64],f32>, !torch.float -> !torch.vtensor<[4,64],i1>
  %n = torch.aten.logical_not %e {spyre.host = "integer/boolean tensors stay on the host"} : !torch.vtensor<[4,64],i1> -> !torch.vtensor<[4,64],i1>
  %a = torch.aten.any.dim %n, %int-1, %true {spyre.host = "integer/boolean tensors stay on the host"} : !torch.vtensor<[4,64],i1>, !torch.int, !torch.bool -> !torch.vtensor<[4,1],i1>
  %m = torch.aten.logical_not %a {spyre.host = "integer/boolean tensors stay on the host"} : !torch.vtensor<[4,1],i1> -> !torch.vtensor<[4,1],i1>
  %13 = spyre.from_device %s_3 : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf32>
  %14 = builtin.unrealized_conversion_cast %13 : tensor<4x64xf32> to !torch.vtensor<[4,64],f32>
  %z = torch.aten.full_like %14, %int0, %none, %none, %none, %false, %int1 {spyre.host = "a constant made from shapes and numbers (host-built)"} : !torch.vtensor<[4,64],f32>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.int -> !torch.vtensor<[4,64],f32>
  %15 = builtin.unrealized_conversion_cast %m : !torch.vtensor<[4,1],i1> to tensor<4x1xi1>
  %16 = spyre.to_device %15 : tensor<4x1xi1> -> tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, -1]>>
  %17 = builtin.unrealized_conversion_cast %z : !torch.vtensor<[4,64],f32> to tensor<4x64xf32>
  %18 = spyre.to_device %17 : tensor<4x64xf32> -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
  %w = spyre.pointwise %16, %18, %s_3 : (tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, -1]>>, tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  ^bb0(%19: f32, %20: f32, %21: f32):
    %22 = arith.constant 0.000000e+00 : f32
    %23 = arith.cmpf one, %19, %22 : f32
    %24 = arith.select %23, %20, %21 : f32
    spyre.yield %24 : f32
  }
  %25 = spyre.from_device %w : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf32>
  func.return %25 : tensor<4x64xf32>
}

// -----

// torch's _safe_softmax on a device value y = x + x (attention's, as decomposed by
// aot_autograd).
// CHECK:       builtin.module attributes {{[{]}}spyre.target = #spyre.target, spyre.numerics = "dl16"{{[}]}}
// CHECK-LABEL: func.func @main
// CHECK-NOT:     torch.aten
// CHECK-NOT:     arith.select
// CHECK:           arith.divf
// CHECK-NEXT:      spyre.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[R:.*]] = spyre.from_device
// CHECK-NEXT:    func.return %[[R]]

func.func @main(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %int1 = torch.constant.int 1
  %int-1 = torch.constant.int -1
  %int0 = torch.constant.int 0
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %none = torch.constant.none
  %ninf = torch.constant.float 0xFFF0000000000000
  %0 = spyre.to_device %x : tensor<4x64xf32> -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
  %y = spyre.pointwise %0, %0 : (tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  ^bb0(%1: f32, %2: f32):
    %3 = arith.addf %1, %2 : f32
    spyre.yield %3 : f32
  }
  %s = spyre.reduce "max" %y dim 1 : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, 0]>>
  %s_1 = spyre.pointwise %y, %s : (tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, 0]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  ^bb0(%4: f32, %5: f32):
    %6 = arith.subf %4, %5 : f32
    %7 = math.exp %6 : f32
    spyre.yield %7 : f32
  }
  %s_2 = spyre.reduce "sum" %s_1 dim 1 : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, 0]>>
  %s_3 = spyre.pointwise %s_1, %s_2 : (tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, 0]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  ^bb0(%8: f32, %9: f32):
    %10 = arith.divf %8, %9 : f32
    spyre.yield %10 : f32
  }
  %11 = spyre.from_device %y : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf32>
  %12 = builtin.unrealized_conversion_cast %11 : tensor<4x64xf32> to !torch.vtensor<[4,64],f32>
  %e = torch.aten.eq.Scalar %12, %ninf {spyre.host = "computes an integer/boolean mask (host)"} : !torch.vtensor<[4,64],f32>, !torch.float -> !torch.vtensor<[4,64],i1>
  %n = torch.aten.logical_not %e {spyre.host = "integer/boolean tensors stay on the host"} : !torch.vtensor<[4,64],i1> -> !torch.vtensor<[4,64],i1>
  %a = torch.aten.any.dim %n, %int-1, %true {spyre.host = "integer/boolean tensors stay on the host"} : !torch.vtensor<[4,64],i1>, !torch.int, !torch.bool -> !torch.vtensor<[4,1],i1>
  %m = torch.aten.logical_not %a {spyre.host = "integer/boolean tensors stay on the host"} : !torch.vtensor<[4,1],i1> -> !torch.vtensor<[4,1],i1>
  %13 = spyre.from_device %s_3 : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf32>
  %14 = builtin.unrealized_conversion_cast %13 : tensor<4x64xf32> to !torch.vtensor<[4,64],f32>
  %z = torch.aten.full_like %14, %int0, %none, %none, %none, %false, %int1 {spyre.host = "a constant made from shapes and numbers (host-built)"} : !torch.vtensor<[4,64],f32>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.int -> !torch.vtensor<[4,64],f32>
  %15 = builtin.unrealized_conversion_cast %m : !torch.vtensor<[4,1],i1> to tensor<4x1xi1>
  %16 = spyre.to_device %15 : tensor<4x1xi1> -> tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, -1]>>
  %17 = builtin.unrealized_conversion_cast %z : !torch.vtensor<[4,64],f32> to tensor<4x64xf32>
  %18 = spyre.to_device %17 : tensor<4x64xf32> -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
  %w = spyre.pointwise %16, %18, %s_3 : (tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, -1]>>, tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  ^bb0(%19: f32, %20: f32, %21: f32):
    %22 = arith.constant 0.000000e+00 : f32
    %23 = arith.cmpf one, %19, %22 : f32
    %24 = arith.select %23, %20, %21 : f32
    spyre.yield %24 : f32
  }
  %25 = spyre.from_device %w : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf32>
  func.return %25 : tensor<4x64xf32>
}

// -----

// The same on a target with IEEE fp16 numerics: nothing is folded, nothing recorded.
// CHECK:        builtin.module attributes {{[{]}}spyre.target = #spyre.target<numerics = "ieee-fp16">{{[}]}}
// CHECK-LABEL:  func.func @ieee_fp16
// CHECK:          torch.aten.eq.Scalar
// CHECK:          torch.aten.any.dim
// CHECK:          arith.select
builtin.module attributes {spyre.target = #spyre.target<numerics = "ieee-fp16">} {
  func.func @ieee_fp16(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
    %int1 = torch.constant.int 1
    %int-1 = torch.constant.int -1
    %int0 = torch.constant.int 0
    %false = torch.constant.bool false
    %true = torch.constant.bool true
    %none = torch.constant.none
    %ninf = torch.constant.float 0xFFF0000000000000
    %0 = spyre.to_device %x : tensor<4x64xf32> -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
    %y = spyre.pointwise %0, %0 : (tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
    ^bb0(%1: f32, %2: f32):
      %3 = arith.addf %1, %2 : f32
      spyre.yield %3 : f32
    }
    %s = spyre.reduce "max" %y dim 1 : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, 0]>>
    %s_1 = spyre.pointwise %y, %s : (tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, 0]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
    ^bb0(%4: f32, %5: f32):
      %6 = arith.subf %4, %5 : f32
      %7 = math.exp %6 : f32
      spyre.yield %7 : f32
    }
    %s_2 = spyre.reduce "sum" %s_1 dim 1 : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, 0]>>
    %s_3 = spyre.pointwise %s_1, %s_2 : (tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, 0]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
    ^bb0(%8: f32, %9: f32):
      %10 = arith.divf %8, %9 : f32
      spyre.yield %10 : f32
    }
    %11 = spyre.from_device %y : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf32>
    %12 = builtin.unrealized_conversion_cast %11 : tensor<4x64xf32> to !torch.vtensor<[4,64],f32>
    %e = torch.aten.eq.Scalar %12, %ninf {spyre.host = "computes an integer/boolean mask (host)"} : !torch.vtensor<[4,64],f32>, !torch.float -> !torch.vtensor<[4,64],i1>
    %n = torch.aten.logical_not %e {spyre.host = "integer/boolean tensors stay on the host"} : !torch.vtensor<[4,64],i1> -> !torch.vtensor<[4,64],i1>
    %a = torch.aten.any.dim %n, %int-1, %true {spyre.host = "integer/boolean tensors stay on the host"} : !torch.vtensor<[4,64],i1>, !torch.int, !torch.bool -> !torch.vtensor<[4,1],i1>
    %m = torch.aten.logical_not %a {spyre.host = "integer/boolean tensors stay on the host"} : !torch.vtensor<[4,1],i1> -> !torch.vtensor<[4,1],i1>
    %13 = spyre.from_device %s_3 : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf32>
    %14 = builtin.unrealized_conversion_cast %13 : tensor<4x64xf32> to !torch.vtensor<[4,64],f32>
    %z = torch.aten.full_like %14, %int0, %none, %none, %none, %false, %int1 {spyre.host = "a constant made from shapes and numbers (host-built)"} : !torch.vtensor<[4,64],f32>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.int -> !torch.vtensor<[4,64],f32>
    %15 = builtin.unrealized_conversion_cast %m : !torch.vtensor<[4,1],i1> to tensor<4x1xi1>
    %16 = spyre.to_device %15 : tensor<4x1xi1> -> tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, -1]>>
    %17 = builtin.unrealized_conversion_cast %z : !torch.vtensor<[4,64],f32> to tensor<4x64xf32>
    %18 = spyre.to_device %17 : tensor<4x64xf32> -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
    %w = spyre.pointwise %16, %18, %s_3 : (tensor<4x1xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, -1]>>, tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
    ^bb0(%19: f32, %20: f32, %21: f32):
      %22 = arith.constant 0.000000e+00 : f32
      %23 = arith.cmpf one, %19, %22 : f32
      %24 = arith.select %23, %20, %21 : f32
      spyre.yield %24 : f32
    }
    %25 = spyre.from_device %w : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf32>
    func.return %25 : tensor<4x64xf32>
  }
}
