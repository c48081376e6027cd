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

This file defines; `spyre_mlir.lowering.convert_spyre_to_isa` produces these ops and
`spyre_mlir.sim` executes them.
"""

from __future__ import annotations

import functools
import math
import struct
from abc import ABC
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    DenseArrayBase,
    Float16Type,
    Float32Type,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
    f32,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Dialect, Operation, ParametrizedAttribute, Region, SSAValue
from xdsl.irdl import (
    BaseAttr,
    IRDLOperation,
    OptPropertyDef,
    VerificationContext,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_attr_def,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsolatedFromAbove, NoTerminator, SymbolOpInterface, SymbolTable
from xdsl.utils.exceptions import VerifyException

from spyre_mlir.dialects.spyre import IntListAttr, check_kernel_operand, device_layout, int_list, is_index_tensor
from spyre_mlir.target.constants import F16_LANES, MAX_LOOP_COUNT, TRANSPOSE_BLOCK

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


def _table(values: PerCoreAttr | Sequence[int] | int) -> PerCoreAttr:
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
        super().__init__(_table(base), int_list(tuple(strides)), element_type)

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
# region Program structure


IN_PLACE_ATTR = "spyre.in_place"
"""A program's attribute: the input whose DDR buffer its one output is (ProgramOp.in_place)."""


@irdl_op_definition
class ProgramOp(IRDLOperation):
    """One device program (a kernel launch): its DDR tensors are the block arguments,
    `inputs` of them read, the rest written; its body holds the streams of the cores.

        for each stream s, concurrently on its cores: run s's instructions in order
    """

    name = "spyre_isa.program"
    sym_name = prop_def(StringAttr)
    num_inputs = prop_def(IntAttr)
    body = region_def("single_block")
    traits = traits_def(SymbolOpInterface(), IsolatedFromAbove(), NoTerminator())

    def __init__(self, name: str, arg_types: Sequence[Attribute], num_inputs: int, body: Region | None = None):
        super().__init__(
            properties={"sym_name": StringAttr(name), "num_inputs": IntAttr(num_inputs)},
            regions=[body or Region(Block(arg_types=arg_types))],
        )

    @property
    def args(self):
        return self.body.block.args

    @property
    def in_place(self) -> int | None:
        """The input whose DDR buffer the output is (`spyre.in_place`: the program writes only part
        of it, such as a scatter's rows; the input is not read after the launch), or None."""
        attr = self.attributes.get(IN_PLACE_ATTR)
        return attr.value.data if isinstance(attr, IntegerAttr) else None

    @property
    def streams(self) -> list[StreamOp]:
        return [op for op in self.body.block.ops if isinstance(op, StreamOp)]

    @classmethod
    def parse(cls, parser: Parser) -> ProgramOp:
        name = parser.parse_symbol_name().data
        args = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_argument)
        parser.parse_keyword("inputs")
        n = parser.parse_integer(allow_boolean=False, allow_negative=False)
        attrs = parser.parse_optional_attr_dict_with_keyword()
        body = parser.parse_region(args)
        if not body.blocks:  # `{}` with no arguments: the program still has its (empty) block
            body.add_block(Block())
        op = cls.create(
            properties={"sym_name": StringAttr(name), "num_inputs": IntAttr(n)},
            regions=[body],
            attributes=attrs.data if attrs else {},
        )
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" @{self.sym_name.data}(")
        printer.print_list(self.body.block.args, printer.print_block_argument)
        printer.print_string(f") inputs {self.num_inputs.data}")
        if self.attributes:
            printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=False)

    def verify_(self) -> None:
        n_args = len(self.body.block.args)
        if not 0 <= self.num_inputs.data <= n_args:
            raise VerifyException(
                f"'spyre_isa.program' @{self.sym_name.data}: inputs = {self.num_inputs.data} but it has {n_args} arguments"
            )
        for i, a in enumerate(self.body.block.args):
            check_kernel_operand(a.type, f"'spyre_isa.program' @{self.sym_name.data}: argument {i}")
        for name in ("spyre.resident_in", "spyre.resident_out"):  # LX [lo, hi) sticks kept between launches
            attr = self.attributes.get(name)
            if attr is None:
                continue
            values = attr.get_values() if isinstance(attr, DenseArrayBase) else None
            if values is None or len(values) != 2 or not 0 <= values[0] < values[1]:
                raise VerifyException(
                    f"'spyre_isa.program' @{self.sym_name.data}: {name} must be array<i64: lo, hi> with 0 <= lo < hi (LX sticks), got {attr}"
                )
        in_place = self.in_place
        if IN_PLACE_ATTR in self.attributes:
            outs = n_args - self.num_inputs.data
            if in_place is None or outs != 1 or not 0 <= in_place < self.num_inputs.data:
                raise VerifyException(
                    f"'spyre_isa.program' @{self.sym_name.data}: {IN_PLACE_ATTR} must be an i64 input index of a "
                    f"program with one output, got {self.attributes[IN_PLACE_ATTR]}"
                )
            if self.args[in_place].type != self.args[-1].type:
                raise VerifyException(
                    f"'spyre_isa.program' @{self.sym_name.data}: its output is written in input {in_place}'s buffer "
                    f"({IN_PLACE_ATTR}), so their types must be equal: {self.args[in_place].type} != {self.args[-1].type}"
                )
        seen: set[int] = set()
        for op in self.body.block.ops:
            if not isinstance(op, StreamOp):
                raise VerifyException(
                    f"'spyre_isa.program' @{self.sym_name.data}: only streams may appear at its top level, found '{op.name}'"
                )
            overlap = seen.intersection(op.core_list)
            if overlap:
                raise VerifyException(
                    f"'spyre_isa.program' @{self.sym_name.data}: core {min(overlap)} is in two streams"
                )
            seen.update(op.core_list)


