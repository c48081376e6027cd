// RUN: spyre-opt %s -p 'torch-adapt,convert-torch-to-spyre,spyre-propagate-layouts,spyre-fuse' | filecheck %s
// RUN: spyre-opt %s -p 'torch-adapt,convert-torch-to-spyre,spyre-propagate-layouts,spyre-fuse{gathered_operands=false}' | filecheck %s --check-prefix=APART
// RUN: spyre-opt %s -p spyre-pipeline | filecheck %s --check-prefix=ISA
// A decode step's paged attention as spyre_mlir/vllm/attention.py traces it: 2 requests, a
// page of 64 slots each, 2 KV heads of 64 (a row of the caches: 2 sticks), 4 query heads. The
// pages' rows are gathered from each cache, the keys' then relayouted (K^T, sticked along the
// keys) for the scores product, the values' read by the context product as they are.
//
// Each gather shares its kernel with the ops that alone read its rows (spyre.GatheredOperand):
// the keys' with their relayout and the scores product (each 64 x 64 block of a B tile
// gathered as one KV head's stick of 64 rows, `from_stick`: the head of the core's matrix,
// and transposed in LX), the values' with the context product (its B tiles gathered as they
// are). Neither the gathered rows nor K^T reach DDR. Apart (APART), each gather is a kernel of
// its own that stores the rows, which the relayout and the product load again.

// CHECK-LABEL: func.func @main
// CHECK:         spyre.kernel "{{.*}}"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<256x128xf16
// CHECK-NEXT:    ^
// CHECK-NEXT:      spyre.gather
// CHECK-NEXT:      spyre.reshape
// CHECK:           spyre.permute
// CHECK:           spyre.restickify
// CHECK-NEXT:      spyre.matmul
// CHECK-NEXT:      spyre.yield
// CHECK:         spyre.kernel "{{.*}}"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<256x128xf16
// CHECK-NEXT:    ^
// CHECK-NEXT:      spyre.gather
// CHECK-NEXT:      spyre.reshape
// CHECK:           spyre.permute
// CHECK:           spyre.matmul
// CHECK-NEXT:      spyre.yield

// APART-LABEL: func.func @main
// APART:         spyre.kernel
// APART:           spyre.gather
// APART-NEXT:      spyre.yield
// APART:           spyre.gather
// APART-NEXT:      spyre.yield

// ISA:      spyre_isa.program
// ISA-NOT:  spyre_isa.program @{{.*}}(%in0: tensor<256x128xf16{{.*}}, %in1: tensor<2x64xsi64>, %out: tensor<128x128xf16
// ISA:      spyre_isa.dma_gather %in0[%in1[[0, 64, 0, 64]] count 64 row_sticks 1 from_stick [0, 0, 1, 1]] -> lx [[[G:[0-9]+]], strides = [1, 1]]
// ISA-NEXT: spyre_isa.sfp_transpose lx [[[G]], strides = [64, 1]] -> lx [[[B:[0-9]+]], strides = [64, 1]] blocks = 1 rows = 64 cols = 64
// ISA-NEXT: spyre_isa.dma_load
// ISA-NEXT: spyre_isa.pt_matmul lx [{{.*}}], lx [[[B]], strides = [1, 64]]
// ISA:      spyre_isa.dma_gather %in0[%in1[[0, 64, 0, 64]] count 64 row_sticks 1 from_stick [0, 0, 1, 1]] -> lx [[[V:[0-9]+]], strides = [1, 1]]
// ISA-NEXT: spyre_isa.dma_load
// ISA-NEXT: spyre_isa.pt_matmul lx [{{.*}}], lx [[[V]], strides = [1, 64]]

