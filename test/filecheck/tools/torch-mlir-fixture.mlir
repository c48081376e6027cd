// Real torch-mlir output (test/fixtures/make_torch_mlir_mlp.py: Linear(256,512) -> GELU ->
// Linear(512,256), weights as dense_resource blobs) parses, prints back with its weights, and
// runs on the device model within the DL16 bound of the numpy reference.

// RUN: spyre-opt %fixtures/mlp_torch_mlir.mlir | filecheck %s --check-prefix=PARSE
// PARSE:      func.func @main(%arg0: !torch.vtensor<[4,256],f32>) -> !torch.vtensor<[4,256],f32> {
// PARSE:        torch.vtensor.literal(dense_resource<torch_tensor_512_256_torch.float32> : tensor<512x256xf32>) : !torch.vtensor<[512,256],f32>
// PARSE:        torch.aten.gelu %{{.*}}, %str : !torch.vtensor<[4,512],f32>, !torch.str -> !torch.vtensor<[4,512],f32>
// PARSE:      dialect_resources: {
// PARSE-NEXT:   builtin: {
// PARSE-NEXT:     torch_tensor_256_torch.float32: "0x04000000

// RUN: spyre-opt %fixtures/mlp_torch_mlir.mlir -p spyre-pipeline | filecheck %s --check-prefix=ISA
// ISA:        spyre_isa.program @k0
// ISA:          spyre_isa.pt_matmul
// ISA:        func.func @main(%arg0: tensor<4x256xf32>) -> tensor<4x256xf32> {
// The weight's transpose is done by the host on the way in (W.T costs nothing on the device).
// ISA:          spyre.to_device %{{.*}} permutation [1, 0] : tensor<512x256xf32> -> tensor<256x512xf16
// ISA:          spyre_isa.launch @k0
// ISA-NOT:      torch.
// ISA:        dialect_resources

// RUN: spyre-run %fixtures/mlp_torch_mlir.mlir --reference | filecheck %s --check-prefix=EXEC
// EXEC:       output 0: shape (4, 256) float32
// EXEC:       output 0 vs reference: max |error| {{.*}}, within the dl16 bound: yes
// EXEC:       kernel {{ +}}time (us)
// Two matmuls, each with its bias add (the first also the GELU) as an epilogue.
// EXEC:       total (2 launches)