@irdl_op_definition
class StreamOp(IRDLOperation):
    """The instruction list that each of a set of cores runs (SPMD); per-core operands
    (bases, ring shifts, tokens) are tables over `cores` in order.

    Each core runs the list in order at its own pace; cores meet only through tokens and
    barriers. A stream that does not both wait for tokens (`wait`, a ring send's `after`)
    and produce them (`signal`, `notify`), with one token per instruction for all its cores,
    runs the same as if its cores moved in lockstep (nothing it waits for can come from its
    own progress), and the device model runs it so; any other stream (a multicast chain,
    whose cores pass tiles on to each other) runs core by core."""

    name = "spyre_isa.stream"
    cores = prop_def(CoreSetAttr)
    body = region_def("single_block")
    traits = traits_def(NoTerminator(), HasParent(ProgramOp))
    assembly_format = "`cores` $cores attr-dict-with-keyword $body"

    def __init__(self, cores: Sequence[int], instructions: Sequence[Operation] = ()):
        super().__init__(properties={"cores": CoreSetAttr(cores)}, regions=[Region(Block(instructions))])

    @property
    def core_list(self) -> tuple[int, ...]:
        return self.cores.as_tuple()

    def verify_(self) -> None:
        for op in self.body.block.ops:
            if not isinstance(op, IsaInstruction):
                raise VerifyException(
                    f"'spyre_isa.stream' on cores {list(self.core_list)}: only instructions may appear in a stream, "
                    f"found '{op.name}'"
                )


# endregion
# region Instruction bases


class IsaInstruction(IRDLOperation, ABC):
    """An instruction of a stream; `ENGINE` names the unit that executes it."""

    ENGINE: ClassVar[str]
    traits = traits_def(HasParent(StreamOp))
    OWN_CHECKS: ClassVar[Callable[[IsaInstruction], None]]
    """The instruction class's own verify_, before irdl_op_definition wraps it."""

    def __init_subclass__(cls, **kwargs: object) -> None:
        # the instruction's own checks, before irdl_op_definition wraps them into verify_
        # with the generic ones (`verify` below calls them apart)
        super().__init_subclass__(**kwargs)
        cls.OWN_CHECKS = cls.verify_

    def verify(self, verify_nested_ops: bool = True) -> None:
        """Operation.verify, with IRDL's generic checks done as an instruction's definition
        allows: a BERT layer's programs hold ~20k instructions, and the generic checks of
        operand, result, region and successor counts cost twice the rest. An instruction
        with no operands, results, regions or successors, only its defined properties (each
        of its kind) and a stream as parent takes its own checks alone; any other op, and
        any deviation, takes xDSL's whole verification, so the error is the usual one.

            well formed(op) = no operands, results, regions, successors
                              and every required property present, none undefined,
                              each meeting its constraint, parent a spyre_isa.stream
            verify(op)      = own checks of op          if well formed(op)
                              Operation.verify(op)      otherwise"""
        if not _well_formed(self):
            super().verify(verify_nested_ops)
            return
        try:
            type(self).OWN_CHECKS(self)
        except VerifyException as err:
            self.emit_error(f"Operation does not verify: {err}", err)

    def _build(self, properties: Mapping[str, Attribute | None], operands: Sequence[SSAValue] = ()) -> None:
        """The op from its properties (None: absent) and operands: Operation.__init__ without
        irdl_op_init's argument building, which costs more than the rest of an instruction's
        construction (a BERT layer's programs hold ~20k). Instructions have fixed operands
        and no results, regions, successors or segment sizes: both build the same op, and
        verify() checks it as for any op."""
        Operation.__init__(self, operands=operands, properties={k: v for k, v in properties.items() if v is not None})

    def n_cores(self) -> int:
        parent = self.parent_op()
        if not isinstance(parent, StreamOp):
            raise VerifyException(f"'{self.name}' must be inside a spyre_isa.stream")
        return len(parent.cores.cores.data)  # (not core_list: a tuple built per call)

    def _check_table(self, what: str, pc: PerCoreAttr) -> None:
        n = self.n_cores()
        if len(pc.values) not in (1, n):
            raise VerifyException(f"'{self.name}': {what} has {len(pc.values)} entries for a stream of {n} cores")

    def _check_tokens(self, what: str, tokens: PerCoreAttr) -> None:
        self._check_table(what, tokens)
        bad = [v.data for v in tokens.values if v.data < 0]
        if bad:
            name = what if what.endswith("token") else f"{what} token"
            raise VerifyException(f"'{self.name}': {name} must be >= 0, got {bad[0]}")

    def _check_access(self, what: str, acc: AccessAttr, sizes: Sequence[int]) -> None:
        self._check_table(f"{what} base", acc.base)
        if len(acc.strides.values) != len(sizes):
            raise VerifyException(
                f"'{self.name}': {what} has {len(acc.strides.values)} strides for a loop nest of {len(sizes)} dims"
            )

    @staticmethod
    def _check_sizes(op: Operation, sizes: Sequence[int]) -> None:
        if not sizes or any(s < 1 for s in sizes):
            raise VerifyException(f"'{op.name}': loop sizes must be >= 1, got {list(sizes)}")
        for i, s in enumerate(sizes):
            IsaInstruction._check_count(op, f"loop size {s} (dim {i} of {list(sizes)})", s)

    def _check_indexed_rows(
        self,
        indices: SSAValue,
        index_base: PerCoreAttr,
        count: IntegerAttr,
        row_sticks: IntegerAttr,
        lx_access: AccessAttr,
    ) -> None:
        """The checks of a DMA of `count` rows of `row_sticks` sticks each at host indices
        (dma_gather, dma_scatter): the indices a host integer tensor, each core's `count` of them
        from its `index_base` inside it, the LX access in bounds."""
        ty = indices.type
        if not is_index_tensor(ty) or not isinstance(ty, TensorType):
            raise VerifyException(f"'{self.name}': indices must be a host integer tensor, got {ty}")
        self._check_table("index base", index_base)
        n_rows, sticks = count.value.data, row_sticks.value.data
        if n_rows < 1 or sticks < 1:
            raise VerifyException(f"'{self.name}': count and row_sticks must be >= 1")
        self._check_count(self, f"count {n_rows}", n_rows)
        self._check_count(self, f"row_sticks {sticks}", sticks)
        self._check_access("the LX access", lx_access, [n_rows, sticks])
        n = math.prod(ty.get_shape())
        for base in index_base.table(1 if index_base.is_uniform else self.n_cores()):
            if base + n_rows > n:
                raise VerifyException(f"'{self.name}': indices {base}..{base + n_rows - 1} past the {n} given")

    @staticmethod
    def _check_count(op: Operation, what: str, value: int) -> None:
        if value > MAX_LOOP_COUNT:
            raise VerifyException(
                f"'{op.name}': {what} exceeds the instruction format: its 16-bit count fields hold at most {MAX_LOOP_COUNT}"
            )


