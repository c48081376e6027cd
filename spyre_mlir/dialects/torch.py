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

Definitions only: the lowering lives in `spyre_mlir.lowering`.
See torch-mlir's `TorchTypes.td`, `TorchOps.td` and `GeneratedTorchOps.td`:
https://github.com/llvm/torch-mlir/tree/main/include/torch-mlir/Dialect/Torch/IR
"""

import importlib
import math
import re
import struct
from collections.abc import Callable, Sequence
from dataclasses import fields
from functools import cache

import numpy as np
from xdsl.context import Context
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import (
    I1,
    I64,
    AnyFloat,
    ArrayAttr,
    BFloat16Type,
    Builtin,
    BytesAttr,
    ComplexType,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    Float64Type,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    IntegerType,
    NoneAttr,
    Signedness,
    StringAttr,
    TensorType,
    f16,
    f32,
    f64,
    i1,
)
from xdsl.dialects.func import Func
from xdsl.dialects.math import Math
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    base,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_region_def,
    var_result_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import ConstantLike, Pure
from xdsl.utils.exceptions import VerifyException

# region Types


class TorchType(ParametrizedAttribute, TypeAttribute):
    """Base of the torch types; parameterless unless a subclass says otherwise.

    Inside `!torch.list<...>` and `!torch.optional<...>` torch-mlir writes the nested type
    without its `!torch.` prefix; `print_short` and `_parse_short_type` implement that form.
    """

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        return ()

    def print_parameters(self, printer: Printer) -> None:
        pass

    def print_short(self, printer: Printer) -> None:
        """Print the type as torch-mlir does inside a container: `vtensor<[2],f32>`."""
        printer.print_string(self.name.removeprefix("torch."))
        self.print_parameters(printer)


@irdl_attr_definition
class IntType(TorchType):
    """`!torch.int`: a Python `int` (64-bit signed)."""

    name = "torch.int"


@irdl_attr_definition
class FloatType(TorchType):
    """`!torch.float`: a Python `float` (64-bit)."""

    name = "torch.float"


@irdl_attr_definition
class BoolType(TorchType):
    """`!torch.bool`: a Python `bool`."""

    name = "torch.bool"


@irdl_attr_definition
class StrType(TorchType):
    """`!torch.str`: a Python `str`."""

    name = "torch.str"


@irdl_attr_definition
class NoneType(TorchType):
    """`!torch.none`: the type of Python's `None`."""

    name = "torch.none"


@irdl_attr_definition
class NumberType(TorchType):
    """`!torch.number`: a schema `Scalar`, either `!torch.int` or `!torch.float`."""

    name = "torch.number"


@irdl_attr_definition
class DeviceType(TorchType):
    """`!torch.Device`: a `torch.device`."""

    name = "torch.Device"


def _parse_contained_type(parser: AttrParser) -> tuple[Attribute]:
    with parser.in_angle_brackets():
        return (_parse_short_type(parser),)


@irdl_attr_definition
class ListType(TorchType):
    """`!torch.list<T>`: a Python list whose elements all have torch type `T`."""

    name = "torch.list"
    element_type: TorchType

    def __init__(self, element_type: TorchType):
        super().__init__(element_type)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        return _parse_contained_type(parser)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            self.element_type.print_short(printer)


@irdl_attr_definition
class OptionalType(TorchType):
    """`!torch.optional<T>`: a value of torch type `T`, or `None`."""

    name = "torch.optional"
    element_type: TorchType

    def __init__(self, element_type: TorchType):
        super().__init__(element_type)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        return _parse_contained_type(parser)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            self.element_type.print_short(printer)


def is_valid_dtype(dtype: Attribute) -> bool:
    """Whether torch-mlir accepts `dtype` as a tensor dtype (`isValidTorchDtype`).

    Floats and complex numbers, `i1`, and signed or unsigned 8/16/32/64-bit integers; other
    signless integers such as `i32` are rejected, as in torch-mlir.
    """
    if isinstance(dtype, IntegerType):
        if dtype.signedness.data == Signedness.SIGNLESS:
            return dtype.width.data == 1
        return dtype.width.data in (8, 16, 32, 64)
    return isinstance(dtype, AnyFloat | ComplexType)


@irdl_attr_definition
class ValueTensorType(TorchType):
    """`!torch.vtensor<[4,?,64],f32>`: an immutable tensor value.

    `shape` is an `ArrayAttr` of sizes (-1 for `?`) or `NoneAttr` for an unknown rank (`*`);
    `dtype` is a builtin type (`f32`, `si64`, `i1`, ...) or `NoneAttr` for `unk`.
    With neither known torch-mlir prints the bare `!torch.vtensor`.
    """

    name = "torch.vtensor"
    shape: ArrayAttr[IntAttr] | NoneAttr
    dtype: Attribute

    def __init__(self, shape: Sequence[int] | None, dtype: Attribute | None):
        super().__init__(
            NoneAttr() if shape is None else ArrayAttr(IntAttr(d) for d in shape),
            NoneAttr() if dtype is None else dtype,
        )

    @property
    def has_sizes(self) -> bool:
        return isinstance(self.shape, ArrayAttr)

    @property
    def has_dtype(self) -> bool:
        return not isinstance(self.dtype, NoneAttr)

    def get_shape(self) -> tuple[int, ...]:
        """The sizes, with -1 for an unknown size. Raises `ValueError` if the rank is unknown."""
        if not isinstance(self.shape, ArrayAttr):
            raise ValueError(f"{self} has no known rank")
        return tuple(d.data for d in self.shape)

    def get_dtype(self) -> Attribute | None:
        """The builtin dtype (`f32`, `si64`, `i1`, ...), or None for `unk`."""
        return self.dtype if self.has_dtype else None

    def verify(self) -> None:
        if isinstance(self.shape, ArrayAttr) and any(d.data < -1 for d in self.shape):
            raise VerifyException(f"!torch.vtensor: invalid size in shape {list(self.get_shape())}")
        if self.has_dtype and not is_valid_dtype(self.dtype):
            raise VerifyException(
                f"!torch.vtensor: invalid dtype {self.dtype} (expected a float, complex, i1, "
                "or a signed or unsigned 8/16/32/64-bit integer)"
            )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        if parser.parse_optional_punctuation("<") is None:
            return (NoneAttr(), NoneAttr())

        def parse_size() -> IntAttr:
            if parser.parse_optional_punctuation("?") is not None:
                return IntAttr(-1)
            return IntAttr(parser.parse_integer(allow_boolean=False))

        if parser.parse_optional_punctuation("*") is not None:
            shape: Attribute = NoneAttr()
        else:
            shape = ArrayAttr(parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parse_size))
        parser.parse_punctuation(",")
        dtype = NoneAttr() if parser.parse_optional_keyword("unk") else parser.parse_type()
        parser.parse_punctuation(">")
        return (shape, dtype)

    def print_parameters(self, printer: Printer) -> None:
        if not self.has_sizes and not self.has_dtype:
            return
        with printer.in_angle_brackets():
            if isinstance(self.shape, ArrayAttr):
                sizes = ",".join("?" if d.data == -1 else str(d.data) for d in self.shape)
                printer.print_string(f"[{sizes}],")
            else:
                printer.print_string("*,")
            if self.has_dtype:
                printer.print_attribute(self.dtype)
            else:
                printer.print_string("unk")


