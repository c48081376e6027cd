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

// RUN: not spyre-opt %S/../inputs/unsupported-op.txt.mlir -p 'spyre-pipeline{strict=true}' 2>&1 | filecheck %s --check-prefix=OP
// OP:         'torch.aten.atan' producing !torch.vtensor<[4,4],f32> cannot run on the device: no device lowering yet
// OP-NOT:     Traceback