@functools.cache
def _property_checks(cls: type[IsaInstruction]) -> tuple[frozenset[str], tuple[tuple[str, bool, Any], ...]] | None:
    """(defined property names, (name, required, base type or constraint) per property) of
    an instruction class, or None if its definition has anything else to check (operands,
    results, regions, successors, attributes, traits beyond its parent)."""
    d = cls.get_irdl_definition()
    if d.operands or d.results or d.regions or d.successors or d.attributes or d.options:
        return None
    if any(not (isinstance(t, HasParent) and t.op_types == (StreamOp,)) for t in d.traits):
        return None
    checks = tuple(
        (
            name,
            not isinstance(pdef, OptPropertyDef),
            pdef.constr.attr if isinstance(pdef.constr, BaseAttr) else pdef.constr,
        )
        for name, pdef in d.properties.items()
    )
    return frozenset(d.properties), checks


def _well_formed(op: IsaInstruction) -> bool:
    """Whether `op` passes IRDL's generic checks, tested the quick way (IsaInstruction.verify)."""
    checks = _property_checks(type(op))
    if checks is None or op.operands or op.results or op.regions or op.successors:
        return False
    if not isinstance(op.parent_op(), StreamOp):
        return False
    names, props = checks
    given = op.properties
    if not names.issuperset(given):
        return False
    for name, required, kind in props:
        value = given.get(name)
        if value is None:
            if required:
                return False
        elif isinstance(kind, type):
            if not isinstance(value, kind):
                return False
        elif not _meets(kind, value):
            return False
    return True


@functools.lru_cache(maxsize=4096)
def _meets(constraint: Any, value: Attribute) -> bool:
    """Whether an attribute meets a property's constraint (memoised: a program's integer
    properties take a few distinct values, and attributes are immutable)."""
    try:
        constraint.verify(value, VerificationContext())
    except VerifyException:
        return False
    return True


def _print_access(printer: Printer, memory: str, acc: AccessAttr) -> None:
    printer.print_string(memory + " ")
    acc.print_parameters(printer)


def _parse_access(parser: Parser) -> AccessAttr:
    parser.parse_keyword("lx")
    return AccessAttr.new(AccessAttr.parse_parameters(parser))


def span(acc: AccessAttr, sizes: Sequence[int], base: int) -> tuple[int, int]:
    """[first, last] stick an access touches for one core's base (f32 SFP steps add one)."""
    last = base + sum((n - 1) * s for n, s in zip(sizes, acc.strides.as_tuple()))
    return base, last


# endregion
# region DMA


class DmaOp(IsaInstruction, ABC):
    """Move whole sticks between a DDR tensor and LX along a loop nest.

    for i in ndindex(sizes):
        lx_stick(ddr-access/lx-access per direction)        # 128 bytes per step
    """

    ENGINE: ClassVar[str] = "dma"
    ddr = operand_def(TensorType)
    ddr_access = prop_def(AccessAttr)
    lx_access = prop_def(AccessAttr)
    sizes = prop_def(IntListAttr)

    def __init__(self, ddr: SSAValue, ddr_access: AccessAttr, lx_access: AccessAttr, sizes: Sequence[int]):
        self._build(
            operands=[ddr],
            properties={"ddr_access": ddr_access, "lx_access": lx_access, "sizes": int_list(tuple(sizes))},
        )

    def verify_(self) -> None:
        sizes = self.sizes.as_tuple()
        self._check_sizes(self, sizes)
        self._check_access("the DDR access", self.ddr_access, sizes)
        self._check_access("the LX access", self.lx_access, sizes)
        for what, acc in (("the DDR access", self.ddr_access), ("the LX access", self.lx_access)):
            if acc.is_f32:
                raise VerifyException(
                    f"'{self.name}': {what} must be f16 (DMA copies whole sticks, it does not convert)"
                )
        layout = device_layout(self.ddr.type, f"'{self.name}': the DDR operand")
        for base in self.ddr_access.base.table(1 if self.ddr_access.base.is_uniform else self.n_cores()):
            _, last = span(self.ddr_access, sizes, base)
            if last >= layout.num_sticks:
                raise VerifyException(
                    f"'{self.name}': DDR sticks up to {last} are outside the tensor "
                    f"({layout.num_sticks} sticks of {self.ddr.type})"
                )


@irdl_op_definition
class DmaLoadOp(DmaOp):
    """DDR -> LX.  for i in ndindex(sizes): lx[lx.base + i.lx.strides] = ddr[ddr.base + i.ddr.strides]"""

    name = "spyre_isa.dma_load"

    @classmethod
    def parse(cls, parser: Parser) -> DmaLoadOp:
        pos = parser.pos
        ddr = parser.parse_unresolved_operand()
        ddr_acc = AccessAttr.new(AccessAttr.parse_parameters(parser))
        parser.parse_punctuation("->")
        lx = _parse_access(parser)
        parser.parse_keyword("sizes")
        sizes = IntListAttr.new(IntListAttr.parse_parameters(parser))
        parser.parse_punctuation(":")
        t = parser.parse_type()
        (operand,) = parser.resolve_operands([ddr], [t], pos)
        return cls.create(operands=[operand], properties={"ddr_access": ddr_acc, "lx_access": lx, "sizes": sizes})

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.ddr)
        self.ddr_access.print_parameters(printer)
        printer.print_string(" -> ")
        _print_access(printer, "lx", self.lx_access)
        printer.print_string(" sizes ")
        self.sizes.print_parameters(printer)
        printer.print_string(" : ")
        printer.print_attribute(self.ddr.type)