_SHORT_TYPES: dict[str, type[TorchType]] = {
    t.name.removeprefix("torch."): t
    for t in (
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
    )
}


def _parse_short_type(parser: AttrParser) -> TorchType:
    """Parse a torch type written without its `!torch.` prefix, as inside containers."""
    pos = parser.pos
    name = parser.parse_identifier(context_msg=" (torch type)")
    if (cls := _SHORT_TYPES.get(name)) is None:
        parser.raise_error(f"unknown torch type '{name}'", pos, parser.pos)
    return cls.new(cls.parse_parameters(parser))


def is_valid_subtype(subtype: Attribute, type: Attribute) -> bool:
    """Whether a value of `subtype` may stand where `type` is expected (torch-mlir's
    `isValidSubtype`, without union, tuple and any types): equal types; int or float for
    number; `T` or none for optional<T>; a vtensor at least as refined as the expected one."""
    if subtype == type:
        return True
    if isinstance(type, NumberType):
        return isinstance(subtype, IntType | FloatType)
    if isinstance(type, OptionalType):
        return isinstance(subtype, NoneType) or is_valid_subtype(subtype, type.element_type)
    if isinstance(type, ValueTensorType) and isinstance(subtype, ValueTensorType):
        return (not type.has_dtype or type.dtype == subtype.dtype) and (
            not type.has_sizes or type.shape == subtype.shape
        )
    return False


# endregion
# region Constants, lists and literals


@irdl_op_definition
class ConstantIntOp(IRDLOperation):
    """`%int1 = torch.constant.int 1`: a Python int constant."""

    name = "torch.constant.int"
    value = prop_def(IntegerAttr[I64])
    result = result_def(IntType())
    traits = traits_def(ConstantLike(), Pure())
    assembly_format = "$value attr-dict"

    def __init__(self, value: int):
        super().__init__(properties={"value": IntegerAttr(value, 64)}, result_types=[IntType()])
        self.result.name_hint = f"int{value}"

    @property
    def int_value(self) -> int:
        return self.value.value.data


def _float_name(value: float) -> str:
    """torch-mlir's result name for a float constant: `float1.000000e00`, `float-Inf`."""
    if math.isnan(value):
        return "floatNaN"
    if math.isinf(value):
        return "floatInf" if value > 0 else "float-Inf"
    return "float" + f"{value:.6e}".replace("+", "")


@irdl_op_definition
class ConstantFloatOp(IRDLOperation):
    """`%float1.000000e00 = torch.constant.float 1.000000e+00`: a Python float (f64) constant.

    Infinities and NaNs are written as the hex bits of the double, as MLIR does:
    `torch.constant.float 0xFFF0000000000000` is -inf.
    """

    name = "torch.constant.float"
    value = prop_def(FloatAttr[Float64Type])
    result = result_def(FloatType())
    traits = traits_def(ConstantLike(), Pure())

    def __init__(self, value: float):
        super().__init__(properties={"value": FloatAttr(value, f64)}, result_types=[FloatType()])
        self.result.name_hint = _float_name(value)

    @property
    def float_value(self) -> float:
        return self.value.value.data

    @classmethod
    def parse(cls, parser: Parser) -> "ConstantFloatOp":
        if parser._current_token.text[:2] in ("0x", "0X"):  # pyright: ignore[reportPrivateUsage]
            bits = parser.parse_integer(allow_boolean=False, allow_negative=False)
            value = struct.unpack("<d", struct.pack("<Q", bits))[0]
        else:
            value = float(parser.parse_number())
        return cls.create(
            properties={"value": FloatAttr(value, f64)},
            attributes=parser.parse_optional_attr_dict(),
            result_types=[FloatType()],
        )

    def print(self, printer: Printer) -> None:
        value = self.float_value
        printer.print_string(" ")
        if math.isfinite(value):
            printer.print_float(value, f64)
        else:
            printer.print_string(f"0x{struct.unpack('<Q', struct.pack('<d', value))[0]:016X}")
        printer.print_op_attributes(self.attributes)


@irdl_op_definition
class ConstantBoolOp(IRDLOperation):
    """`%true = torch.constant.bool true`: a Python bool constant."""

    name = "torch.constant.bool"
    value = prop_def(IntegerAttr[I1])
    result = result_def(BoolType())
    traits = traits_def(ConstantLike(), Pure())
    assembly_format = "$value attr-dict"

    def __init__(self, value: bool):
        super().__init__(properties={"value": IntegerAttr(int(value), i1)}, result_types=[BoolType()])
        self.result.name_hint = "true" if value else "false"


