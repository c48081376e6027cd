"""The `torch` dialect's types, spelled as torch-mlir prints them: `!torch.vtensor<[4,?,64],f32>`
(`ValueTensorType`: `?` an unknown size, stored as -1; `*` an unknown rank; `unk` an unknown
dtype), the scalars `!torch.int`, `!torch.float`, `!torch.bool`, `!torch.str`, `!torch.none`,
`!torch.number` and `!torch.Device`, and the containers `!torch.list<T>` and `!torch.optional<T>`
(inside which torch-mlir drops the `!torch.` prefix).
"""

from collections.abc import Sequence

from xdsl.dialects.builtin import AnyFloat, ArrayAttr, ComplexType, IntAttr, IntegerType, NoneAttr, Signedness
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException


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