@irdl_op_definition
class DmaStoreOp(DmaOp):
    """LX -> DDR.  for i in ndindex(sizes): ddr[ddr.base + i.ddr.strides] = lx[lx.base + i.lx.strides]"""

    name = "spyre_isa.dma_store"

    def verify_(self) -> None:
        super().verify_()
        stream = self.parent_op()
        prog = stream.parent_op() if stream is not None else None
        if isinstance(prog, ProgramOp) and isinstance(self.ddr, BlockArgument):
            if self.ddr.owner is prog.body.block and self.ddr.index < prog.num_inputs.data:
                raise VerifyException(
                    f"'{self.name}': stores into input {self.ddr.index} of @{prog.sym_name.data}; "
                    f"a program writes only its outputs (arguments {prog.num_inputs.data} and up)"
                )

    @classmethod
    def parse(cls, parser: Parser) -> DmaStoreOp:
        pos = parser.pos
        lx = _parse_access(parser)
        parser.parse_punctuation("->")
        ddr = parser.parse_unresolved_operand()
        ddr_acc = AccessAttr.new(AccessAttr.parse_parameters(parser))
        parser.parse_keyword("sizes")
        sizes = IntListAttr.new(IntListAttr.parse_parameters(parser))
        parser.parse_punctuation(":")
        t = parser.parse_type()
        (operand,) = parser.resolve_operands([ddr], [t], pos)
        return cls.create(operands=[operand], properties={"ddr_access": ddr_acc, "lx_access": lx, "sizes": sizes})

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        _print_access(printer, "lx", self.lx_access)
        printer.print_string(" -> ")
        printer.print_operand(self.ddr)
        self.ddr_access.print_parameters(printer)
        printer.print_string(" sizes ")
        self.sizes.print_parameters(printer)
        printer.print_string(" : ")
        printer.print_attribute(self.ddr.type)


@irdl_op_definition
class DmaGatherOp(IsaInstruction):
    """Load table rows chosen at run time by host indices (patched at launch), whole sticks.

    for r in range(count):
        v = indices.flat[index_base[core] + r]                # 0 <= v < table rows
        for j in range(row_sticks):
            lx[lx.base + r*lx.s0 + j*lx.s1] = table stick holding row v, columns 64j..64j+63
    """

    name = "spyre_isa.dma_gather"
    ENGINE: ClassVar[str] = "dma"
    table = operand_def(TensorType)
    indices = operand_def(TensorType)
    index_base = prop_def(PerCoreAttr)
    count = prop_def(IntegerAttr[I64])
    row_sticks = prop_def(IntegerAttr[I64])
    lx_access = prop_def(AccessAttr)
    assembly_format = (
        "$table `[` $indices `[` $index_base `]` `count` $count `row_sticks` $row_sticks `]` `->` `lx` $lx_access "
        "attr-dict `:` type($table) `,` type($indices)"
    )

    def __init__(
        self, table: SSAValue, indices: SSAValue, index_base: PerCoreAttr, count: int, row_sticks: int, lx: AccessAttr
    ):
        self._build(
            operands=[table, indices],
            properties={
                "index_base": index_base,
                "count": i64_attr(count),
                "row_sticks": i64_attr(row_sticks),
                "lx_access": lx,
            },
        )

    def verify_(self) -> None:
        layout = device_layout(self.table.type, f"'{self.name}': the table")
        if len(layout.shape) != 2:
            raise VerifyException(f"'{self.name}': the table must be 2-D, got {layout.shape}")
        self._check_indexed_rows(self.indices, self.index_base, self.count, self.row_sticks, self.lx_access)