@irdl_op_definition
class ConstantStrOp(IRDLOperation):
    """`%str = torch.constant.str "none"`: a Python str constant."""

    name = "torch.constant.str"
    value = prop_def(StringAttr)
    result = result_def(StrType())
    traits = traits_def(ConstantLike(), Pure())
    assembly_format = "$value attr-dict"

    def __init__(self, value: str):
        super().__init__(properties={"value": StringAttr(value)}, result_types=[StrType()])
        self.result.name_hint = "str"


@irdl_op_definition
class ConstantNoneOp(IRDLOperation):
    """`%none = torch.constant.none`: Python's `None`."""

    name = "torch.constant.none"
    result = result_def(NoneType())
    traits = traits_def(ConstantLike(), Pure())
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__(result_types=[NoneType()])
        self.result.name_hint = "none"


@irdl_op_definition
class ConstantDeviceOp(IRDLOperation):
    """`%cpu = torch.constant.device "cpu"`: a `torch.device` constant."""

    name = "torch.constant.device"
    value = prop_def(StringAttr)
    result = result_def(DeviceType())
    traits = traits_def(ConstantLike(), Pure())
    assembly_format = "$value attr-dict"

    def __init__(self, value: str):
        super().__init__(properties={"value": StringAttr(value)}, result_types=[DeviceType()])
        if SSAValue.is_valid_name(value):
            self.result.name_hint = value


@irdl_op_definition
class PrimListConstructOp(IRDLOperation):
    """`%l = torch.prim.ListConstruct %a, %b : (!torch.int, !torch.int) -> !torch.list<int>`.

    Builds the list `[a, b]`; every element's type must be a valid subtype of the list's
    element type (a `!torch.list<vtensor>` takes any vtensors).
    """

    name = "torch.prim.ListConstruct"
    elements = var_operand_def(TorchType)
    result = result_def(ListType)
    traits = traits_def(Pure())
    assembly_format = "$elements attr-dict `:` functional-type($elements, $result)"

    def __init__(self, elements: Sequence[SSAValue], list_type: ListType):
        super().__init__(operands=[elements], result_types=[list_type])

    def verify_(self) -> None:
        assert isinstance(self.result.type, ListType)
        expected = self.result.type.element_type
        for i, element in enumerate(self.elements):
            if not is_valid_subtype(element.type, expected):
                raise VerifyException(
                    f"{self.name}: element {i} has type {element.type}, which does not fit "
                    f"the list element type {expected}"
                )


_HEX_SPLAT = re.compile(r"\s*dense<\s*(0x[0-9a-fA-F]+)\s*>")


@irdl_op_definition
class ValueTensorLiteralOp(IRDLOperation):
    """`%w = torch.vtensor.literal(dense_resource<w> : tensor<4x8xf32>) : !torch.vtensor<[4,8],f32>`.

    A constant tensor: a `dense_resource` (a blob in the `{-# dialect_resources #-}` section)
    or an inline `dense<...>` (torch-mlir's choice for one-element tensors). The literal's shape
    and element type must match the result's.
    """

    name = "torch.vtensor.literal"
    value = prop_def(base(DenseResourceAttr) | base(DenseIntOrFPElementsAttr))
    result = result_def(ValueTensorType)
    traits = traits_def(ConstantLike(), Pure())

    @classmethod
    def parse(cls, parser: Parser) -> "ValueTensorLiteralOp":
        parser.parse_punctuation("(")
        hex_splat = _HEX_SPLAT.match(parser.lexer.input.content, parser.pos)
        start = parser.pos
        try:
            value = parser.parse_attribute()
        except OverflowError:  # xDSL packs the values as it parses them
            parser.raise_error("a literal value does not fit its element type (out of range)", start, parser.pos)
        if (
            hex_splat
            and isinstance(value, DenseIntOrFPElementsAttr)
            and not isinstance(value.get_element_type(), IntegerType)
        ):
            # MLIR spells a float splat's bits in hex (torch-mlir prints -inf as 0xFF800000);
            # xDSL 0.75 reads the hex as an integer value, so rebuild the bits here
            width = value.get_element_type().compile_time_size
            bits = int(hex_splat.group(1), 16).to_bytes(width, "little")
            value = DenseIntOrFPElementsAttr(value.type, BytesAttr(bits * math.prod(value.get_shape())))
        parser.parse_punctuation(")")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        result_type = parser.parse_type()
        return cls.create(properties={"value": value}, result_types=[result_type], attributes=attrs)

    def print(self, printer: Printer) -> None:
        printer.print_string("(")
        printer.print_attribute(self.value)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    def __init__(self, value: DenseResourceAttr | DenseIntOrFPElementsAttr, result_type: ValueTensorType):
        super().__init__(properties={"value": value}, result_types=[result_type])

    def verify_(self) -> None:
        literal, result = self.value.type, self.result.type
        assert isinstance(result, ValueTensorType)
        if (
            not isinstance(literal, TensorType)
            or (result.has_sizes and result.get_shape() != literal.get_shape())
            or (result.has_dtype and result.dtype != literal.get_element_type())
        ):
            raise VerifyException(
                f"{self.name}: literal of type {literal} does not match result type {self.result.type}"
            )


VALUE_OPS = (
    ConstantIntOp,
    ConstantFloatOp,
    ConstantBoolOp,
    ConstantStrOp,
    ConstantNoneOp,
    ConstantDeviceOp,
    PrimListConstructOp,
    ValueTensorLiteralOp,
)
"""The ops that make torch values rather than compute: constants, lists of values and literal
tensors (no lowering takes them; the host runtime evaluates them)."""