builtin.module attributes {spyre.target = #spyre.target} {
  func.func @main(%arg0: !torch.vtensor<[2,4,64],f32>, %arg1: !torch.vtensor<[1,256,128],f32>, %arg2: !torch.vtensor<[1,256,128],f32>, %arg3: !torch.vtensor<[2],si64>, %arg4: !torch.vtensor<[2,1],f32>) -> !torch.vtensor<[2,4,64],f32> {
    %int0 = torch.constant.int 0
    %int64 = torch.constant.int 64
    %int1 = torch.constant.int 1
    %none = torch.constant.none
    %cpu = torch.constant.device "cpu"
    %false = torch.constant.bool false
    %0 = torch.aten.arange.start_step %int0, %int64, %int1, %none, %int0, %cpu, %false : !torch.int, !torch.int, !torch.int, !torch.none, !torch.int, !torch.Device, !torch.bool -> !torch.vtensor<[64],si64>
    %int6 = torch.constant.int 6
    %1 = torch.aten._to_copy %0, %int6, %none, %none, %none, %false, %none : !torch.vtensor<[64],si64>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[64],f32>
    %int2 = torch.constant.int 2
    %2 = torch.aten.unsqueeze %arg4, %int2 : !torch.vtensor<[2,1],f32>, !torch.int -> !torch.vtensor<[2,1,1],f32>
    %3 = torch.aten.sub.Tensor %2, %1, %int1 : !torch.vtensor<[2,1,1],f32>, !torch.vtensor<[64],f32>, !torch.int -> !torch.vtensor<[2,1,64],f32>
    %float0.000000e00 = torch.constant.float 0.000000e+00
    %4 = torch.aten.clamp %3, %none, %float0.000000e00 : !torch.vtensor<[2,1,64],f32>, !torch.none, !torch.float -> !torch.vtensor<[2,1,64],f32>
    %float-3.000000e04 = torch.constant.float -3.000000e+04
    %5 = torch.aten.mul.Scalar %4, %float-3.000000e04 : !torch.vtensor<[2,1,64],f32>, !torch.float -> !torch.vtensor<[2,1,64],f32>
    %6 = torch.prim.ListConstruct %int2, %int2, %int2, %int64 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %7 = torch.aten.view %arg0, %6 : !torch.vtensor<[2,4,64],f32>, !torch.list<int> -> !torch.vtensor<[2,2,2,64],f32>
    %int3 = torch.constant.int 3
    %8 = torch.prim.ListConstruct %int1, %int0, %int2, %int3 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %9 = torch.aten.permute %7, %8 : !torch.vtensor<[2,2,2,64],f32>, !torch.list<int> -> !torch.vtensor<[2,2,2,64],f32>
    %int-1 = torch.constant.int -1
    %int128 = torch.constant.int 128
    %10 = torch.prim.ListConstruct %int-1, %int64, %int128 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %11 = torch.aten.view %arg1, %10 : !torch.vtensor<[1,256,128],f32>, !torch.list<int> -> !torch.vtensor<[4,64,128],f32>
    %12 = torch.aten.unsqueeze %arg3, %int1 : !torch.vtensor<[2],si64>, !torch.int -> !torch.vtensor<[2,1],si64>
    %13 = torch.aten.unsqueeze %0, %int0 : !torch.vtensor<[64],si64>, !torch.int -> !torch.vtensor<[1,64],si64>
    %14 = torch.prim.ListConstruct %12, %13 : (!torch.vtensor<[2,1],si64>, !torch.vtensor<[1,64],si64>) -> !torch.list<optional<vtensor>>
    %15 = torch.aten.index.Tensor %11, %14 : !torch.vtensor<[4,64,128],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[2,64,128],f32>
    %16 = torch.prim.ListConstruct %int2, %int64, %int2, %int64 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %17 = torch.aten.view %15, %16 : !torch.vtensor<[2,64,128],f32>, !torch.list<int> -> !torch.vtensor<[2,64,2,64],f32>
    %18 = torch.prim.ListConstruct %int2, %int0, %int1, %int3 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %19 = torch.aten.permute %17, %18 : !torch.vtensor<[2,64,2,64],f32>, !torch.list<int> -> !torch.vtensor<[2,2,64,64],f32>
    %20 = torch.prim.ListConstruct %int-1, %int64, %int128 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %21 = torch.aten.view %arg2, %20 : !torch.vtensor<[1,256,128],f32>, !torch.list<int> -> !torch.vtensor<[4,64,128],f32>
    %22 = torch.aten.unsqueeze %arg3, %int1 : !torch.vtensor<[2],si64>, !torch.int -> !torch.vtensor<[2,1],si64>
    %23 = torch.aten.unsqueeze %0, %int0 : !torch.vtensor<[64],si64>, !torch.int -> !torch.vtensor<[1,64],si64>
    %24 = torch.prim.ListConstruct %22, %23 : (!torch.vtensor<[2,1],si64>, !torch.vtensor<[1,64],si64>) -> !torch.list<optional<vtensor>>
    %25 = torch.aten.index.Tensor %21, %24 : !torch.vtensor<[4,64,128],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[2,64,128],f32>
    %26 = torch.prim.ListConstruct %int2, %int64, %int2, %int64 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %27 = torch.aten.view %25, %26 : !torch.vtensor<[2,64,128],f32>, !torch.list<int> -> !torch.vtensor<[2,64,2,64],f32>
    %28 = torch.prim.ListConstruct %int2, %int0, %int1, %int3 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %29 = torch.aten.permute %27, %28 : !torch.vtensor<[2,64,2,64],f32>, !torch.list<int> -> !torch.vtensor<[2,2,64,64],f32>
    %30 = torch.prim.ListConstruct %int1, %int2, %int1, %int64 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %31 = torch.aten.view %5, %30 : !torch.vtensor<[2,1,64],f32>, !torch.list<int> -> !torch.vtensor<[1,2,1,64],f32>
    %float3.535534e-01 = torch.constant.float 0.35355339059327379
    %32 = torch.aten.mul.Scalar %9, %float3.535534e-01 : !torch.vtensor<[2,2,2,64],f32>, !torch.float -> !torch.vtensor<[2,2,2,64],f32>
    %33 = torch.prim.ListConstruct %int0, %int1, %int3, %int2 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %34 = torch.aten.permute %19, %33 : !torch.vtensor<[2,2,64,64],f32>, !torch.list<int> -> !torch.vtensor<[2,2,64,64],f32>
    %35 = torch.aten.mul.Scalar %34, %float3.535534e-01 : !torch.vtensor<[2,2,64,64],f32>, !torch.float -> !torch.vtensor<[2,2,64,64],f32>
    %36 = torch.prim.ListConstruct %int2, %int2, %int2, %int64 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %37 = torch.aten.expand %32, %36, %false : !torch.vtensor<[2,2,2,64],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[2,2,2,64],f32>
    %38 = torch.aten.clone %37, %int0 : !torch.vtensor<[2,2,2,64],f32>, !torch.int -> !torch.vtensor<[2,2,2,64],f32>
    %int4 = torch.constant.int 4
    %39 = torch.prim.ListConstruct %int4, %int2, %int64 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %40 = torch.aten.view %38, %39 : !torch.vtensor<[2,2,2,64],f32>, !torch.list<int> -> !torch.vtensor<[4,2,64],f32>
    %41 = torch.prim.ListConstruct %int2, %int2, %int64, %int64 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %42 = torch.aten.expand %35, %41, %false : !torch.vtensor<[2,2,64,64],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[2,2,64,64],f32>
    %43 = torch.aten.clone %42, %int0 : !torch.vtensor<[2,2,64,64],f32>, !torch.int -> !torch.vtensor<[2,2,64,64],f32>
    %44 = torch.prim.ListConstruct %int4, %int64, %int64 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %45 = torch.aten.view %43, %44 : !torch.vtensor<[2,2,64,64],f32>, !torch.list<int> -> !torch.vtensor<[4,64,64],f32>
    %46 = torch.aten.bmm %40, %45 : !torch.vtensor<[4,2,64],f32>, !torch.vtensor<[4,64,64],f32> -> !torch.vtensor<[4,2,64],f32>
    %47 = torch.prim.ListConstruct %int2, %int2, %int2, %int64 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %48 = torch.aten.view %46, %47 : !torch.vtensor<[4,2,64],f32>, !torch.list<int> -> !torch.vtensor<[2,2,2,64],f32>
    %49 = torch.aten.add.Tensor %48, %31, %int1 : !torch.vtensor<[2,2,2,64],f32>, !torch.vtensor<[1,2,1,64],f32>, !torch.int -> !torch.vtensor<[2,2,2,64],f32>
    %50 = torch.aten._softmax %49, %int-1, %false : !torch.vtensor<[2,2,2,64],f32>, !torch.int, !torch.bool -> !torch.vtensor<[2,2,2,64],f32>
    %float-Inf = torch.constant.float 0xFFF0000000000000
    %51 = torch.aten.eq.Scalar %49, %float-Inf : !torch.vtensor<[2,2,2,64],f32>, !torch.float -> !torch.vtensor<[2,2,2,64],i1>
    %52 = torch.aten.logical_not %51 : !torch.vtensor<[2,2,2,64],i1> -> !torch.vtensor<[2,2,2,64],i1>
    %true = torch.constant.bool true
    %53 = torch.aten.any.dim %52, %int-1, %true : !torch.vtensor<[2,2,2,64],i1>, !torch.int, !torch.bool -> !torch.vtensor<[2,2,2,1],i1>
    %54 = torch.aten.logical_not %53 : !torch.vtensor<[2,2,2,1],i1> -> !torch.vtensor<[2,2,2,1],i1>
    %55 = torch.aten.full_like %50, %int0, %none, %none, %none, %false, %int1 : !torch.vtensor<[2,2,2,64],f32>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.int -> !torch.vtensor<[2,2,2,64],f32>
    %56 = torch.aten.where.self %54, %55, %50 : !torch.vtensor<[2,2,2,1],i1>, !torch.vtensor<[2,2,2,64],f32>, !torch.vtensor<[2,2,2,64],f32> -> !torch.vtensor<[2,2,2,64],f32>
    %57 = torch.prim.ListConstruct %int2, %int2, %int2, %int64 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %58 = torch.aten.expand %56, %57, %false : !torch.vtensor<[2,2,2,64],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[2,2,2,64],f32>
    %59 = torch.prim.ListConstruct %int4, %int2, %int64 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %60 = torch.aten.view %58, %59 : !torch.vtensor<[2,2,2,64],f32>, !torch.list<int> -> !torch.vtensor<[4,2,64],f32>
    %61 = torch.prim.ListConstruct %int2, %int2, %int64, %int64 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %62 = torch.aten.expand %29, %61, %false : !torch.vtensor<[2,2,64,64],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[2,2,64,64],f32>
    %63 = torch.aten.clone %62, %int0 : !torch.vtensor<[2,2,64,64],f32>, !torch.int -> !torch.vtensor<[2,2,64,64],f32>
    %64 = torch.prim.ListConstruct %int4, %int64, %int64 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %65 = torch.aten.view %63, %64 : !torch.vtensor<[2,2,64,64],f32>, !torch.list<int> -> !torch.vtensor<[4,64,64],f32>
    %66 = torch.aten.bmm %60, %65 : !torch.vtensor<[4,2,64],f32>, !torch.vtensor<[4,64,64],f32> -> !torch.vtensor<[4,2,64],f32>
    %67 = torch.prim.ListConstruct %int2, %int2, %int2, %int64 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %68 = torch.aten.view %66, %67 : !torch.vtensor<[4,2,64],f32>, !torch.list<int> -> !torch.vtensor<[2,2,2,64],f32>
    %69 = torch.prim.ListConstruct %int2, %int0, %int1, %int3 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %70 = torch.aten.permute %68, %69 : !torch.vtensor<[2,2,2,64],f32>, !torch.list<int> -> !torch.vtensor<[2,2,2,64],f32>
    %71 = torch.aten.clone %70, %int0 : !torch.vtensor<[2,2,2,64],f32>, !torch.int -> !torch.vtensor<[2,2,2,64],f32>
    %72 = torch.prim.ListConstruct %int1, %int2, %int0, %int3 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %73 = torch.aten.permute %71, %72 : !torch.vtensor<[2,2,2,64],f32>, !torch.list<int> -> !torch.vtensor<[2,2,2,64],f32>
    %74 = torch.prim.ListConstruct %int1, %int0, %int2, %int3 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %75 = torch.aten.permute %73, %74 : !torch.vtensor<[2,2,2,64],f32>, !torch.list<int> -> !torch.vtensor<[2,2,2,64],f32>
    %76 = torch.aten.clone %75, %int0 : !torch.vtensor<[2,2,2,64],f32>, !torch.int -> !torch.vtensor<[2,2,2,64],f32>
    %77 = torch.prim.ListConstruct %int2, %int4, %int64 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %78 = torch.aten.view %76, %77 : !torch.vtensor<[2,2,2,64],f32>, !torch.list<int> -> !torch.vtensor<[2,4,64],f32>
    func.return %78 : !torch.vtensor<[2,4,64],f32>
  }
}