@irdl_op_definition
class DmaScatterOp(IsaInstruction):
    """Store LX rows into a 3-D DDR tensor (O, L, C) at rows chosen at run time by host indices
    (patched at launch), whole sticks: the inverse of dma_gather, a KV-cache update.

    for r in range(count):
        v = indices.flat[index_base[core] + r]                 # -L <= v < L (negative: v + L)
        for j in range(row_sticks):
            stick of out holding out[outer[core], v, 64j..64j+63] = lx[lx.base + r*lx.s0 + j*lx.s1]
    """

    name = "spyre_isa.dma_scatter"
    ENGINE: ClassVar[str] = "dma"
    out = operand_def(TensorType)
    indices = operand_def(TensorType)
    index_base = prop_def(PerCoreAttr)
    outer = prop_def(PerCoreAttr)
    count = prop_def(IntegerAttr[I64])
    row_sticks = prop_def(IntegerAttr[I64])
    lx_access = prop_def(AccessAttr)
    assembly_format = (
        "`lx` $lx_access `->` $out `[` $outer `,` $indices `[` $index_base `]` `count` $count `row_sticks` $row_sticks `]` "
        "attr-dict `:` type($out) `,` type($indices)"
    )

    def __init__(
        self,
        out: SSAValue,
        indices: SSAValue,
        index_base: PerCoreAttr,
        outer: PerCoreAttr,
        count: int,
        row_sticks: int,
        lx: AccessAttr,
    ):
        self._build(
            operands=[out, indices],
            properties={
                "index_base": index_base,
                "outer": outer,
                "count": i64_attr(count),
                "row_sticks": i64_attr(row_sticks),
                "lx_access": lx,
            },
        )

    def verify_(self) -> None:
        layout = device_layout(self.out.type, f"'{self.name}': the destination")
        if len(layout.shape) != 3:
            raise VerifyException(f"'{self.name}': the destination must be 3-D (O, L, C), got {layout.shape}")
        self._check_indexed_rows(self.indices, self.index_base, self.count, self.row_sticks, self.lx_access)
        self._check_table("outer", self.outer)
        row_sticks, sticks = self.row_sticks.value.data, -(-layout.shape[2] // layout.lanes)
        if row_sticks != sticks:
            raise VerifyException(
                f"'{self.name}': row_sticks {row_sticks}, but a row of {layout.shape[2]} holds {sticks}"
            )
        for o in self.outer.table(1 if self.outer.is_uniform else self.n_cores()):
            if not 0 <= o < layout.shape[0]:
                raise VerifyException(f"'{self.name}': outer {o} out of range for {layout.shape[0]} rows of (O, L, C)")


# endregion
# region PT


@irdl_op_definition
class PtMatmulOp(IsaInstruction):
    """Matrix product on the PT systolic array, 16-bit inputs, fp32 partial sums in LX.

    A[m, k] = lx16[lhs.base + m*lhs.s0 + (k // 64)*lhs.s1][k % 64]
    B[k, n] = lx16[rhs.base + k*rhs.s0 + (n // 64)*rhs.s1][n % 64]
    C[m, n] = lx32[acc.base + m*acc.s0 + (n // 64)*acc.s1 + (n % 64) // 32][n % 32]
                              (a 64-lane f32 vector is two consecutive sticks, as in the SFP)
    C = (C if accumulate else 0) + A @ B           # exact products, fp32 sums
    """

    name = "spyre_isa.pt_matmul"
    ENGINE: ClassVar[str] = "pt"
    lhs = prop_def(AccessAttr)
    rhs = prop_def(AccessAttr)
    acc = prop_def(AccessAttr)
    m = prop_def(IntegerAttr[I64])
    n = prop_def(IntegerAttr[I64])
    k = prop_def(IntegerAttr[I64])
    accumulate = opt_prop_def(UnitAttr)
    assembly_format = (
        "`lx` $lhs `,` `lx` $rhs `->` `lx` $acc `m` `=` $m `n` `=` $n `k` `=` $k (`accumulate` $accumulate^)? attr-dict"
    )

    def __init__(self, lhs: AccessAttr, rhs: AccessAttr, acc: AccessAttr, m: int, n: int, k: int, accumulate: bool):
        self._build(
            properties={
                "lhs": lhs,
                "rhs": rhs,
                "acc": acc,
                "m": i64_attr(m),
                "n": i64_attr(n),
                "k": i64_attr(k),
                "accumulate": UnitAttr() if accumulate else None,
            }
        )

    def verify_(self) -> None:
        if min(self.m.value.data, self.n.value.data, self.k.value.data) < 1:
            raise VerifyException(
                f"'{self.name}': m, n, k must be >= 1, got {self.m.value.data}, {self.n.value.data}, {self.k.value.data}"
            )
        for what, v in (("m", self.m), ("n", self.n), ("k", self.k)):
            self._check_count(self, f"{what} = {v.value.data}", v.value.data)
        for what, acc, f32_ in (("lhs", self.lhs, False), ("rhs", self.rhs, False), ("acc", self.acc, True)):
            self._check_table(f"{what} base", acc.base)
            if len(acc.strides.values) != 2:
                raise VerifyException(
                    f"'{self.name}': {what} needs 2 strides (row, stick), got {len(acc.strides.values)}"
                )
            if acc.is_f32 != f32_:
                raise VerifyException(f"'{self.name}': {what} must be {'f32' if f32_ else 'f16'}")


# endregion
# region SFP


SFP_TRANSCENDENTAL = frozenset({"exp", "erf", "tanh", "log", "sqrt", "rsqrt", "sin", "cos", "recip"})
"""SFP functions that take the transcendental (multi-cycle) path."""


class SfpUnaryOp(IsaInstruction, ABC):
    """dst = f(src) on 64-lane vectors along the loop nest `sizes`."""

    ENGINE: ClassVar[str] = "sfp"
    FUNCTION: ClassVar[str]
    src = prop_def(AccessAttr)
    dst = prop_def(AccessAttr)
    sizes = prop_def(IntListAttr)
    assembly_format = "`lx` $src `->` `lx` $dst `sizes` $sizes attr-dict"

    def __init__(self, src: AccessAttr, dst: AccessAttr, sizes: Sequence[int]):
        self._build(properties={"src": src, "dst": dst, "sizes": int_list(tuple(sizes))})

    def verify_(self) -> None:
        sizes = self.sizes.as_tuple()
        self._check_sizes(self, sizes)
        self._check_access("src", self.src, sizes)
        self._check_access("dst", self.dst, sizes)


class SfpBinaryOp(IsaInstruction, ABC):
    """dst = f(lhs, rhs) on 64-lane vectors; `rhs` is an LX access or an f32 immediate."""

    ENGINE: ClassVar[str] = "sfp"
    FUNCTION: ClassVar[str]
    lhs = prop_def(AccessAttr)
    rhs = opt_prop_def(AccessAttr)
    imm = opt_prop_def(FloatAttr)
    dst = prop_def(AccessAttr)
    sizes = prop_def(IntListAttr)

    def __init__(self, lhs: AccessAttr, rhs: AccessAttr | float, dst: AccessAttr, sizes: Sequence[int]):
        props: dict[str, Attribute | None] = {"lhs": lhs, "dst": dst, "sizes": int_list(tuple(sizes))}
        if isinstance(rhs, AccessAttr):
            props["rhs"] = rhs
        else:
            props["imm"] = FloatAttr(float(rhs), f32)
        self._build(properties=props)

    @classmethod
    def parse(cls, parser: Parser) -> SfpBinaryOp:
        lhs = _parse_access(parser)
        parser.parse_punctuation(",")
        props: dict[str, Attribute] = {"lhs": lhs}
        if parser.parse_optional_keyword("lx") is not None:
            props["rhs"] = AccessAttr.new(AccessAttr.parse_parameters(parser))
        elif parser._current_token.text.lower().startswith("0x"):  # inf and NaN print as their f32 bits
            bits = parser.parse_integer(allow_boolean=False, allow_negative=False)
            props["imm"] = FloatAttr(struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0], f32)
        else:
            props["imm"] = FloatAttr(parser.parse_float(), f32)
        parser.parse_punctuation("->")
        props["dst"] = _parse_access(parser)
        parser.parse_keyword("sizes")
        props["sizes"] = IntListAttr.new(IntListAttr.parse_parameters(parser))
        return cls.create(properties=props)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        _print_access(printer, "lx", self.lhs)
        printer.print_string(", ")
        if self.rhs is not None:
            _print_access(printer, "lx", self.rhs)
        else:
            assert self.imm is not None
            printer.print_float(self.imm.value.data, f32)
        printer.print_string(" -> ")
        _print_access(printer, "lx", self.dst)
        printer.print_string(" sizes ")
        self.sizes.print_parameters(printer)

    def verify_(self) -> None:
        sizes = self.sizes.as_tuple()
        self._check_sizes(self, sizes)
        self._check_access("lhs", self.lhs, sizes)
        self._check_access("dst", self.dst, sizes)
        if (self.rhs is None) == (self.imm is None):
            raise VerifyException(f"'{self.name}': needs exactly one of an LX rhs and an immediate")
        if self.imm is not None and not isinstance(self.imm.type, Float32Type):
            raise VerifyException(f"'{self.name}': the immediate must be f32, got {self.imm}")
        if self.rhs is not None:
            self._check_access("rhs", self.rhs, sizes)