CREATION_OPS = frozenset(
    {
        "torch.aten.full",
        "torch.aten.full_like",
        "torch.aten.zeros",
        "torch.aten.zeros_like",
        "torch.aten.ones",
        "torch.aten.ones_like",
        "torch.aten.empty_like",
        "torch.aten.empty.memory_format",
        "torch.aten.scalar_tensor",
        "torch.aten.arange",
        "torch.aten.arange.start",
        "torch.aten.arange.start_step",
        "torch.aten.lift_fresh_copy",
        "torch.prim.NumToTensor.Scalar",
    }
)
"""Ops that make constants from shapes and numbers: the host builds them (the real stack
constant-folds them at compile time)."""

DTYPE_CONVERSIONS = frozenset({"torch.aten._to_copy", "torch.aten.to.dtype", "torch.prims.convert_element_type"})
"""Ops that only change a tensor's element type."""

ELEMENTWISE_UNARY: tuple[str, ...] = tuple(
    f"torch.aten.{name}"
    for name in (
        "relu",
        "neg",
        "abs",
        "exp",
        "log",
        "sqrt",
        "rsqrt",
        "tanh",
        "sin",
        "cos",
        "erf",
        "sigmoid",
        "reciprocal",
        "gelu",
    )
)
"""Element-wise ops of one tensor (gelu's other operand is its form, a string): each becomes a
spyre.pointwise of one input (convert-torch-to-spyre's LowerUnary; UNARY there gives the body)."""

ELEMENTWISE_BINARY: tuple[str, ...] = (
    *(f"torch.aten.{kind}.Tensor" for kind in ("add", "sub", "mul", "div")),
    "torch.aten.minimum",
    "torch.aten.maximum",
)
"""Element-wise ops of two tensors (add/sub's third operand is alpha): a spyre.pointwise of two
inputs (convert-torch-to-spyre's LowerBinary)."""

ELEMENTWISE_SCALAR: tuple[str, ...] = tuple(f"torch.aten.{kind}.Scalar" for kind in ("add", "sub", "mul", "div"))
"""Element-wise ops of one tensor and a number (add/sub/mul/div.Scalar): a spyre.pointwise of one
input with the number in its body (convert-torch-to-spyre's LowerBinary)."""

PURE_OPS = frozenset(
    {
        # with a device lowering (convert-torch-to-spyre's DEVICE_OPS without a dedicated class)
        *(
            f"torch.aten.{name}"
            for name in (
                "_softmax",
                "abs",
                "alias",
                "amax",
                "amin",
                "cat",
                "clamp",
                "cos",
                "div.Scalar",
                "div.Tensor",
                "embedding",
                "erf",
                "exp",
                "expand",
                "log",
                "matmul",
                "max.dim",
                "maximum",
                "mean.dim",
                "minimum",
                "native_layer_norm",
                "neg",
                "pow.Tensor_Scalar",
                "reciprocal",
                "rsqrt",
                "select.int",
                "sigmoid",
                "sin",
                "slice.Tensor",
                "sqrt",
                "squeeze.dim",
                "squeeze.dims",
                "sum.dim_IntList",
                "tanh",
                "unsqueeze",
                "where.self",
            )
        ),
        # masks and indices (comparisons, logical and bitwise ops), on the host by design
        *(f"torch.aten.{cmp}.{kind}" for cmp in ("eq", "ne", "lt", "le", "gt", "ge") for kind in ("Scalar", "Tensor")),
        *(
            f"torch.aten.{name}"
            for name in (
                "logical_not",
                "logical_and",
                "logical_or",
                "any.dim",
                "bitwise_and.Tensor",
                "bitwise_or.Tensor",
                "bitwise_not",
                "argmax",
                "cumsum",
                "sign",
            )
        ),
        # constants from shapes and numbers (CREATION_OPS without the uninitialised empty*)
        *(CREATION_OPS - {"torch.aten.empty_like", "torch.aten.empty.memory_format"}),
        # other value-semantics ops of the op census (CPU fallback or host)
        *(
            f"torch.aten.{name}"
            for name in (
                "Int.bool",
                "_to_copy",
                "copy",
                "index.Tensor",
                "index_select",
                "index_put",
                "split_with_sizes",
                "gather",
                "repeat",
                "constant_pad_nd",
                "div.Tensor_mode",
                "ceil",
                "floor",
                "log1p",
                "pow.Tensor_Tensor",
                "sort",
                "topk",
                "histc",
                "convolution",
                "_native_batch_norm_legit_no_training",
                "native_group_norm",
                "linalg_vector_norm",
                "max_pool2d_with_indices",
            )
        ),
        "torch.prim.ListUnpack",
        "torch.prims.convert_element_type",
    }
)
"""The torch ops without a dedicated class that are pure functions of their operands: no
in-place or mutated operand, no random numbers (PyTorch's `nondeterministic_seeded` tag), no
uninitialised memory (`empty*`), no external state. Their catch-all classes carry `Pure`, like
the dedicated classes, so `cse` merges two with equal operands, attributes and result types,
and dead ones may be erased. A name not listed keeps unknown effects and is never merged or
erased; test/python/test_cse.py checks every name against PyTorch's schemas."""


@irdl_op_definition
class OperatorOp(IRDLOperation):
    """`%r = torch.operator "torch.aten.foo"(%a) : (!ta) -> !tr`: a call of a PyTorch operator
    that torch-mlir has no registered op for, named by `name`."""

    name = "torch.operator"
    op_name = prop_def(StringAttr, prop_name="name")
    args = var_operand_def(TorchType)
    res = var_result_def(TorchType)
    bodies = var_region_def()
    assembly_format = "$name `(` $args `)` attr-dict `:` functional-type($args, $res) $bodies"


# endregion
# region Default-syntax ops


