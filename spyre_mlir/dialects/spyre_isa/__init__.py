"""The `spyre_isa` dialect: per-core instruction streams, one op per instruction.

A kernel is a `spyre_isa.program` whose block arguments are its DDR tensors (inputs first,
then outputs; the runtime patches their addresses at launch, so one program serves every
call). The program holds `spyre_isa.stream`s: SPMD instruction lists that a set of cores
runs in lockstep, as the real SuperDSC descriptors do. Within a stream, everything that
differs between cores is a compile-time table indexed by the core's position in the stream
(`[0, 4, 8, 12]`, or `[0 step 4 x 4]` for the affine case); cores whose work diverges (a ragged
last tile) get their own stream. Every address, stride and size is in sticks (128 bytes):

    spyre_isa.dma_load %a[[0 step 400 x 4], strides = [100, 1]] -> lx [0, strides = [25, 1]] sizes [4, 25] : tensor<...>

Engines (one family each): DMA (DDR <-> LX, whole sticks, N-D strides), PT (the systolic
array: 16-bit products, fp32 partial sums in LX), SFP (the vector unit: 64 lanes per step,
element-wise functions and stick transposes), sync (tokens and barriers between cores).
LX operands name an element type: `f16` (the device's 16-bit format, the default and
omitted) or `f32` (32 lanes per stick; an SFP vector of 64 lanes spans two sticks).

    attrs     per-core tables, accesses, core sets
    program   spyre_isa.program, spyre_isa.stream, the instruction base, spyre_isa.launch
    dma       dma_load, dma_store, dma_gather, dma_scatter
    compute   pt_matmul and the SFP's instructions
    ring      ring_send, signal, wait, barrier

This package defines; `spyre_mlir.lowering.convert_spyre_to_isa` produces these ops and
`spyre_mlir.sim` executes them. Every public name is importable from the package:
`from spyre_mlir.dialects import spyre_isa; spyre_isa.DmaLoadOp`.
"""

from xdsl.ir import Dialect

from spyre_mlir.dialects.spyre_isa.attrs import (
    MAX_TABLE,
    AccessAttr,
    CoreSetAttr,
    PerCoreAttr,
    access,
    i64_attr,
    per_core,
)
from spyre_mlir.dialects.spyre_isa.compute import (
    SFP_BINARY,
    SFP_TRANSCENDENTAL,
    SFP_UNARY,
    PtMatmulOp,
    SfpAbsOp,
    SfpAddOp,
    SfpBinaryOp,
    SfpCopyOp,
    SfpCosOp,
    SfpDivOp,
    SfpErfOp,
    SfpExpOp,
    SfpLogOp,
    SfpMaxOp,
    SfpMinOp,
    SfpMulOp,
    SfpNegOp,
    SfpRecipOp,
    SfpReduceMaxOp,
    SfpReduceMinOp,
    SfpReduceOp,
    SfpReduceSumOp,
    SfpRsqrtOp,
    SfpSelectOp,
    SfpSinOp,
    SfpSqrtOp,
    SfpSubOp,
    SfpTanhOp,
    SfpTransposeOp,
    SfpUnaryOp,
)
from spyre_mlir.dialects.spyre_isa.dma import (
    DmaGatherOp,
    DmaLoadOp,
    DmaOp,
    DmaScatterOp,
    DmaStoreOp,
)
from spyre_mlir.dialects.spyre_isa.program import (
    IN_PLACE_ATTR,
    IsaInstruction,
    LaunchOp,
    ProgramOp,
    StreamOp,
    span,
)
from spyre_mlir.dialects.spyre_isa.ring import (
    BarrierOp,
    RingSendOp,
    SignalOp,
    WaitOp,
)

SpyreISA = Dialect(
    "spyre_isa",
    [
        ProgramOp,
        StreamOp,
        DmaLoadOp,
        DmaStoreOp,
        DmaGatherOp,
        DmaScatterOp,
        PtMatmulOp,
        *SFP_UNARY.values(),
        *SFP_BINARY.values(),
        SfpTransposeOp,
        SfpSelectOp,
        SfpReduceMaxOp,
        SfpReduceMinOp,
        SfpReduceSumOp,
        RingSendOp,
        BarrierOp,
        SignalOp,
        WaitOp,
        LaunchOp,
    ],
    [PerCoreAttr, AccessAttr, CoreSetAttr],
)

__all__ = [
    "MAX_TABLE",
    "PerCoreAttr",
    "i64_attr",
    "per_core",
    "AccessAttr",
    "access",
    "CoreSetAttr",
    "IN_PLACE_ATTR",
    "ProgramOp",
    "StreamOp",
    "IsaInstruction",
    "span",
    "DmaOp",
    "DmaLoadOp",
    "DmaStoreOp",
    "DmaGatherOp",
    "DmaScatterOp",
    "PtMatmulOp",
    "SFP_TRANSCENDENTAL",
    "SfpUnaryOp",
    "SfpBinaryOp",
    "SfpCopyOp",
    "SfpNegOp",
    "SfpExpOp",
    "SfpErfOp",
    "SfpTanhOp",
    "SfpLogOp",
    "SfpSqrtOp",
    "SfpRsqrtOp",
    "SfpSinOp",
    "SfpCosOp",
    "SfpAbsOp",
    "SfpRecipOp",
    "SfpAddOp",
    "SfpSubOp",
    "SfpMulOp",
    "SfpDivOp",
    "SfpMaxOp",
    "SfpMinOp",
    "SFP_UNARY",
    "SFP_BINARY",
    "SfpSelectOp",
    "SfpTransposeOp",
    "SfpReduceOp",
    "SfpReduceMaxOp",
    "SfpReduceMinOp",
    "SfpReduceSumOp",
    "RingSendOp",
    "BarrierOp",
    "SignalOp",
    "WaitOp",
    "LaunchOp",
    "SpyreISA",
]