def _unary(name: str, fn: str, doc: str) -> type[SfpUnaryOp]:
    cls = type(
        f"Sfp{fn.capitalize()}Op",
        (SfpUnaryOp,),
        {
            "name": name,
            "FUNCTION": fn,
            "__annotations__": {"FUNCTION": ClassVar[str]},
            "__doc__": doc,
            "__module__": __name__,
        },
    )
    return irdl_op_definition(cls)


def _binary(name: str, fn: str, doc: str) -> type[SfpBinaryOp]:
    cls = type(
        f"Sfp{fn.capitalize()}Op",
        (SfpBinaryOp,),
        {
            "name": name,
            "FUNCTION": fn,
            "__annotations__": {"FUNCTION": ClassVar[str]},
            "__doc__": doc,
            "__module__": __name__,
        },
    )
    return irdl_op_definition(cls)


SfpCopyOp = _unary("spyre_isa.sfp_copy", "copy", "dst = src   (converts between f32 and f16 on the way)")
SfpNegOp = _unary("spyre_isa.sfp_neg", "neg", "dst = -src")
SfpExpOp = _unary("spyre_isa.sfp_exp", "exp", "dst = exp(src)   (transcendental path)")
SfpErfOp = _unary("spyre_isa.sfp_erf", "erf", "dst = erf(src)   (transcendental path)")
SfpTanhOp = _unary("spyre_isa.sfp_tanh", "tanh", "dst = tanh(src)   (transcendental path)")
SfpLogOp = _unary("spyre_isa.sfp_log", "log", "dst = log(src)   (transcendental path)")
SfpSqrtOp = _unary("spyre_isa.sfp_sqrt", "sqrt", "dst = sqrt(src)   (transcendental path)")
SfpRsqrtOp = _unary("spyre_isa.sfp_rsqrt", "rsqrt", "dst = 1 / sqrt(src)   (transcendental path)")
SfpSinOp = _unary("spyre_isa.sfp_sin", "sin", "dst = sin(src)   (transcendental path)")
SfpCosOp = _unary("spyre_isa.sfp_cos", "cos", "dst = cos(src)   (transcendental path)")
SfpAbsOp = _unary("spyre_isa.sfp_abs", "abs", "dst = |src|")
SfpRecipOp = _unary("spyre_isa.sfp_recip", "recip", "dst = 1 / src   (transcendental path)")
SfpAddOp = _binary("spyre_isa.sfp_add", "add", "dst = lhs + rhs")
SfpSubOp = _binary("spyre_isa.sfp_sub", "sub", "dst = lhs - rhs")
SfpMulOp = _binary("spyre_isa.sfp_mul", "mul", "dst = lhs * rhs")
SfpDivOp = _binary("spyre_isa.sfp_div", "div", "dst = lhs / rhs")
SfpMaxOp = _binary("spyre_isa.sfp_max", "max", "dst = max(lhs, rhs)   (NaN-propagating)")
SfpMinOp = _binary("spyre_isa.sfp_min", "min", "dst = min(lhs, rhs)   (NaN-propagating)")

SFP_UNARY: dict[str, type[SfpUnaryOp]] = {
    c.FUNCTION: c
    for c in (
        SfpCopyOp,
        SfpNegOp,
        SfpExpOp,
        SfpErfOp,
        SfpTanhOp,
        SfpLogOp,
        SfpSqrtOp,
        SfpRsqrtOp,
        SfpSinOp,
        SfpCosOp,
        SfpAbsOp,
        SfpRecipOp,
    )
}
SFP_BINARY: dict[str, type[SfpBinaryOp]] = {
    c.FUNCTION: c for c in (SfpAddOp, SfpSubOp, SfpMulOp, SfpDivOp, SfpMaxOp, SfpMinOp)
}


@irdl_op_definition
class SfpSelectOp(IsaInstruction):
    """dst = (mask != 0) ? lhs : rhs on 64-lane vectors (masks are 0/1 tensors)."""

    name = "spyre_isa.sfp_select"
    ENGINE: ClassVar[str] = "sfp"
    mask = prop_def(AccessAttr)
    lhs = prop_def(AccessAttr)
    rhs = prop_def(AccessAttr)
    dst = prop_def(AccessAttr)
    sizes = prop_def(IntListAttr)
    assembly_format = "`lx` $mask `?` `lx` $lhs `:` `lx` $rhs `->` `lx` $dst `sizes` $sizes attr-dict"

    def __init__(self, mask: AccessAttr, lhs: AccessAttr, rhs: AccessAttr, dst: AccessAttr, sizes: Sequence[int]):
        self._build(properties={"mask": mask, "lhs": lhs, "rhs": rhs, "dst": dst, "sizes": int_list(tuple(sizes))})

    def verify_(self) -> None:
        sizes = self.sizes.as_tuple()
        self._check_sizes(self, sizes)
        for what, acc in (("mask", self.mask), ("lhs", self.lhs), ("rhs", self.rhs), ("dst", self.dst)):
            self._check_access(what, acc, sizes)