class DefaultFormatOp(IRDLOperation):
    """Base of the ops with torch-mlir's default syntax (`parseDefaultTorchOp`):
    `%r = torch.aten.foo %a, %b {attrs} : !ta, !tb -> !tr`, or `: !tr` without operands and
    `: !ta, !tb` without results."""

    @classmethod
    def parse(cls, parser: Parser) -> "DefaultFormatOp":
        pos = parser.pos
        args = (
            parser.parse_optional_undelimited_comma_separated_list(
                parser.parse_optional_unresolved_operand, parser.parse_unresolved_operand
            )
            or []
        )
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        arg_types: list[Attribute] = []
        result_types: list[Attribute] = []
        if args:
            arg_types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
            if parser.parse_optional_punctuation("->") is not None:
                result_types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        else:
            result_types = (
                parser.parse_optional_undelimited_comma_separated_list(parser.parse_optional_type, parser.parse_type)
                or []
            )
        return cls.create(
            operands=parser.resolve_operands(args, arg_types, pos),
            result_types=result_types,
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        # Spacing as in torch-mlir's printDefaultTorchOp (two spaces before `:` without operands).
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_operand)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_list(self.operand_types, printer.print_attribute)
        if self.operands and self.results:
            printer.print_string(" -> ")
        printer.print_list(self.result_types, printer.print_attribute)


_TENSOR = ValueTensorType
"""Constraint of tensor operands and results."""
_SCALAR = IntType | FloatType | NumberType | BoolType
"""Constraint of schema `Scalar` operands (torch-mlir's `AnyTorchScalarType`)."""
_INT_LIST = ListType(IntType())
"""Constraint of schema `int[]` operands."""


def sizes_of(value: SSAValue) -> tuple[int, ...] | None:
    """The sizes of a ranked vtensor value (-1 for unknown), else None."""
    t = value.type
    return t.get_shape() if isinstance(t, ValueTensorType) and t.has_sizes else None


def vtensor_type(value: SSAValue) -> ValueTensorType:
    """The type of a value that its op's definition constrains to a `!torch.vtensor` (in
    verified IR, every tensor operand and result of a torch op)."""
    vt = value.type
    assert isinstance(vt, ValueTensorType), f"expected a !torch.vtensor, got {vt}"
    return vt


def _verify_rank(op: Operation, operand: str, value: SSAValue, ranks: Sequence[int]) -> None:
    sizes = sizes_of(value)
    if sizes is not None and len(sizes) not in ranks:
        expected = ", ".join(str(r) for r in ranks[:-1]) + (" or " if len(ranks) > 1 else "") + str(ranks[-1])
        raise VerifyException(f"{op.name}: operand '{operand}' must have rank {expected}, got {value.type}")


def _verify_sizes_agree(op: Operation, what: str, a: int, b: int, operands: Sequence[tuple[str, SSAValue]]) -> None:
    if a != -1 and b != -1 and a != b:
        which = ", ".join(f"'{name}' is {value.type}" for name, value in operands)
        raise VerifyException(f"{op.name}: {what} differ ({a} vs {b}): {which}")


def _verify_matmul(op: Operation, names: tuple[str, str], lhs: SSAValue, rhs: SSAValue, rank: int) -> None:
    """Check `lhs @ rhs` for rank-`rank` operands: contracting sizes (and batch sizes) agree."""
    _verify_rank(op, names[0], lhs, (rank,))
    _verify_rank(op, names[1], rhs, (rank,))
    a, b = sizes_of(lhs), sizes_of(rhs)
    if a is None or b is None:
        return
    operands = ((names[0], lhs), (names[1], rhs))
    _verify_sizes_agree(op, "contracting sizes", a[-1], b[-2], operands)
    if rank == 3:
        _verify_sizes_agree(op, "batch sizes", a[0], b[0], operands)


def _verify_size_list(op: Operation, value: SSAValue, sizes_value: SSAValue, result: SSAValue | None = None) -> None:
    """For view/reshape: at most one -1, a constant size list keeps the element count, and a
    static result type has the elements of the input and the sizes of the list."""
    in_sizes = sizes_of(value)
    sizes = constant_list_ints(sizes_value)
    if sizes is not None:
        if sizes.count(-1) > 1 or any(s < -1 for s in sizes):
            raise VerifyException(f"{op.name}: invalid size list {sizes}")
        if in_sizes is not None and -1 not in in_sizes and -1 not in sizes and math.prod(in_sizes) != math.prod(sizes):
            raise VerifyException(f"{op.name}: cannot view {value.type} with {math.prod(in_sizes)} elements as {sizes}")
    out_sizes = sizes_of(result) if result is not None else None
    if result is None or out_sizes is None:
        return
    if (
        in_sizes is not None
        and -1 not in in_sizes
        and -1 not in out_sizes
        and math.prod(in_sizes) != math.prod(out_sizes)
    ):
        raise VerifyException(f"{op.name}: cannot view {value.type} ({math.prod(in_sizes)} elements) as {result.type}")
    if sizes is not None and (
        len(out_sizes) != len(sizes) or any(s != -1 and o != -1 and s != o for s, o in zip(sizes, out_sizes))
    ):
        raise VerifyException(f"{op.name}: result {result.type} does not have the sizes {sizes}")


def _verify_broadcast(op: Operation, operands: Sequence[SSAValue], result: SSAValue) -> None:
    """Element-wise ops: static operand sizes broadcast (right-aligned, equal or 1), and a
    static result has the broadcast sizes."""
    shapes = [s for s in (sizes_of(v) for v in operands) if s is not None and -1 not in s]
    if len(shapes) != len(operands):
        return
    rank = max(len(s) for s in shapes)
    out: list[int] = []
    for i in range(rank):
        dims = {s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0} - {1}
        if len(dims) > 1:
            raise VerifyException(f"{op.name}: operands {', '.join(str(v.type) for v in operands)} do not broadcast")
        out.append(dims.pop() if dims else 1)
    got = sizes_of(result)
    if got is not None and -1 not in got and tuple(got) != tuple(out):
        raise VerifyException(f"{op.name}: result {result.type} does not have the broadcast sizes {out}")


