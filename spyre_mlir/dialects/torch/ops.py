"""The `torch` ops with torch-mlir's custom syntax: the constants `torch.constant.*`,
`torch.prim.ListConstruct`, `torch.vtensor.literal` (whose weights live in the
`{-# dialect_resources #-}` section) and `torch.operator "name"(...)` (a PyTorch op torch-mlir has
no op for); and the reading of constants through `value.owner` (`constant_int_value` and
friends).
"""

import math
import re
import struct
from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I1,
    I64,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    f64,
    i1,
)
from xdsl.ir import SSAValue
from xdsl.irdl import (
    IRDLOperation,
    base,
    irdl_op_definition,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_region_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import ConstantLike, Pure
from xdsl.utils.exceptions import VerifyException

from spyre_mlir.dialects.torch.types import (
    BoolType,
    DeviceType,
    FloatType,
    IntType,
    ListType,
    NoneType,
    StrType,
    TorchType,
    ValueTensorType,
    is_valid_subtype,
)

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