@irdl_op_definition
class SfpTransposeOp(IsaInstruction):
    """Transpose 64 x 64 blocks of 16-bit lanes (a stick shuffle through the SFP).

        for b in range(sizes[0]):
            for i, j in 64 x 64:
                lx16[dst.base + b*dst.s0 + j*dst.s1][i] = lx16[src.base + b*src.s0 + i*src.s1][j]
    `rows` (<= 64) source sticks per block are read; missing rows read as 0.
    """

    name = "spyre_isa.sfp_transpose"
    ENGINE: ClassVar[str] = "sfp"
    src = prop_def(AccessAttr)
    dst = prop_def(AccessAttr)
    blocks = prop_def(IntegerAttr[I64])
    rows = prop_def(IntegerAttr[I64])
    cols = prop_def(IntegerAttr[I64])
    assembly_format = "`lx` $src `->` `lx` $dst `blocks` `=` $blocks `rows` `=` $rows `cols` `=` $cols attr-dict"

    def __init__(
        self, src: AccessAttr, dst: AccessAttr, blocks: int, rows: int = TRANSPOSE_BLOCK, cols: int = TRANSPOSE_BLOCK
    ):
        self._build(
            properties={
                "src": src,
                "dst": dst,
                "blocks": i64_attr(blocks),
                "rows": i64_attr(rows),
                "cols": i64_attr(cols),
            }
        )

    def verify_(self) -> None:
        block = TRANSPOSE_BLOCK
        if (
            self.blocks.value.data < 1
            or not 1 <= self.rows.value.data <= block
            or not 1 <= self.cols.value.data <= block
        ):
            raise VerifyException(
                f"'{self.name}': need blocks >= 1 and 1 <= rows, cols <= {block}, got "
                f"{self.blocks.value.data}, {self.rows.value.data}, {self.cols.value.data}"
            )
        self._check_count(self, f"blocks {self.blocks.value.data}", self.blocks.value.data)
        for what, acc in (("src", self.src), ("dst", self.dst)):
            self._check_table(f"{what} base", acc.base)
            if len(acc.strides.values) != 2 or acc.is_f32:
                raise VerifyException(f"'{self.name}': {what} must be f16 with 2 strides (block, row)")


class SfpReduceOp(IsaInstruction, ABC):
    """Reduce along the innermost loop dim and the 64 lanes; the result fills every lane.

        for outer in ndindex(sizes[:-1]):
            v = reduce(src[outer, j][l] for j < sizes[-1], l < 64 if j < sizes[-1] - 1 else l < tail)
            dst[outer][:] = v                       # lane-replicated (dst's last stride is unused)
    `tail` (<= 64) masks the padding lanes of each reduction's last vector.
    """

    ENGINE: ClassVar[str] = "sfp"
    FUNCTION: ClassVar[str]
    src = prop_def(AccessAttr)
    dst = prop_def(AccessAttr)
    sizes = prop_def(IntListAttr)
    tail = prop_def(IntegerAttr[I64])
    assembly_format = "`lx` $src `->` `lx` $dst `sizes` $sizes `tail` $tail attr-dict"

    def __init__(self, src: AccessAttr, dst: AccessAttr, sizes: Sequence[int], tail: int = F16_LANES):
        self._build(properties={"src": src, "dst": dst, "sizes": int_list(tuple(sizes)), "tail": i64_attr(tail)})

    def verify_(self) -> None:
        sizes = self.sizes.as_tuple()
        self._check_sizes(self, sizes)
        self._check_access("src", self.src, sizes)
        self._check_access("dst", self.dst, sizes)
        if not 1 <= self.tail.value.data <= F16_LANES:
            raise VerifyException(f"'{self.name}': tail must be in 1..{F16_LANES}, got {self.tail.value.data}")


@irdl_op_definition
class SfpReduceMaxOp(SfpReduceOp):
    """dst[outer][:] = max over the innermost loop and the lanes (padding lanes masked as -inf)."""

    name = "spyre_isa.sfp_reduce_max"
    FUNCTION: ClassVar[str] = "max"


@irdl_op_definition
class SfpReduceMinOp(SfpReduceOp):
    """dst[outer][:] = min over the innermost loop and the lanes (padding lanes masked as +inf)."""

    name = "spyre_isa.sfp_reduce_min"
    FUNCTION: ClassVar[str] = "min"


@irdl_op_definition
class SfpReduceSumOp(SfpReduceOp):
    """dst[outer][:] = sum over the innermost loop and the lanes in f32 (padding lanes masked as 0)."""

    name = "spyre_isa.sfp_reduce_sum"
    FUNCTION: ClassVar[str] = "sum"


# endregion
# region Ring