@irdl_op_definition
class AtenMmOp(DefaultFormatOp):
    """`torch.aten.mm`: `result = self @ mat2` for 2-D `self` (M×K) and `mat2` (K×N)."""

    name = "torch.aten.mm"
    self_ = operand_def(_TENSOR)
    mat2 = operand_def(_TENSOR)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _verify_matmul(self, ("self", "mat2"), self.self_, self.mat2, 2)


@irdl_op_definition
class AtenBmmOp(DefaultFormatOp):
    """`torch.aten.bmm`: `result[b] = self[b] @ mat2[b]` for 3-D `self` (B×M×K) and `mat2` (B×K×N)."""

    name = "torch.aten.bmm"
    self_ = operand_def(_TENSOR)
    mat2 = operand_def(_TENSOR)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _verify_matmul(self, ("self", "mat2"), self.self_, self.mat2, 3)


@irdl_op_definition
class AtenAddmmOp(DefaultFormatOp):
    """`torch.aten.addmm`: `result = beta * self + alpha * (mat1 @ mat2)`, `self` broadcast to M×N."""

    name = "torch.aten.addmm"
    self_ = operand_def(_TENSOR)
    mat1 = operand_def(_TENSOR)
    mat2 = operand_def(_TENSOR)
    beta = operand_def(_SCALAR)
    alpha = operand_def(_SCALAR)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _verify_matmul(self, ("mat1", "mat2"), self.mat1, self.mat2, 2)


@irdl_op_definition
class AtenLinearOp(DefaultFormatOp):
    """`torch.aten.linear`: `result = input @ weight.T + bias`; `bias` may be `!torch.none`."""

    name = "torch.aten.linear"
    input = operand_def(_TENSOR)
    weight = operand_def(_TENSOR)
    bias = operand_def(_TENSOR | NoneType)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _verify_rank(self, "weight", self.weight, (1, 2))
        x, w = sizes_of(self.input), sizes_of(self.weight)
        if x and w:
            operands = (("input", self.input), ("weight", self.weight))
            _verify_sizes_agree(self, "in-features", x[-1], w[-1], operands)


@irdl_op_definition
class AtenTOp(DefaultFormatOp):
    """`torch.aten.t`: transpose of a tensor of rank at most 2."""

    name = "torch.aten.t"
    self_ = operand_def(_TENSOR)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _verify_rank(self, "self", self.self_, (0, 1, 2))


@irdl_op_definition
class AtenPermuteOp(DefaultFormatOp):
    """`torch.aten.permute`: `result.shape[i] = self.shape[dims[i]]` (negative dims count from the end)."""

    name = "torch.aten.permute"
    self_ = operand_def(_TENSOR)
    dims = operand_def(_INT_LIST)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        dims, sizes = constant_list_ints(self.dims), sizes_of(self.self_)
        if dims is None or sizes is None:
            return
        rank = len(sizes)
        if (
            len(dims) != rank
            or any(not -rank <= d < rank for d in dims)
            or sorted(d % rank for d in dims) != list(range(rank))
        ):
            raise VerifyException(
                f"{self.name}: dims {dims} are not a permutation of the {rank} dims of {self.self_.type}"
            )


@irdl_op_definition
class AtenTransposeIntOp(DefaultFormatOp):
    """`torch.aten.transpose.int`: swap dims `dim0` and `dim1` (negative dims count from the end)."""

    name = "torch.aten.transpose.int"
    self_ = operand_def(_TENSOR)
    dim0 = operand_def(IntType)
    dim1 = operand_def(IntType)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        sizes = sizes_of(self.self_)
        if sizes is None:
            return
        rank = max(len(sizes), 1)
        for dim in (self.dim0, self.dim1):
            if (d := constant_int_value(dim)) is not None and not -rank <= d < rank:
                raise VerifyException(f"{self.name}: dim {d} is out of range for {self.self_.type}")


@irdl_op_definition
class AtenAddTensorOp(DefaultFormatOp):
    """`torch.aten.add.Tensor`: `result = self + alpha * other`, broadcasting."""

    name = "torch.aten.add.Tensor"
    self_ = operand_def(_TENSOR)
    other = operand_def(_TENSOR)
    alpha = operand_def(_SCALAR)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _verify_broadcast(self, [self.self_, self.other], self.result)


@irdl_op_definition
class AtenAddScalarOp(DefaultFormatOp):
    """`torch.aten.add.Scalar`: `result = self + alpha * other` for a scalar `other`."""

    name = "torch.aten.add.Scalar"
    self_ = operand_def(_TENSOR)
    other = operand_def(_SCALAR)
    alpha = operand_def(_SCALAR)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _verify_broadcast(self, [self.self_], self.result)


@irdl_op_definition
class AtenSubTensorOp(DefaultFormatOp):
    """`torch.aten.sub.Tensor`: `result = self - alpha * other`, broadcasting."""

    name = "torch.aten.sub.Tensor"
    self_ = operand_def(_TENSOR)
    other = operand_def(_TENSOR)
    alpha = operand_def(_SCALAR)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _verify_broadcast(self, [self.self_, self.other], self.result)


@irdl_op_definition
class AtenSubScalarOp(DefaultFormatOp):
    """`torch.aten.sub.Scalar`: `result = self - alpha * other` for a scalar `other`."""

    name = "torch.aten.sub.Scalar"
    self_ = operand_def(_TENSOR)
    other = operand_def(_SCALAR)
    alpha = operand_def(_SCALAR)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _verify_broadcast(self, [self.self_], self.result)


@irdl_op_definition
class AtenMulTensorOp(DefaultFormatOp):
    """`torch.aten.mul.Tensor`: `result = self * other`, broadcasting."""

    name = "torch.aten.mul.Tensor"
    self_ = operand_def(_TENSOR)
    other = operand_def(_TENSOR)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _verify_broadcast(self, [self.self_, self.other], self.result)


@irdl_op_definition
class AtenMulScalarOp(DefaultFormatOp):
    """`torch.aten.mul.Scalar`: `result = self * other` for a scalar `other`."""

    name = "torch.aten.mul.Scalar"
    self_ = operand_def(_TENSOR)
    other = operand_def(_SCALAR)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _verify_broadcast(self, [self.self_], self.result)


