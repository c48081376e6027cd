// RUN: spyre-opt %S/../inputs/safe-softmax.mlir -p convert-torch-to-spyre,spyre-fold-infinity-tests | filecheck %s
// RUN: spyre-opt %S/../inputs/safe-softmax.mlir -p 'convert-torch-to-spyre,spyre-fold-infinity-tests{numerics="ieee-fp16"}' | filecheck %s --check-prefix=FP16
// RUN: spyre-opt %s -p convert-torch-to-spyre,spyre-fold-infinity-tests --split-input-file | filecheck %s --check-prefix=KEPT
// RUN: spyre-run %S/../inputs/safe-softmax.mlir --reference --no-profile | filecheck %s --check-prefix=EXEC
// RUN: spyre-run %S/../inputs/safe-softmax.mlir --reference --no-profile --config numerics=ieee-fp16 | filecheck %s --check-prefix=EXEC
// RUN: spyre-opt %S/../inputs/safe-softmax.mlir -p spyre-pipeline -o %t.mlir
// RUN: not spyre-run %t.mlir --no-profile --config numerics=ieee-fp16 2>&1 | filecheck %s --check-prefix=REFUSED
// spyre-fold-infinity-tests: DL16 holds no infinity, so a host test of a device value
// against -inf is all false. torch's _safe_softmax, where(all(y == -inf, -1), 0, softmax(y)),
// becomes softmax(y): no transfer back of y and of the softmax, no host test, no mask or
// zeros sent, no select; the module records that it assumed DL16, and a device model with
// another numerics mode refuses it (IEEE fp16 has infinities: there nothing is folded).

// CHECK:       builtin.module attributes {{[{]}}spyre.numerics = "dl16"{{[}]}}
// CHECK-LABEL: func.func @main
// CHECK-NOT:     torch.aten
// CHECK-NOT:     arith.select
// CHECK:           arith.divf
// CHECK-NEXT:      spyre.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[R:.*]] = spyre.from_device
// CHECK-NEXT:    func.return %[[R]]

// FP16-NOT:    spyre.numerics
// FP16-LABEL:  func.func @main
// FP16:          torch.aten.eq.Scalar
// FP16:          torch.aten.any.dim
// FP16:          arith.select

// EXEC:        within the {{.*}} bound: yes
// REFUSED:     spyre-run: error: {{.*}}compiled for numerics 'dl16'{{.*}}runs 'ieee-fp16'
// REFUSED-NOT: Traceback

// A host value (here the argument) may hold -inf: nothing is folded, nothing recorded.
// KEPT-NOT:    spyre.numerics
// KEPT-LABEL:  func.func @host_value
// KEPT:          torch.aten.eq.Scalar %x
// KEPT:          arith.select
func.func @host_value(%x: !torch.vtensor<[4,64],f32>) -> !torch.vtensor<[4,64],f32> {
  %int1 = torch.constant.int 1
  %int-1 = torch.constant.int -1
  %int0 = torch.constant.int 0
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %none = torch.constant.none
  %ninf = torch.constant.float 0xFFF0000000000000
  %y = torch.aten.add.Tensor %x, %x, %int1 : !torch.vtensor<[4,64],f32>, !torch.vtensor<[4,64],f32>, !torch.int -> !torch.vtensor<[4,64],f32>
  %s = torch.aten._softmax %y, %int-1, %false : !torch.vtensor<[4,64],f32>, !torch.int, !torch.bool -> !torch.vtensor<[4,64],f32>
  %e = torch.aten.eq.Scalar %x, %ninf : !torch.vtensor<[4,64],f32>, !torch.float -> !torch.vtensor<[4,64],i1>
  %n = torch.aten.logical_not %e : !torch.vtensor<[4,64],i1> -> !torch.vtensor<[4,64],i1>
  %a = torch.aten.any.dim %n, %int-1, %true : !torch.vtensor<[4,64],i1>, !torch.int, !torch.bool -> !torch.vtensor<[4,1],i1>
  %m = torch.aten.logical_not %a : !torch.vtensor<[4,1],i1> -> !torch.vtensor<[4,1],i1>
  %z = torch.aten.full_like %s, %int0, %none, %none, %none, %false, %int1 : !torch.vtensor<[4,64],f32>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.int -> !torch.vtensor<[4,64],f32>
  %w = torch.aten.where.self %m, %z, %s : !torch.vtensor<[4,1],i1>, !torch.vtensor<[4,64],f32>, !torch.vtensor<[4,64],f32> -> !torch.vtensor<[4,64],f32>
  return %w : !torch.vtensor<[4,64],f32>
}

// -----

// A test against a finite number is left alone.
// KEPT-NOT:    spyre.numerics
// KEPT-LABEL:  func.func @finite
// KEPT:          torch.aten.eq.Scalar
// KEPT:          arith.select
func.func @finite(%x: !torch.vtensor<[4,64],f32>) -> !torch.vtensor<[4,64],f32> {
  %int1 = torch.constant.int 1
  %int-1 = torch.constant.int -1
  %int0 = torch.constant.int 0
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %none = torch.constant.none
  %ninf = torch.constant.float -1.000000e+04
  %y = torch.aten.add.Tensor %x, %x, %int1 : !torch.vtensor<[4,64],f32>, !torch.vtensor<[4,64],f32>, !torch.int -> !torch.vtensor<[4,64],f32>
  %s = torch.aten._softmax %y, %int-1, %false : !torch.vtensor<[4,64],f32>, !torch.int, !torch.bool -> !torch.vtensor<[4,64],f32>
  %e = torch.aten.eq.Scalar %y, %ninf : !torch.vtensor<[4,64],f32>, !torch.float -> !torch.vtensor<[4,64],i1>
  %n = torch.aten.logical_not %e : !torch.vtensor<[4,64],i1> -> !torch.vtensor<[4,64],i1>
  %a = torch.aten.any.dim %n, %int-1, %true : !torch.vtensor<[4,64],i1>, !torch.int, !torch.bool -> !torch.vtensor<[4,1],i1>
  %m = torch.aten.logical_not %a : !torch.vtensor<[4,1],i1> -> !torch.vtensor<[4,1],i1>
  %z = torch.aten.full_like %s, %int0, %none, %none, %none, %false, %int1 : !torch.vtensor<[4,64],f32>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.int -> !torch.vtensor<[4,64],f32>
  %w = torch.aten.where.self %m, %z, %s : !torch.vtensor<[4,1],i1>, !torch.vtensor<[4,64],f32>, !torch.vtensor<[4,64],f32> -> !torch.vtensor<[4,64],f32>
  return %w : !torch.vtensor<[4,64],f32>
}