@irdl_op_definition
class RingSendOp(IsaInstruction):
    """Copy sticks from this core's LX into another core's LX over the data ring, in pieces.

        P = piece if present else sizes[-1]                 # steps of the last dim per piece
        for r0 in range(0, sizes[-1], P):                   # one piece after the other
            if after is present: wait(after[core], count=1) # block until tokens[after[core]] >= 1; -= 1
            for i in ndindex(sizes[:-1] + [min(P, sizes[-1] - r0)]):
                i[-1] += r0
                lx[(core + shift[core]) % cores][dst(i)] = lx[core][src(i)]
            if notify is present: tokens[notify[core]] += 1 once the piece has landed
    Costs one ring hop per step of min(|shift|, cores - |shift|) (the ring is bidirectional);
    the receiving core must not read the data before a sync tells it the copy is done: the
    `notify` token (a write with completion notice), or a signal after the send (which also
    waits for everything else the sender issued before).

    `piece` and `after` make one instruction of a multicast chain's forwarding (a descriptor
    with a semaphore condition): a core passes each piece of a tile on to its successor as
    soon as the piece has landed (its predecessor's send notifies `after`), so a tile fills
    the chain one piece per hop, not one tile per hop. Without them it is one piece, sent at
    once.
    """

    name = "spyre_isa.ring_send"
    ENGINE: ClassVar[str] = "ring"
    src = prop_def(AccessAttr)
    dst = prop_def(AccessAttr)
    shift = prop_def(PerCoreAttr)
    sizes = prop_def(IntListAttr)
    piece = opt_prop_def(IntegerAttr[I64])
    after = opt_prop_def(PerCoreAttr)
    notify = opt_prop_def(PerCoreAttr)
    assembly_format = (
        "`lx` $src `->` `core` `+` $shift `lx` $dst `sizes` $sizes (`piece` $piece^)? (`after` $after^)? "
        "(`notify` $notify^)? attr-dict"
    )

    def __init__(
        self,
        src: AccessAttr,
        dst: AccessAttr,
        shift: PerCoreAttr | Sequence[int] | int,
        sizes: Sequence[int],
        notify: PerCoreAttr | Sequence[int] | int | None = None,
        piece: int | None = None,
        after: PerCoreAttr | Sequence[int] | int | None = None,
    ):
        props: dict[str, Attribute] = {"src": src, "dst": dst, "shift": _table(shift), "sizes": int_list(tuple(sizes))}
        if piece is not None:
            props["piece"] = i64_attr(piece)
        for key, value in (("after", after), ("notify", notify)):
            if value is not None:
                props[key] = _table(value)
        self._build(properties=props)

    def pieces(self) -> list[tuple[int, int]]:
        """[r0, r1) of the last loop dim, piece by piece."""
        last = self.sizes.as_tuple()[-1]
        step = last if self.piece is None else self.piece.value.data
        return [(r0, min(r0 + step, last)) for r0 in range(0, last, step)]

    def verify_(self) -> None:
        sizes = self.sizes.as_tuple()
        self._check_sizes(self, sizes)
        self._check_access("src", self.src, sizes)
        self._check_access("dst", self.dst, sizes)
        self._check_table("shift", self.shift)
        if self.src.is_f32 != self.dst.is_f32:
            raise VerifyException(f"'{self.name}': src and dst must have the same element type (the ring moves bytes)")
        for what, attr in (("notify", self.notify), ("after", self.after)):
            if attr is not None:
                self._check_tokens(what, attr)
        if self.piece is not None and not 1 <= self.piece.value.data <= sizes[-1]:
            raise VerifyException(
                f"'{self.name}': piece must be between 1 and the last loop size {sizes[-1]} (steps per piece), "
                f"got {self.piece.value.data}"
            )


# endregion
# region Sync


@irdl_op_definition
class BarrierOp(IsaInstruction):
    """Wait until every core of the program has reached this barrier (as many times)."""

    name = "spyre_isa.barrier"
    ENGINE: ClassVar[str] = "sync"
    assembly_format = "attr-dict"


@irdl_op_definition
class SignalOp(IsaInstruction):
    """tokens[token[core]] += 1   (program-wide counters; releases a matching wait)."""

    name = "spyre_isa.signal"
    ENGINE: ClassVar[str] = "sync"
    token = prop_def(PerCoreAttr)
    assembly_format = "$token attr-dict"

    def __init__(self, token: PerCoreAttr | Sequence[int] | int):
        self._build(properties={"token": _table(token)})

    def verify_(self) -> None:
        self._check_tokens("token", self.token)


@irdl_op_definition
class WaitOp(IsaInstruction):
    """Block until tokens[token[core]] >= count, then tokens[token[core]] -= count."""

    name = "spyre_isa.wait"
    ENGINE: ClassVar[str] = "sync"
    token = prop_def(PerCoreAttr)
    count = prop_def(IntegerAttr[I64])
    assembly_format = "$token `count` $count attr-dict"

    def __init__(self, token: PerCoreAttr | Sequence[int] | int, count: int = 1):
        self._build(properties={"token": _table(token), "count": i64_attr(count)})

    def verify_(self) -> None:
        self._check_tokens("token", self.token)
        if self.count.value.data < 1:
            raise VerifyException(f"'{self.name}': count must be >= 1, got {self.count.value.data}")


# endregion
# region Host side


@irdl_op_definition
class LaunchOp(IRDLOperation):
    """Run a program on the device (host side): allocate its outputs in DDR, patch its
    DDR arguments to the tensors given, execute its streams, return the outputs."""

    name = "spyre_isa.launch"
    program = prop_def(SymbolRefAttr)
    kernel = opt_attr_def(Attribute)
    """A string: the kernel this launch runs, when its program was lowered for an identical kernel of
    another name (a model's repeated layers share one program); profiles name the launch by it."""
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    assembly_format = "$program `(` $inputs `)` attr-dict `:` functional-type($inputs, $outputs)"

    def __init__(
        self, program: str, inputs: Sequence[SSAValue], output_types: Sequence[Attribute], kernel: str | None = None
    ):
        super().__init__(
            operands=[inputs],
            result_types=[output_types],
            properties={"program": SymbolRefAttr(program)},
            attributes={"kernel": StringAttr(kernel)} if kernel is not None and kernel != program else {},
        )

    @property
    def kernel_name(self) -> str:
        """The name profiles give this launch: its kernel's, else its program's."""
        return self.kernel.data if isinstance(self.kernel, StringAttr) else self.program.root_reference.data

    def verify_(self) -> None:
        if self.kernel is not None and not isinstance(self.kernel, StringAttr):
            raise VerifyException(f"'{self.name}': kernel must be a string (the kernel's name), not {self.kernel}")
        prog = SymbolTable.lookup_symbol(self, self.program)
        if not isinstance(prog, ProgramOp):
            raise VerifyException(f"'{self.name}': no spyre_isa.program named {self.program}")
        want = [a.type for a in prog.args]
        have = [v.type for v in (*self.inputs, *self.outputs)]
        if want != have or len(self.inputs) != prog.num_inputs.data:
            raise VerifyException(
                f"'{self.name}': {self.program} takes {prog.num_inputs.data} inputs and "
                f"{len(want) - prog.num_inputs.data} outputs of types ({', '.join(map(str, want))})"
            )


# endregion

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