@irdl_op_definition
class AtenReluOp(DefaultFormatOp):
    """`torch.aten.relu`: `result = max(self, 0)`."""

    name = "torch.aten.relu"
    self_ = operand_def(_TENSOR)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _verify_broadcast(self, [self.self_], self.result)


@irdl_op_definition
class AtenGeluOp(DefaultFormatOp):
    """`torch.aten.gelu`: `result = self * Φ(self)`, with `approximate` "none" (erf) or "tanh"."""

    name = "torch.aten.gelu"
    self_ = operand_def(_TENSOR)
    approximate = operand_def(StrType)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        mode = constant_str_value(self.approximate)
        if mode is not None and mode not in ("none", "tanh"):
            raise VerifyException(f'{self.name}: approximate must be "none" or "tanh", got "{mode}"')


@irdl_op_definition
class AtenViewOp(DefaultFormatOp):
    """`torch.aten.view`: `self` with sizes `size` (one may be -1), same elements in row-major order."""

    name = "torch.aten.view"
    self_ = operand_def(_TENSOR)
    size = operand_def(_INT_LIST)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _verify_size_list(self, self.self_, self.size, self.result)


@irdl_op_definition
class AtenReshapeOp(DefaultFormatOp):
    """`torch.aten.reshape`: `self` with sizes `shape` (one may be -1), same elements in row-major order."""

    name = "torch.aten.reshape"
    self_ = operand_def(_TENSOR)
    shape = operand_def(_INT_LIST)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _verify_size_list(self, self.self_, self.shape, self.result)


@irdl_op_definition
class AtenUnsafeViewOp(DefaultFormatOp):
    """`torch.aten._unsafe_view`: as `torch.aten.view` (the result is not tracked as an alias)."""

    name = "torch.aten._unsafe_view"
    self_ = operand_def(_TENSOR)
    size = operand_def(_INT_LIST)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _verify_size_list(self, self.self_, self.size, self.result)


@irdl_op_definition
class AtenCloneOp(DefaultFormatOp):
    """`torch.aten.clone`: a copy of `self`; `memory_format` is an int or `!torch.none`."""

    name = "torch.aten.clone"
    self_ = operand_def(_TENSOR)
    memory_format = operand_def(IntType | NoneType)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())


@irdl_op_definition
class AtenConvolutionOp(DefaultFormatOp):
    """`torch.aten.convolution` (aot_autograd's form of conv1d/conv2d/conv3d and their
    transposes): for `input` (N, C, *S), `weight` (C_out, C / groups, *K), group g of
    C_out / groups output channels reading the g-th C / groups input channels, and
    `bias` (C_out) or `!torch.none`:

        result[n, o, *p] = bias[o] + sum over c, *k of
            input_padded[n, g(o) * C/groups + c, *(p * stride + k * dilation)] * weight[o, c, *k]
        O_d = (S_d + 2 padding_d - dilation_d (K_d - 1) - 1) // stride_d + 1

    `transposed` swaps the roles (weight (C, C_out / groups, *K)); `output_padding` applies
    to transposed convolutions only."""

    name = "torch.aten.convolution"
    input = operand_def(_TENSOR)
    weight = operand_def(_TENSOR)
    bias = operand_def(_TENSOR | NoneType)
    stride = operand_def(_INT_LIST)
    padding = operand_def(_INT_LIST)
    dilation = operand_def(_INT_LIST)
    transposed = operand_def(BoolType)
    output_padding = operand_def(_INT_LIST)
    groups = operand_def(IntType)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _verify_rank(self, "input", self.input, (3, 4, 5))
        _verify_rank(self, "weight", self.weight, (3, 4, 5))
        x, w = sizes_of(self.input), sizes_of(self.weight)
        if x is None or w is None:
            return
        if len(x) != len(w):
            raise VerifyException(f"{self.name}: input {self.input.type} and weight {self.weight.type} differ in rank")
        spatial = len(x) - 2
        lists = {name: constant_list_ints(getattr(self, name)) for name in ("stride", "padding", "dilation")}
        for name, values in lists.items():
            if values is not None and len(values) not in (1, spatial):
                raise VerifyException(f"{self.name}: {name} {values} has neither 1 nor {spatial} entries")
        groups = constant_int_value(self.groups)
        if groups is not None and groups < 1:
            raise VerifyException(f"{self.name}: groups {groups} must be positive")
        transposed = self.transposed.owner
        if groups is None or not isinstance(transposed, ConstantBoolOp) or transposed.value.value.data:
            return
        operands = (("input", self.input), ("weight", self.weight))
        if w[0] != -1 and w[0] % groups:
            raise VerifyException(f"{self.name}: {w[0]} output channels do not split into {groups} groups")
        if w[1] != -1:
            _verify_sizes_agree(self, "input channels", x[1], w[1] * groups, operands)
        out = sizes_of(self.result)
        given = [v for v in lists.values() if v is not None]
        if out is None or -1 in x or -1 in w or len(given) != 3:
            return
        stride, padding, dilation = ([v[0]] * spatial if len(v) == 1 else v for v in given)
        want = [x[0], w[0]] + [
            (s + 2 * p - d * (k - 1) - 1) // st + 1 for s, k, st, p, d in zip(x[2:], w[2:], stride, padding, dilation)
        ]
        if any(o != -1 and o != e for o, e in zip(out, want)) or len(out) != len(want):
            raise VerifyException(f"{self.name}: result {self.result.type} is not the convolution's shape {want}")


