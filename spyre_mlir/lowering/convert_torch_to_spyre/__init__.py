"""`convert-torch-to-spyre`: choose, op by op, where each torch op runs, select spyre ops for
those that run on the device, and place the host <-> device border.

    device   torch ops with a lowering below, on float tensors of static, non-empty shape
    host     everything else stays a torch op and runs on the CPU (PyTorch eager):
               by design   ops on integer/boolean tensors (indices, masks, positions), as on
                           the real stack
               fallback    float ops without a lowering yet (reported; `strict=true` refuses)

    func args, torch literals     host values; spyre.to_device right before the first device use
    device value -> host op       spyre.from_device right before the host op
    func.return                   spyre.from_device of device results, in the original dtype

Lowerings (one pattern per op family; each op's entry in `DEVICE_OPS` says what it becomes):

    mm, addmm, linear             spyre.matmul (+ one spyre.pointwise for bias, alpha, beta)
    t, permute, transpose         spyre.permute (a free view: same bytes, permuted layout)
    view, reshape, _unsafe_view   spyre.reshape (a free view; restickify first if needed)
    clone                         its input (value semantics)
    cat                           spyre.concat (transposed off the stick dim when pieces end inside a stick)
    element-wise ops              spyre.pointwise with a body of arith/math scalar ops

Values cross between `!torch.vtensor` and builtin tensors through
`builtin.unrealized_conversion_cast` (a type-only bridge the host executor passes through).

The package, by op family (as torch-mlir's TorchToLinalg):

    utils         host and device tensor types, scalars, pointwise bodies
    movement      permutes, reshapes, moves off the stick dim, concats, constant blocks
    border        the `Border` (where values cross) and the `Lowering` pattern base
    views         views, copies and matmuls
    elementwise   element-wise ops
    functions     element-wise functions built from the SFP's instructions (floor, atan, log1p ...)
    slicing       slices, cat, flip, embedding, index_put
    indexing      index, index_select, repeat, constant_pad_nd
    reductions    reductions along any dims, softmax, log_softmax, var, vector norms, addmv, layer norm
    convolution   convolutions
    host_policy   ops on the host by design, host constants, index arithmetic, `host_ops`
    convert       the pass, the registered lowerings and `DEVICE_OPS`
"""

from spyre_mlir.lowering.convert_torch_to_spyre.border import Border, Lowering
from spyre_mlir.lowering.convert_torch_to_spyre.convert import DEVICE_OPS, LOWERINGS, ConvertTorchToSpyrePass
from spyre_mlir.lowering.convert_torch_to_spyre.convolution import LowerConvolution
from spyre_mlir.lowering.convert_torch_to_spyre.elementwise import (
    BINARY,
    UNARY,
    LowerBinary,
    LowerClamp,
    LowerPow,
    LowerUnary,
    LowerWhere,
)
from spyre_mlir.lowering.convert_torch_to_spyre.functions import (
    LowerActivations,
    LowerBinaryFunctions,
    LowerUnaryFunctions,
)
from spyre_mlir.lowering.convert_torch_to_spyre.host_policy import (
    HOST_CONSTANT,
    INDEX_ARITHMETIC,
    host_ops,
    mark_host_constants,
    mark_index_arithmetic,
)
from spyre_mlir.lowering.convert_torch_to_spyre.indexing import INDEX_TYPES, LowerConstantPad, LowerIndex, LowerRepeat
from spyre_mlir.lowering.convert_torch_to_spyre.reductions import (
    LowerAddmv,
    LowerLayerNorm,
    LowerLogSoftmax,
    LowerReductions,
    LowerSoftmax,
    LowerVariance,
    LowerVectorNorm,
)
from spyre_mlir.lowering.convert_torch_to_spyre.slicing import (
    LowerCat,
    LowerEmbedding,
    LowerFlip,
    LowerIndexPut,
    LowerSlice,
)
from spyre_mlir.lowering.convert_torch_to_spyre.utils import (
    HOST_FLOAT_TYPES,
    InconsistentResult,
    NotOnDevice,
    addf,
    const,
    device_reason,
    divf,
    host_tensor_type,
    is_vtensor,
    mulf,
    pointwise,
    pointwise_append,
    scalar_of,
    subf,
)
from spyre_mlir.lowering.convert_torch_to_spyre.views import LowerCopy, LowerExpand, LowerMatmul, LowerViews

__all__ = [
    "BINARY",
    "Border",
    "ConvertTorchToSpyrePass",
    "DEVICE_OPS",
    "HOST_CONSTANT",
    "HOST_FLOAT_TYPES",
    "INDEX_ARITHMETIC",
    "INDEX_TYPES",
    "InconsistentResult",
    "LOWERINGS",
    "LowerActivations",
    "LowerAddmv",
    "LowerBinary",
    "LowerBinaryFunctions",
    "LowerCat",
    "LowerClamp",
    "LowerConstantPad",
    "LowerConvolution",
    "LowerCopy",
    "LowerEmbedding",
    "LowerExpand",
    "LowerFlip",
    "LowerIndex",
    "LowerIndexPut",
    "LowerLayerNorm",
    "LowerLogSoftmax",
    "LowerMatmul",
    "LowerPow",
    "LowerReductions",
    "LowerRepeat",
    "LowerSlice",
    "LowerSoftmax",
    "LowerUnary",
    "LowerUnaryFunctions",
    "LowerVariance",
    "LowerVectorNorm",
    "LowerViews",
    "LowerWhere",
    "Lowering",
    "NotOnDevice",
    "UNARY",
    "addf",
    "const",
    "device_reason",
    "divf",
    "host_ops",
    "host_tensor_type",
    "is_vtensor",
    "mark_host_constants",
    "mark_index_arithmetic",
    "mulf",
    "pointwise",
    "pointwise_append",
    "scalar_of",
    "subf",
]
