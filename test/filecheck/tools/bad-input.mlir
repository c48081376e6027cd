// Bad input gets a diagnostic and exit code 1, never a Python traceback.

// RUN: not spyre-opt %S/../inputs/malformed.txt.mlir 2>&1 | filecheck %s --check-prefix=SYNTAX
// SYNTAX:     malformed.txt.mlir:3:1
// SYNTAX:     Expected ','
// SYNTAX-NOT: Traceback

// RUN: not spyre-opt %S/../inputs/ill-typed.txt.mlir 2>&1 | filecheck %s --check-prefix=TYPE
// TYPE:       'spyre.matmul'
// TYPE-NOT:   Traceback

// RUN: not spyre-opt %S/../inputs/does-not-exist.mlir 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING:    spyre-opt: error: No such file or directory: {{.*}}does-not-exist.mlir

// RUN: not spyre-run %S/../inputs/ill-typed.txt.mlir 2>&1 | filecheck %s --check-prefix=RUNTYPE
// RUNTYPE:    spyre-run: error: {{.*}}'spyre.matmul'
// RUNTYPE-NOT: Traceback

// RUN: not spyre-run %fixtures/mlp_torch_mlir.mlir --config cores=0 2>&1 | filecheck %s --check-prefix=CONFIG
// CONFIG:     spyre-run: error: a device needs >= 1 core

// The device is the module's target, not a pass option: the option names where it goes.
// RUN: not spyre-opt %S/../inputs/kernels.mlir -p 'spyre-divide-work{cores=4}' 2>&1 | filecheck %s --check-prefix=DEVICE
// DEVICE:     spyre-opt: error: -p spyre-divide-work{cores=4}: Provided arguments ["cores"] not found {{.*}}; cores: a device parameter, which the passes read from the module's target: builtin.module attributes {spyre.target = #spyre.target<cores = ...>}
// DEVICE-NOT: internal error

// RUN: not spyre-opt %S/../inputs/unsupported-op.txt.mlir -p 'spyre-pipeline{strict=true}' 2>&1 | filecheck %s --check-prefix=OP
// OP:         'torch.aten.erfc' producing !torch.vtensor<[4,4],f32> cannot run on the device: no device lowering yet
// OP-NOT:     Traceback
