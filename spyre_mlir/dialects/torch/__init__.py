"""The `torch` dialect: torch-mlir's value-semantics torch IR, spelled exactly as torch-mlir prints it.

This is spyre-mlir's import contract. The text that
`torch_mlir.fx.export_and_import(model, x, output_type="torch")` prints parses with
`make_context()` and prints back op for op unchanged (xDSL only spells `module` and `return` as
`builtin.module` and `func.return`; print with `printer.print_metadata(ctx.loaded_dialects)` to
keep the weights). `spyre_mlir.frontend.fx_importer` builds the same IR from an FX graph.

Types:
- `!torch.vtensor<[4,?,64],f32>` (`ValueTensorType`): a value-semantics tensor. `?` is an
  unknown size (stored as -1), `*` an unknown rank, `unk` an unknown dtype, and the bare
  `!torch.vtensor` knows neither.
- Scalars `!torch.int`, `!torch.float`, `!torch.bool`, `!torch.str`, `!torch.none`,
  `!torch.number` and `!torch.Device`, and the containers `!torch.list<T>` and
  `!torch.optional<T>`. Inside a container torch-mlir drops the `!torch.` prefix:
  `!torch.list<vtensor<[2],f32>>`, `!torch.list<optional<int>>`.

Ops:
- The constants `torch.constant.{int,float,bool,str,none,device}`, `torch.prim.ListConstruct`,
  `torch.vtensor.literal` (whose weights live in the `{-# dialect_resources #-}` section) and
  `torch.operator "name"(...)` (a PyTorch op torch-mlir has no op for) have torch-mlir's custom
  syntax. `constant_int_value` and friends read constants through `value.owner`.
- Every other torch op uses torch-mlir's default syntax (`parseDefaultTorchOp`):
  `%r = torch.aten.foo %a, %b {attrs} : !ta, !tb -> !tr`.
  The ops that rewrites match on have dedicated classes, with operands named after the PyTorch
  schema (`self` becomes `self_`). `TorchContext` synthesizes a catch-all class, with variadic
  operands and results, for any other `torch.*` name, so the roughly 850 upstream aten ops need
  no definitions here; it is `Pure` (mergeable by `cse`) if the name is in `PURE_OPS`.

Weights: `dense_resource` blobs live in the builtin dialect's blob store, so `make_context()`
gives each context its own builtin dialect (`fresh_builtin`); `resource_to_numpy` and
`numpy_to_resource` convert between blobs and arrays.

    types      the torch types (`!torch.vtensor`, the scalars, the containers)
    ops        constants, lists, literals, `torch.operator`; reading constants
    aten       the default-syntax ops: the dedicated classes and the catch-all
    names      the torch ops by family, by name (`CREATION_OPS`, `PURE_OPS`, ...)
    resources  `dense_resource` blobs to and from numpy
    context    the `Torch` dialect, `TorchContext` and `make_context`

Definitions only: the lowering lives in `spyre_mlir.lowering`. Every public name is importable
from the package: `from spyre_mlir.dialects import torch; torch.make_context()`.
See torch-mlir's `TorchTypes.td`, `TorchOps.td` and `GeneratedTorchOps.td`:
https://github.com/llvm/torch-mlir/tree/main/include/torch-mlir/Dialect/Torch/IR
"""

from spyre_mlir.dialects.torch.aten import (
    AtenAddmmOp,
    AtenAddScalarOp,
    AtenAddTensorOp,
    AtenBmmOp,
    AtenCloneOp,
    AtenConvolutionOp,
    AtenGeluOp,
    AtenLinearOp,
    AtenMmOp,
    AtenMulScalarOp,
    AtenMulTensorOp,
    AtenPermuteOp,
    AtenReluOp,
    AtenReshapeOp,
    AtenSubScalarOp,
    AtenSubTensorOp,
    AtenTOp,
    AtenTransposeIntOp,
    AtenUnsafeViewOp,
    AtenViewOp,
    DefaultFormatOp,
    make_default_op,
    sizes_of,
    vtensor_type,
)
from spyre_mlir.dialects.torch.context import (
    Torch,
    TorchContext,
    fresh_builtin,
    make_context,
    torch_op_class,
)
from spyre_mlir.dialects.torch.names import (
    COLLECTIVES,
    CREATION_OPS,
    DTYPE_CONVERSIONS,
    ELEMENTWISE_BINARY,
    ELEMENTWISE_SCALAR,
    ELEMENTWISE_UNARY,
    PURE_OPS,
)
from spyre_mlir.dialects.torch.ops import (
    VALUE_OPS,
    ConstantBoolOp,
    ConstantDeviceOp,
    ConstantFloatOp,
    ConstantIntOp,
    ConstantNoneOp,
    ConstantStrOp,
    OperatorOp,
    PrimListConstructOp,
    ValueTensorLiteralOp,
    constant_float_value,
    constant_int_value,
    constant_list_ints,
    constant_str_value,
)
from spyre_mlir.dialects.torch.resources import (
    numpy_to_resource,
    resource_to_numpy,
)
from spyre_mlir.dialects.torch.types import (
    BoolType,
    DeviceType,
    FloatType,
    IntType,
    ListType,
    NoneType,
    NumberType,
    OptionalType,
    StrType,
    TorchType,
    ValueTensorType,
    is_valid_dtype,
    is_valid_subtype,
)

__all__ = [
    "TorchType",
    "IntType",
    "FloatType",
    "BoolType",
    "StrType",
    "NoneType",
    "NumberType",
    "DeviceType",
    "ListType",
    "OptionalType",
    "is_valid_dtype",
    "ValueTensorType",
    "is_valid_subtype",
    "ConstantIntOp",
    "ConstantFloatOp",
    "ConstantBoolOp",
    "ConstantStrOp",
    "ConstantNoneOp",
    "ConstantDeviceOp",
    "PrimListConstructOp",
    "ValueTensorLiteralOp",
    "VALUE_OPS",
    "COLLECTIVES",
    "CREATION_OPS",
    "DTYPE_CONVERSIONS",
    "ELEMENTWISE_UNARY",
    "ELEMENTWISE_BINARY",
    "ELEMENTWISE_SCALAR",
    "PURE_OPS",
    "OperatorOp",
    "DefaultFormatOp",
    "sizes_of",
    "vtensor_type",
    "AtenMmOp",
    "AtenBmmOp",
    "AtenAddmmOp",
    "AtenLinearOp",
    "AtenTOp",
    "AtenPermuteOp",
    "AtenTransposeIntOp",
    "AtenAddTensorOp",
    "AtenAddScalarOp",
    "AtenSubTensorOp",
    "AtenSubScalarOp",
    "AtenMulTensorOp",
    "AtenMulScalarOp",
    "AtenReluOp",
    "AtenGeluOp",
    "AtenViewOp",
    "AtenReshapeOp",
    "AtenUnsafeViewOp",
    "AtenCloneOp",
    "AtenConvolutionOp",
    "make_default_op",
    "constant_int_value",
    "constant_float_value",
    "constant_str_value",
    "constant_list_ints",
    "resource_to_numpy",
    "numpy_to_resource",
    "TorchContext",
    "fresh_builtin",
    "make_context",
    "Torch",
    "torch_op_class",
]
