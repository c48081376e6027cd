"""The `torch` dialect object and the context that parses any `torch.*` op: `TorchContext`
synthesizes the catch-all class of a name without a definition; `make_context()` loads func,
arith, math, torch and a builtin dialect with its own blob store, and registers `spyre` and
`spyre_isa` lazily.
"""

import importlib
from collections.abc import Callable, Sequence
from dataclasses import fields

from xdsl.context import Context
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func
from xdsl.dialects.math import Math
from xdsl.ir import Dialect, Operation

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
    make_default_op,
)
from spyre_mlir.dialects.torch.ops import VALUE_OPS, OperatorOp
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
    ValueTensorType,
)


class TorchContext(Context):
    """A context in which any unknown `torch.*` op name resolves to the catch-all
    `make_default_op(name)` class, so every op torch-mlir prints in default syntax parses."""

    def get_optional_op(self, name: str, *, dialect_stack: Sequence[str] = ()) -> type[Operation] | None:
        if name.startswith("torch.") and self._get_known_op(name) is None:
            self.load_op(make_default_op(name))
        return super().get_optional_op(name, dialect_stack=dialect_stack)

    def clone(self) -> "TorchContext":
        plain = super().clone()
        return TorchContext(**{f.name: getattr(plain, f.name) for f in fields(plain)})


def fresh_builtin() -> Dialect:
    """A builtin dialect with its own resource blob store.

    xDSL keeps `dense_resource` blobs on the builtin dialect object, and the module-level
    `Builtin` is shared by the whole process: parsing a second module with the same handles
    would rename them (`w_0`) and lose their data. Each `make_context()` gets its own."""
    return Dialect("builtin", list(Builtin.operations), list(Builtin.attributes), [OpAsmDialectInterface()])


def _lazy(module: str, attr: str) -> Callable[[], Dialect]:
    def load() -> Dialect:
        return getattr(importlib.import_module(module), attr)

    return load


def make_context() -> TorchContext:
    """A context for spyre-mlir IR: a fresh builtin (own blob store), func, arith, math and
    torch loaded; `spyre` and `spyre_isa` registered lazily. More dialects may be registered."""
    ctx = TorchContext()
    for dialect in (fresh_builtin(), Func, Arith, Math, Torch):
        ctx.load_dialect(dialect)
    ctx.register_dialect("spyre", _lazy("spyre_mlir.dialects.spyre", "Spyre"))
    ctx.register_dialect("spyre_isa", _lazy("spyre_mlir.dialects.spyre_isa", "SpyreISA"))
    return ctx


Torch = Dialect(
    "torch",
    [
        *VALUE_OPS,
        OperatorOp,
        AtenMmOp,
        AtenBmmOp,
        AtenAddmmOp,
        AtenLinearOp,
        AtenTOp,
        AtenPermuteOp,
        AtenTransposeIntOp,
        AtenAddTensorOp,
        AtenAddScalarOp,
        AtenSubTensorOp,
        AtenSubScalarOp,
        AtenMulTensorOp,
        AtenMulScalarOp,
        AtenReluOp,
        AtenGeluOp,
        AtenViewOp,
        AtenReshapeOp,
        AtenUnsafeViewOp,
        AtenCloneOp,
        AtenConvolutionOp,
    ],
    [
        IntType,
        FloatType,
        BoolType,
        StrType,
        NoneType,
        NumberType,
        DeviceType,
        ListType,
        OptionalType,
        ValueTensorType,
    ],
)


def torch_op_class(name: str) -> type[Operation]:
    """The class of the torch op `name`: its dedicated definition, else the catch-all."""
    return _TORCH_OPS.get(name) or make_default_op(name)


_TORCH_OPS: dict[str, type[Operation]] = {op.name: op for op in Torch.operations}