@cache
def make_default_op(op_name: str) -> type[DefaultFormatOp]:
    """The catch-all class for a torch op without a dedicated definition: variadic operands
    `args` and results `res`, torch-mlir's default syntax; `Pure` if the name is in
    `PURE_OPS`, else no traits (effects unknown). Cached, so every context shares one class
    per name."""
    cls = type(
        "".join(part[:1].upper() + part[1:] for part in op_name.split(".")) + "Op",
        (DefaultFormatOp,),
        {
            "__doc__": f"`{op_name}`: no dedicated definition; see the PyTorch schema.",
            "__module__": __name__,
            "name": op_name,
            "args": var_operand_def(),
            "res": var_result_def(),
            **({"traits": traits_def(Pure())} if op_name in PURE_OPS else {}),
        },
    )
    return irdl_op_definition(cls)


# endregion
# region Reading constants


def constant_int_value(value: SSAValue) -> int | None:
    """The int of a `torch.constant.int` result, else None."""
    return value.owner.int_value if isinstance(value.owner, ConstantIntOp) else None


def constant_float_value(value: SSAValue) -> float | None:
    """The number of a `torch.constant.float` or `torch.constant.int` result (a schema
    `Scalar` may be either), as a float; else None."""
    if isinstance(value.owner, ConstantFloatOp):
        return value.owner.float_value
    i = constant_int_value(value)
    return None if i is None else float(i)


def constant_str_value(value: SSAValue) -> str | None:
    """The string of a `torch.constant.str` result, else None."""
    return value.owner.value.data if isinstance(value.owner, ConstantStrOp) else None


def constant_list_ints(value: SSAValue) -> list[int] | None:
    """The ints of a `torch.prim.ListConstruct` of `torch.constant.int`s, else None."""
    if not isinstance(value.owner, PrimListConstructOp):
        return None
    ints: list[int] = []
    for element in value.owner.elements:
        if (i := constant_int_value(element)) is None:
            return None
        ints.append(i)
    return ints


# endregion
# region Resources


_FLOAT_DTYPES: dict[Attribute, np.dtype] = {
    f16: np.dtype(np.float16),
    f32: np.dtype(np.float32),
    f64: np.dtype(np.float64),
}
_ELEMENT_OF_NUMPY: dict[np.dtype, Attribute] = {
    **{d: e for e, d in _FLOAT_DTYPES.items()},
    np.dtype(np.bool_): i1,
    **{np.dtype(f"int{w}"): IntegerType(w, Signedness.SIGNED) for w in (8, 16, 32, 64)},
    **{np.dtype(f"uint{w}"): IntegerType(w, Signedness.UNSIGNED) for w in (8, 16, 32, 64)},
}


def _numpy_dtype(element: Attribute) -> np.dtype | None:
    """The numpy dtype of a tensor element type (`si64`, `i64` -> int64; `i1` -> bool)."""
    if isinstance(element, IntegerType):
        width, unsigned = element.width.data, element.signedness.data == Signedness.UNSIGNED
        if width == 1:
            return np.dtype(np.bool_)
        return np.dtype(f"{'u' if unsigned else ''}int{width}") if width in (8, 16, 32, 64) else None
    return _FLOAT_DTYPES.get(element)


def _blob_store(ctx: Context) -> OpAsmDialectInterface:
    store = ctx.get_dialect("builtin").get_interface(OpAsmDialectInterface)
    assert store is not None, "the builtin dialect has no OpAsmDialectInterface"
    return store


def resource_to_numpy(ctx: Context, attr: DenseResourceAttr) -> np.ndarray:
    """The contents of a `dense_resource` blob held by `ctx`'s builtin dialect, as a read-only
    array of the attribute's shape (bf16 is widened to float32).

    An MLIR blob is a 4-byte little-endian alignment header followed by the raw little-endian
    elements. Raises KeyError if the context has no data for the handle, ValueError if the
    blob is not hex or does not hold exactly the elements of the type."""
    handle = attr.resource_handle.data
    blob = _blob_store(ctx).lookup(handle)
    if not blob:
        raise KeyError(f"no blob for dense_resource<{handle}> in this context")
    try:
        raw = bytes.fromhex(blob[2:])[4:]
    except ValueError:
        raise ValueError(f"the blob of dense_resource<{handle}> is not hexadecimal bytes") from None
    t = attr.type
    assert isinstance(t, TensorType)
    element = t.get_element_type()
    width = (
        2 if isinstance(element, BFloat16Type) else (d.itemsize if (d := _numpy_dtype(element)) is not None else None)
    )
    if width is not None and len(raw) != math.prod(t.get_shape()) * width:
        raise ValueError(
            f"the blob of dense_resource<{handle}> holds {len(raw)} bytes after its header, {t} needs {math.prod(t.get_shape()) * width}"
        )
    if isinstance(element, BFloat16Type):
        bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
        return bits.view(np.float32).reshape(t.get_shape())
    if (dtype := _numpy_dtype(element)) is None:
        raise ValueError(f"no numpy dtype for dense_resource element type {element}")
    return np.frombuffer(raw, dtype=dtype.newbyteorder("<")).reshape(t.get_shape())


def numpy_to_resource(
    ctx: Context, name_hint: str, array: np.ndarray, element_type: Attribute | None = None
) -> DenseResourceAttr:
    """Store `array` as a new blob in `ctx`'s builtin dialect and return its
    `dense_resource<...> : tensor<...>`; the handle is `name_hint`, suffixed `_0`, `_1`, ...
    if taken. The element type follows torch-mlir (int64 -> si64, bool -> i1) unless
    `element_type` overrides it (e.g. bf16 for the bits of a uint16 array)."""
    if element_type is None:
        if (element_type := _ELEMENT_OF_NUMPY.get(array.dtype.newbyteorder("="))) is None:
            raise ValueError(f"no element type for numpy dtype {array.dtype}")
    data = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
    store = _blob_store(ctx)
    handle = store.declare_resource(name_hint)
    header = struct.pack("<I", data.itemsize)
    store.parse_resource(handle, "0x" + (header + data.tobytes()).hex().upper())
    return DenseResourceAttr.from_params(handle, TensorType(element_type, data.shape))


# endregion
# region Dialect and context


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

# endregion
