"""The `spyre_isa` dialect's attributes: a value per core of a stream (`#spyre_isa.per_core`),
a strided window of LX or DDR sticks (`#spyre_isa.access`) and the cores a stream runs on
(`#spyre_isa.cores`).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, Float16Type, Float32Type, IntAttr, IntegerAttr, i64
from xdsl.ir import Attribute, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from spyre_mlir.dialects.spyre.attrs import IntListAttr, int_list

# region Attributes

MAX_TABLE = 1 << 16
"""Most cores a core set or a per-core table may name (the parsers refuse more instead of
building the list)."""

"""Largest count an instruction's loop fields hold: each loop size of a nest, and pt_matmul's
m, n, k, dma_gather's count and row_sticks, sfp_transpose's blocks. Assumption (no public
encoding; docs/hardware.md): 16-bit fields. Every loop the compiler emits walks LX sticks, at
most 16,384 of them in a 2 MiB LX; DeviceConfig.validate refuses an LX these fields cannot walk."""


@irdl_attr_definition
class PerCoreAttr(ParametrizedAttribute):
    """An integer per core of a stream: `5` (all cores), `[0, 4, 9]`, or `[0 step 4 x 8]`
    (value_i = 0 + 4 * i for the stream's i-th core, 8 cores)."""

    name = "spyre_isa.per_core"
    values: ArrayAttr[IntAttr]

    def __init__(self, values: Sequence[int] | int):
        vals = [values] if isinstance(values, int) else list(values)
        super().__init__(ArrayAttr(IntAttr(v) for v in vals))

    def table(self, n: int) -> list[int]:
        """The value for each of n cores."""
        v = [x.data for x in self.values]
        return v * n if len(v) == 1 else v

    @property
    def is_uniform(self) -> bool:
        return len(self.values) == 1

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        if parser.parse_optional_punctuation("[") is None:
            return (ArrayAttr([IntAttr(parser.parse_integer(allow_boolean=False))]),)
        first = parser.parse_integer(allow_boolean=False)
        if parser.parse_optional_keyword("step") is not None:
            step = parser.parse_integer(allow_boolean=False)
            parser.parse_keyword("x")
            count = parser.parse_integer(allow_boolean=False, allow_negative=False)
            if count > MAX_TABLE:
                parser.raise_error(f"a per-core table of {count} values; at most {MAX_TABLE}")
            parser.parse_punctuation("]")
            return (ArrayAttr(IntAttr(first + step * i) for i in range(count)),)
        vals = [first]
        while parser.parse_optional_punctuation(",") is not None:
            vals.append(parser.parse_integer(allow_boolean=False))
        parser.parse_punctuation("]")
        return (ArrayAttr(IntAttr(v) for v in vals),)

    def table_text(self) -> str:
        """`5`, `[0 step 4 x 8]` or `[0, 4, 9]` (the spelling inside accesses)."""
        v = [x.data for x in self.values]
        if len(v) == 1:
            return str(v[0])
        if len(v) > 2 and all(v[i + 1] - v[i] == v[1] - v[0] for i in range(len(v) - 1)):
            return f"[{v[0]} step {v[1] - v[0]} x {len(v)}]"
        return "[" + ", ".join(map(str, v)) + "]"

    def print_parameters(self, printer: Printer) -> None:
        # on its own a uniform value prints as `[5]`: `#spyre_isa.per_core5` would not parse
        text = self.table_text()
        printer.print_string(text if text.startswith("[") else f"[{text}]")

    def verify(self) -> None:
        if not self.values:
            raise VerifyException("#spyre_isa.per_core: a table needs at least one value")


@functools.lru_cache(maxsize=1 << 14)
def i64_attr(value: int) -> IntegerAttr:
    """IntegerAttr(value, i64), built (and verified) once per distinct value."""
    return IntegerAttr(value, i64)


@functools.lru_cache(maxsize=1 << 16)
def per_core(values: int | tuple[int, ...]) -> PerCoreAttr:
    """PerCoreAttr(values), built (and verified) once per distinct table."""
    return PerCoreAttr(values)


def as_per_core(values: PerCoreAttr | Sequence[int] | int) -> PerCoreAttr:
    """A per-core table from a table, a value per core or one value for all."""
    if isinstance(values, PerCoreAttr):
        return values
    return per_core(values if isinstance(values, int) else tuple(values))


@irdl_attr_definition
class AccessAttr(ParametrizedAttribute):
    """A strided window of sticks: `[base, strides = [s0, s1]]` or `[base, strides = [..], f32]`.

    Along the instruction's loop nest `sizes`, iteration (i0, i1, ...) touches
        stick(i) = base[core] + i0 * s0 + i1 * s1 + ...
    of the named memory (one stick per step for f16, two consecutive sticks for f32 in SFP).
    """

    name = "spyre_isa.access"
    base: PerCoreAttr
    strides: IntListAttr
    element_type: Attribute

    def __init__(
        self, base: PerCoreAttr | Sequence[int] | int, strides: Sequence[int], element_type: Attribute = Float16Type()
    ):
        super().__init__(as_per_core(base), int_list(tuple(strides)), element_type)

    @property
    def is_f32(self) -> bool:
        return isinstance(self.element_type, Float32Type)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("[")
        base = PerCoreAttr.new(PerCoreAttr.parse_parameters(parser))
        parser.parse_punctuation(",")
        parser.parse_keyword("strides")
        parser.parse_punctuation("=")
        strides = IntListAttr.new(IntListAttr.parse_parameters(parser))
        elt: Attribute = Float16Type()
        if parser.parse_optional_punctuation(",") is not None:
            elt = parser.parse_type()
        parser.parse_punctuation("]")
        return (base, strides, elt)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("[" + self.base.table_text() + ", strides = ")
        self.strides.print_parameters(printer)
        if not isinstance(self.element_type, Float16Type):
            printer.print_string(", ")
            printer.print_attribute(self.element_type)
        printer.print_string("]")

    def verify(self) -> None:
        if not isinstance(self.element_type, Float16Type | Float32Type):
            raise VerifyException(f"#spyre_isa.access: element type must be f16 or f32, got {self.element_type}")
        if any(v.data < 0 for v in self.base.values):
            raise VerifyException(f"#spyre_isa.access: negative base stick in {self.base.table(1)}")
        if any(v < 0 for v in self.strides.as_tuple()):
            raise VerifyException(f"#spyre_isa.access: negative stride in {list(self.strides.as_tuple())}")


@functools.lru_cache(maxsize=1 << 16)
def access(table: PerCoreAttr, strides: tuple[int, ...], f32: bool = False) -> AccessAttr:
    """AccessAttr(table, strides, f32 or f16), built (and verified) once per distinct access."""
    return AccessAttr(table, strides, Float32Type() if f32 else Float16Type())


@irdl_attr_definition
class CoreSetAttr(ParametrizedAttribute):
    """The cores a stream runs on: `[0 to 30]`, `[31]`, `[0 to 3, 8 to 11]` (inclusive)."""

    name = "spyre_isa.cores"
    cores: ArrayAttr[IntAttr]

    def __init__(self, cores: Sequence[int]):
        super().__init__(ArrayAttr(IntAttr(c) for c in cores))

    def as_tuple(self) -> tuple[int, ...]:
        return tuple(c.data for c in self.cores)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        def item() -> list[int]:
            lo = parser.parse_integer(allow_boolean=False)
            if parser.parse_optional_keyword("to") is not None:
                hi = parser.parse_integer(allow_boolean=False)
                if hi < lo:
                    parser.raise_error(f"empty core range {lo} to {hi}")
                if hi - lo >= MAX_TABLE:
                    parser.raise_error(f"core range {lo} to {hi} has more than {MAX_TABLE} cores")
                return list(range(lo, hi + 1))
            return [lo]

        groups = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, item)
        return (ArrayAttr(IntAttr(c) for g in groups for c in g),)

    def print_parameters(self, printer: Printer) -> None:
        cores = self.as_tuple()
        runs: list[str] = []
        i = 0
        while i < len(cores):
            j = i
            while j + 1 < len(cores) and cores[j + 1] == cores[j] + 1:
                j += 1
            runs.append(f"{cores[i]} to {cores[j]}" if j > i else str(cores[i]))
            i = j + 1
        printer.print_string("[" + ", ".join(runs) + "]")

    def verify(self) -> None:
        cores = self.as_tuple()
        if not cores:
            raise VerifyException("#spyre_isa.cores: a stream needs at least one core")
        if list(cores) != sorted(set(cores)):
            raise VerifyException(f"#spyre_isa.cores: cores must be increasing and distinct, got {list(cores)}")
        if cores[0] < 0:
            raise VerifyException(f"#spyre_isa.cores: core numbers must be >= 0, got {list(cores)}")


# endregion
